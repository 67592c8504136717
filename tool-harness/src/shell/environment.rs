//! [`ShellEnvironment`]: which of the process's environment variables `bash`'s commands see.
//! The commands are the model's: a key in the environment is a key the model can print, and
//! so send to its provider, or anywhere the network reaches. Leaving a variable out hides it
//! from `$NAME` only: a command can read the environment the process started with from
//! `/proc/$PPID/environ` (see [`ShellEnvironment`]).

use std::ffi::OsString;

/// Which environment variables a command run by `bash` gets from the process.
///
/// This keeps a variable out of a command's own environment, not out of its reach: a command
/// runs as the process's user and can read the environment the process started with from
/// `/proc/<pid>/environ` (its parent's, `$PPID`), under Landlock too, and removing a variable
/// from the process later does not change that file. A key the model must not see must not
/// be in the starting environment of the process that runs `bash`: read it from a file, or
/// run `bash` in another process or as another user.
///
/// ```
/// use toolsmith::harness::ShellEnvironment;
///
/// let passed = ShellEnvironment::default();
/// assert!(passed.passes("PATH"));
/// assert!(passed.passes("SSH_AUTH_SOCK"));
/// assert!(!passed.passes("OPENAI_API_KEY"));
/// assert!(!passed.passes("GITHUB_TOKEN"));
/// assert!(!passed.passes("PGPASSWORD"));
///
/// let only = ShellEnvironment::Only(vec!["PATH".into(), "HOME".into()]);
/// assert!(only.passes("HOME") && !only.passes("LANG"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ShellEnvironment {
    /// Every variable of the process.
    Inherit,
    /// Every variable but those whose names say they hold a credential (the default): a
    /// part of the name between underscores that is `KEY`, `TOKEN`, `SECRET`, `PASSWORD`,
    /// `PASSWD`, `CREDENTIALS` (or a plural of them, or `APIKEY`), or a name ending in
    /// `TOKEN`, `SECRET`, `PASSWORD` or `PASSWD`, in any case: `OPENAI_API_KEY`,
    /// `AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, `TOOLSMITH_MCP_TOKEN`, `PGPASSWORD`.
    #[default]
    WithoutSecrets,
    /// Only the variables named (those the process has).
    Only(Vec<String>),
}

/// The parts of a variable's name, between underscores, that make it a credential's.
const SECRET_PARTS: &[&str] = &[
    "KEY",
    "KEYS",
    "APIKEY",
    "TOKEN",
    "TOKENS",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWORDS",
    "PASSWD",
    "CREDENTIAL",
    "CREDENTIALS",
];

/// The endings of a variable's name that make it a credential's (`PGPASSWORD`, `NPMTOKEN`).
const SECRET_ENDINGS: &[&str] = &["TOKEN", "SECRET", "PASSWORD", "PASSWD"];

impl ShellEnvironment {
    /// Whether a command gets the variable `name`.
    pub fn passes(&self, name: &str) -> bool {
        match self {
            Self::Inherit => true,
            Self::WithoutSecrets => !names_a_secret(name),
            Self::Only(names) => names.iter().any(|passed| passed == name),
        }
    }
}

impl ShellEnvironment {
    /// The variables of `vars` (the process's) a command gets.
    pub(crate) fn passed(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> impl Iterator<Item = (OsString, OsString)> {
        vars.into_iter()
            .filter(|(name, _)| self.passes(&name.to_string_lossy()))
    }
}

/// Whether the variable `name` looks like it holds a credential.
fn names_a_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.split('_').any(|part| SECRET_PARTS.contains(&part))
        || SECRET_ENDINGS.iter().any(|ending| upper.ends_with(ending))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_told_from_the_rest_by_their_names() {
        let secrets = [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "GITHUB_TOKEN",
            "HF_TOKEN",
            "TOOLSMITH_MCP_TOKEN",
            "PGPASSWORD",
            "DB_PASSWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "stripe_secret",
            "MY_APIKEY",
        ];
        for name in secrets {
            assert!(names_a_secret(name), "{name}");
            assert!(!ShellEnvironment::WithoutSecrets.passes(name), "{name}");
            assert!(ShellEnvironment::Inherit.passes(name), "{name}");
        }
        let kept = [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "SSH_AUTH_SOCK",
            "KEYTIMEOUT",
            "TOKENIZERS_PARALLELISM",
            "CARGO_HOME",
            "RUSTUP_TOOLCHAIN",
        ];
        for name in kept {
            assert!(ShellEnvironment::WithoutSecrets.passes(name), "{name}");
        }
    }

    #[test]
    fn a_process_s_variables_are_passed_as_the_environment_says() {
        let vars = || {
            [("PATH", "/bin"), ("OPENAI_API_KEY", "sk-1"), ("LANG", "C")]
                .map(|(name, value)| (OsString::from(name), OsString::from(value)))
        };
        let names = |environment: ShellEnvironment| -> Vec<String> {
            environment
                .passed(vars())
                .map(|(name, _)| name.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(names(ShellEnvironment::WithoutSecrets), ["PATH", "LANG"]);
        assert_eq!(
            names(ShellEnvironment::Inherit),
            ["PATH", "OPENAI_API_KEY", "LANG"]
        );
        assert_eq!(names(ShellEnvironment::Only(vec!["LANG".into()])), ["LANG"]);
    }
}
