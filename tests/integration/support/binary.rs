//! The `toolsmith` binary, as the tests run it.

use std::process::Command;

/// The path of the `toolsmith` binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_toolsmith");

/// A command running the `toolsmith` binary without the `RUST_LOG` of the environment the
/// tests run in: it chooses what the binary writes on stderr, which tests compare.
pub fn toolsmith() -> Command {
    let mut command = Command::new(BIN);
    command.env_remove("RUST_LOG");
    command
}
