use toolsmith::tool_fn;

struct Shell;

/// A shell.
#[tool_fn]
impl Shell {
    /// Run a command.
    fn run(&self, command: String) -> String {
        command
    }
}

fn main() {}
