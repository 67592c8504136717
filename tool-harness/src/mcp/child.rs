//! An MCP server in a child process that never outlives its client: started in a process
//! group of its own, and on close, drop, a failed handshake or a timeout its whole group is
//! ended and the child reaped (no zombie, and no orphaned grandchild).

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::error::McpError;
use crate::redacted_url::redacted_url;

/// How long a child has to exit on its own once its stdin is closed, and again after
/// `SIGTERM`, before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How long a failed handshake or first listing waits, at most, for the child to exit, to say
/// how it ended: a server that ends its stdout by exiting is gone within it.
const EXIT_REPORT_WAIT: Duration = Duration::from_millis(500);

/// How long dropping a client waits, at most, to reap a killed child (the kernel ends a
/// killed process within microseconds; past this, Tokio's reaper collects it).
const REAP_WAIT: Duration = Duration::from_millis(200);

/// The command that starts an MCP server speaking on its stdin and stdout.
///
/// Its `Display` names the server in errors and logs (and, from a bridged tool's error, to the
/// model): the program and its arguments, which tell one `npx`-started server from another, with
/// what may be a secret hidden. The value of a flag whose name looks secret (`--token VALUE`,
/// `--api-key=VALUE`, `-password VALUE`: a name holding `token`, `secret`, `pass`, `credential`,
/// `auth`, `bearer` or `cookie`, or a word ending in `key` or that is `pat`, `session` or `sid`, as
/// in `--api-key`, `--apikey`, `GITHUB_PAT`) shows as `***` (the next argument, whatever it starts
/// with, when the flag has no `=`), and so do those of a `NAME=VALUE`, `Name: value` or
/// `Name:value` argument with such a name (`GITHUB_TOKEN=…`, `Authorization: Bearer …`), also as a
/// flag's value (`--header=Authorization: …`); a URL shows without its user name, password and
/// query values ([`redacted_url`](crate::redacted_url)). This is a best-effort guess from names,
/// not a guarantee: pass secrets in [`env`](Self::env), whose values are never shown. `Debug` shows
/// the arguments the same way, and the variables' names only.
///
/// ```
/// use toolsmith::harness::mcp::McpCommand;
///
/// let command = McpCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"])
///     .env("LOG_LEVEL", "warn");
/// assert_eq!(command.to_string(), "npx -y @modelcontextprotocol/server-everything");
///
/// let command = McpCommand::new("mcp-github").args(["--token", "ghp_1", "--repo", "a/b"]);
/// assert_eq!(command.to_string(), "mcp-github --token *** --repo a/b");
/// ```
#[derive(Clone)]
pub struct McpCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    current_dir: Option<PathBuf>,
    quiet: bool,
}

impl McpCommand {
    /// Runs `program` (looked up in `PATH`).
    #[must_use]
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            quiet: false,
        }
    }

    /// Adds one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the server.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs the server in `dir`.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// Discards the server's stderr (by default it goes to this process's stderr).
    #[must_use]
    pub fn quiet(mut self) -> Self {
        self.quiet = true;
        self
    }
}

impl std::fmt::Debug for McpCommand {
    // The variables' names only: servers take their credentials there (`GITHUB_TOKEN`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpCommand")
            .field("program", &self.program)
            .field("args", &self.shown_args().collect::<Vec<_>>())
            .field(
                "env",
                &self.env.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            )
            .field("current_dir", &self.current_dir)
            .field("quiet", &self.quiet)
            .finish()
    }
}

impl std::fmt::Display for McpCommand {
    /// The program and its arguments, secrets hidden (see [`McpCommand`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.program.to_string_lossy())?;
        for arg in self.shown_args() {
            write!(f, " {arg}")?;
        }
        Ok(())
    }
}

/// What a value that may be a secret shows as.
const HIDDEN: &str = "***";

impl McpCommand {
    /// The arguments as errors and logs show them: secret-looking values hidden.
    fn shown_args(&self) -> impl Iterator<Item = Cow<'_, str>> {
        let mut value_follows = false;
        self.args.iter().map(move |arg| {
            let arg = arg.to_string_lossy();
            // A secret may well start with `-`: the value of a secret-looking flag is hidden
            // whatever it looks like.
            if std::mem::take(&mut value_follows) {
                return Cow::Borrowed(HIDDEN);
            }
            shown_arg(arg, &mut value_follows)
        })
    }
}

/// `arg` as shown, on its own; sets `value_follows` when it is a secret-looking flag
/// without its value, which is then the next argument.
fn shown_arg<'a>(arg: Cow<'a, str>, value_follows: &mut bool) -> Cow<'a, str> {
    let Some(flag) = arg.strip_prefix('-') else {
        return shown_assignment(arg);
    };
    let flag = flag.trim_start_matches('-');
    let Some((name, value)) = flag.split_once('=') else {
        *value_follows = names_secret(flag);
        return arg;
    };
    let prefix = &arg[..arg.len() - value.len()];
    if names_secret(name) {
        return Cow::Owned(format!("{prefix}{HIDDEN}"));
    }
    // The value may be an assignment of its own (`--header=Authorization: Bearer …`).
    match shown_assignment(Cow::Borrowed(value)) {
        Cow::Borrowed(_) => arg,
        Cow::Owned(shown) => Cow::Owned(format!("{prefix}{shown}")),
    }
}

/// `text` as shown: a variable's or a header's value hidden when its name looks secret
/// (`GITHUB_TOKEN=…`, `Authorization: …`, `X-Api-Key:…`), else with any URL in it
/// redacted.
fn shown_assignment(text: Cow<'_, str>) -> Cow<'_, str> {
    let named = text
        .find(['=', ':'])
        .map(|at| (&text[..at], &text[at..=at]));
    match named {
        Some((name, between)) if is_identifier(name) && names_secret(name) => {
            let space = if text[name.len() + 1..].starts_with(' ') {
                " "
            } else {
                ""
            };
            Cow::Owned(format!("{name}{between}{space}{HIDDEN}"))
        }
        _ => redacted_in(text),
    }
}

/// `arg` with a URL in it shown without its credentials and query values.
fn redacted_in(arg: Cow<'_, str>) -> Cow<'_, str> {
    if !arg.contains("://") {
        return arg;
    }
    match redacted_url(&arg) {
        Cow::Borrowed(_) => arg,
        Cow::Owned(shown) => Cow::Owned(shown),
    }
}

/// Whether `name` can name a variable or a header (`GITHUB_TOKEN`, `X-Api-Key`): not the
/// start of a URL or of some text holding `=`.
fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Whether a flag's or variable's `name` looks like one a secret is given by.
fn names_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "token",
        "secret",
        "pass",
        "credential",
        "auth",
        "bearer",
        "cookie",
    ]
    .iter()
    .any(|part| name.contains(part))
        || name
            .split(['-', '_', '.'])
            .any(|word| word.ends_with("key") || matches!(word, "pat" | "session" | "sid"))
}

/// A running server process, ended with its process group when dropped.
#[derive(Debug)]
pub(crate) struct ChildProcess {
    /// `None` once reaped.
    child: Option<Child>,
    pid: Option<u32>,
    /// Its stderr is discarded ([`McpCommand::quiet`]).
    quiet: bool,
}

impl ChildProcess {
    /// Starts `command` with piped stdin and stdout, in a new process group.
    pub(crate) fn spawn(command: &McpCommand) -> Result<(Self, ChildStdout, ChildStdin), McpError> {
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if command.quiet {
                Stdio::null()
            } else {
                Stdio::inherit()
            })
            .kill_on_drop(true);
        if let Some(dir) = &command.current_dir {
            cmd.current_dir(dir);
        }
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| McpError::io(format!("starting the MCP server `{command}`"), e))?;
        let pid = child.id();
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            let mut process = Self {
                child: Some(child),
                pid,
                quiet: command.quiet,
            };
            process.kill_now();
            return Err(McpError::io(
                format!("starting the MCP server `{command}`"),
                std::io::Error::other("its stdin or stdout could not be piped"),
            ));
        };
        Ok((
            Self {
                child: Some(child),
                pid,
                quiet: command.quiet,
            },
            stdout,
            stdin,
        ))
    }

    /// The child's process id (and process group id), while it has not been reaped.
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.as_ref().and(self.pid)
    }

    /// Why talking to this server failed, when its process has exited (or does within
    /// [`EXIT_REPORT_WAIT`]) before `done` ("the handshake was done", "its tools were
    /// listed"): its exit status, and where its stderr went, which says why. `None` while it
    /// runs.
    pub(crate) async fn exit_report(&mut self, done: &str) -> Option<String> {
        let child = self.child.as_mut()?;
        let status = tokio::time::timeout(EXIT_REPORT_WAIT, child.wait())
            .await
            .ok()?
            .ok()?;
        let stderr = if self.quiet {
            "its stderr was discarded (McpCommand::quiet)"
        } else {
            "its stderr went to this process's stderr"
        };
        Some(format!(
            "the server's process exited ({status}) before {done}; {stderr}"
        ))
    }

    /// Ends a server whose stdin has been closed: it gets [`EXIT_GRACE`] to exit, then
    /// `SIGTERM`, then `SIGKILL`; then whatever is left of its process group is killed and
    /// the child reaped.
    pub(crate) async fn shutdown(&mut self) {
        let Some(child) = self.child.as_mut() else {
            return;
        };
        let exited = tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_ok();
        if !exited {
            self.signal_group(Signal::Term);
            if let Some(child) = self.child.as_mut() {
                let _ = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
            }
        }
        self.kill_now();
    }

    /// Kills the process group and reaps the child, waiting at most [`REAP_WAIT`] (without
    /// needing a runtime); a child not reaped by then is left to Tokio's reaper.
    pub(crate) fn kill_now(&mut self) {
        self.signal_group(Signal::Kill);
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = child.start_kill();
        let deadline = std::time::Instant::now() + REAP_WAIT;
        loop {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if std::time::Instant::now() >= deadline => {
                    // Dropped with kill_on_drop: Tokio reaps it when it exits.
                    tracing::warn!(pid = ?self.pid, "an MCP server process was not reaped in time");
                    return;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }

    /// Sends `signal` to the child's process group (the child and what it started), as long
    /// as the group can still be ours: the child is not yet reaped, or was just reaped here.
    fn signal_group(&self, signal: Signal) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|pid| i32::try_from(pid).ok()) {
            let signal = match signal {
                Signal::Term => libc::SIGTERM,
                Signal::Kill => libc::SIGKILL,
            };
            // SAFETY: kill(2) with a negative pid signals that process group; it touches no
            // memory of ours. The group id is the child's pid (process_group(0)), which the
            // kernel does not reuse while the group has members.
            unsafe {
                libc::kill(-pid, signal);
            }
        }
        #[cfg(not(unix))]
        let _ = signal;
    }
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.kill_now();
        }
    }
}
