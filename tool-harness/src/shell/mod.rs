//! The shell behind `bash`: the runner (this file), which sandbox confines a command on
//! which kernel (`confinement`), its Landlock ruleset (`landlock_policy`), the environment it
//! passes (`environment`) and the capped output buffer (`output_cap`).
//!
//! [`ShellRunner`]: runs a command with `bash -c` in the root directory, in its own process
//! group, with a time limit that kills the whole group and an output cap that keeps the head
//! and the tail.

pub(crate) mod confinement;
pub(crate) mod environment;
pub(crate) mod landlock_policy;
pub(crate) mod output_cap;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt as _};

use crate::shell::confinement::Confinement;
use crate::{HeadTailBuffer, LandlockPolicy, ShellEnvironment};

/// How long output is still read after the command exits (and its group is killed), for
/// processes that escaped the group but hold the output pipes open.
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// Whether and how the shell's processes are confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellSandbox {
    /// No confinement: the command can write anywhere the process can.
    None,
    /// Confine writes with Landlock; refuse to run commands where the kernel lacks it. A
    /// kernel whose Landlock cannot confine every write (Linux 5.13–6.1) runs them, as far as
    /// it confines them ([`SandboxStatus::PartlyConfined`]).
    Landlock(LandlockPolicy),
    /// Confine writes with Landlock where the kernel has it, run unconfined elsewhere (see
    /// [`ShellRunner::sandbox_status`]).
    LandlockIfSupported(LandlockPolicy),
}

/// Whether commands run confined, as a [`ShellRunner`] would run them on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// Writes are confined to the root (and the policy's paths) by Landlock.
    Confined,
    /// Writes are confined by Landlock, but this kernel's Landlock (Linux 5.13–6.1) leaves
    /// out what the reason says: truncating files outside the root.
    PartlyConfined(String),
    /// Commands run unconfined, for the reason given.
    NotSandboxed(String),
    /// Commands are refused: a sandbox was required and this kernel cannot provide it.
    Unavailable(String),
}

/// How `bash` runs.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::harness::{ShellConfig, ShellSandbox};
///
/// let config = ShellConfig::new("/srv/workspace")
///     .with_default_timeout(Duration::from_secs(30))
///     .with_output_limit(4_000, 4_000)
///     .with_sandbox(ShellSandbox::None);
/// assert_eq!(config.max_timeout, Duration::from_secs(600));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellConfig {
    /// The working directory of every command (the workspace root).
    pub root: PathBuf,
    /// The shell, run as `SHELL -c COMMAND` (default `bash`).
    pub shell: PathBuf,
    /// The time limit when a call gives none (default 2 minutes).
    pub default_timeout: Duration,
    /// The largest time limit a call may ask for (default 10 minutes).
    pub max_timeout: Duration,
    /// Output bytes kept from the start (default 15,000).
    pub output_head: usize,
    /// Output bytes kept from the end (default 15,000).
    pub output_tail: usize,
    /// Confinement (default: Landlock where supported, writes beneath the root only).
    pub sandbox: ShellSandbox,
    /// The process's environment variables a command gets (default: all but credentials).
    pub environment: ShellEnvironment,
}

impl ShellConfig {
    /// The defaults, running in `root`.
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            shell: PathBuf::from("bash"),
            default_timeout: Duration::from_secs(120),
            max_timeout: Duration::from_secs(600),
            output_head: 15_000,
            output_tail: 15_000,
            sandbox: ShellSandbox::LandlockIfSupported(LandlockPolicy::new()),
            environment: ShellEnvironment::WithoutSecrets,
        }
    }

    /// The defaults, running in the process's current directory.
    #[must_use]
    pub fn in_current_dir() -> Self {
        Self::new(std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
    }

    /// Sets the default time limit.
    #[must_use]
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Sets the largest time limit a call may ask for.
    #[must_use]
    pub fn with_max_timeout(mut self, timeout: Duration) -> Self {
        self.max_timeout = timeout;
        self
    }

    /// Sets how many output bytes are kept from the start and from the end.
    #[must_use]
    pub fn with_output_limit(mut self, head: usize, tail: usize) -> Self {
        self.output_head = head;
        self.output_tail = tail;
        self
    }

    /// Sets the confinement.
    #[must_use]
    pub fn with_sandbox(mut self, sandbox: ShellSandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Sets which of the process's environment variables a command gets.
    #[must_use]
    pub fn with_environment(mut self, environment: ShellEnvironment) -> Self {
        self.environment = environment;
        self
    }

    /// Sets the shell program.
    #[must_use]
    pub fn with_shell(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell = shell.into();
        self
    }
}

/// How a command ended, and what it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutcome {
    /// Standard output and standard error, interleaved as written (one pipe), capped (head and
    /// tail kept, with a marker of what was cut).
    pub output: String,
    /// The exit code, when the shell exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended the shell, if one did.
    pub signal: Option<i32>,
    /// Whether the time limit ran out (the command's processes were then killed).
    pub timed_out: bool,
    /// The time limit applied.
    pub timeout: Duration,
    /// Output bytes cut from the middle.
    pub cut_bytes: u64,
    /// How long the command ran.
    pub elapsed: Duration,
}

impl ShellOutcome {
    /// The outcome as the model reads it: the output, then a line on how the command ended.
    pub fn render(&self) -> String {
        let mut text = if self.output.is_empty() {
            "(no output)".to_owned()
        } else {
            self.output.clone()
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        if self.timed_out {
            text.push_str(&format!(
                "[timed out after {} ms: the command and every process it started were killed]",
                self.timeout.as_millis()
            ));
        } else if let Some(code) = self.exit_code {
            text.push_str(&format!("[exit code: {code}]"));
        } else if let Some(signal) = self.signal {
            text.push_str(&format!("[killed by signal {signal}]"));
        } else {
            text.push_str("[ended without an exit code]");
        }
        text
    }
}

/// Why a command could not be run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShellError {
    /// Running commands needs a Tokio runtime (with its time and I/O drivers).
    #[error("running a command needs a Tokio runtime with time and I/O enabled")]
    NoRuntime,
    /// A sandbox was required and cannot be had here.
    #[error("refused to run: {0}")]
    SandboxUnavailable(String),
    /// The shell could not be started.
    #[error("could not start {shell:?} in {root:?}: {reason}")]
    Spawn {
        /// The shell program.
        shell: String,
        /// The working directory.
        root: String,
        /// What the operating system said.
        reason: String,
    },
}

/// Runs shell commands as the `bash` tool does.
///
/// Each command runs as `bash -c COMMAND` in the root, with standard input closed, as the
/// leader of a new session (and process group). When it exits, or its time limit runs out,
/// its process group is killed, and on Linux every other process of its session (the groups
/// job control, `set -m`, makes for background jobs), so no background process it started
/// outlives the call (a process that leaves the session with `setsid` does; see the
/// README). If the call itself is dropped (a timeout set on the manager), they are killed
/// too.
///
/// ```
/// use toolsmith::harness::{ShellConfig, ShellRunner};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let dir = tempfile::tempdir().unwrap();
/// let runner = ShellRunner::new(ShellConfig::new(dir.path()));
/// let outcome = runner.run("echo hello; exit 3", None).await.unwrap();
/// assert_eq!(outcome.output, "hello\n");
/// assert_eq!(outcome.exit_code, Some(3));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ShellRunner {
    config: ShellConfig,
}

impl ShellRunner {
    /// A runner with `config`.
    pub fn new(config: ShellConfig) -> Self {
        Self { config }
    }

    /// The configuration.
    pub fn config(&self) -> &ShellConfig {
        &self.config
    }

    /// Whether commands run confined on this machine.
    pub fn sandbox_status(&self) -> SandboxStatus {
        Confinement::here(&self.config.sandbox).status()
    }

    /// The time limit for a call asking for `requested`.
    pub fn effective_timeout(&self, requested: Option<Duration>) -> Duration {
        requested
            .unwrap_or(self.config.default_timeout)
            .min(self.config.max_timeout)
    }

    /// Runs `command`, waiting at most `timeout` (the configured default when `None`, never
    /// more than the configured maximum).
    pub async fn run(
        &self,
        command: &str,
        timeout: Option<Duration>,
    ) -> Result<ShellOutcome, ShellError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(ShellError::NoRuntime);
        }
        let timeout = self.effective_timeout(timeout);
        let config = &self.config;

        let mut command_line = tokio::process::Command::new(&config.shell);
        command_line
            .arg("-c")
            .arg(command)
            .current_dir(&config.root)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        if config.environment != ShellEnvironment::Inherit {
            command_line
                .env_clear()
                .envs(config.environment.passed(std::env::vars_os()));
        }
        // One pipe for both streams, so that their lines interleave as the command wrote them.
        let (reader, writer) = std::io::pipe().map_err(|err| self.spawn_error(err.to_string()))?;
        let writer_too = writer
            .try_clone()
            .map_err(|err| self.spawn_error(err.to_string()))?;
        command_line.stdout(writer).stderr(writer_too);
        // The command leads a session of its own (and so a process group): what it starts
        // stays in the session even when job control (`set -m`) gives it groups of its own,
        // and is killed with it. Only `setsid` leaves it.
        #[cfg(unix)]
        // SAFETY: runs in the child between fork and exec, one async-signal-safe system call.
        unsafe {
            command_line.pre_exec(|| {
                rustix::process::setsid()
                    .map(drop)
                    .map_err(std::io::Error::from)
            });
        }
        // Kept until the command ends: removed then, with everything in it.
        let _private_tmp = self.prepare_sandbox(&mut command_line)?;
        let started = Instant::now();
        let mut child = command_line
            .spawn()
            .map_err(|err| self.spawn_error(err.to_string()))?;
        // The child holds the write ends (and the ruleset) now; ours must close for the
        // reader to see the end.
        drop(command_line);
        let group = ProcessGroup(child.id());
        let output = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into())
            .map_err(|err| self.spawn_error(err.to_string()))?;

        let buffer = Mutex::new(HeadTailBuffer::new(config.output_head, config.output_tail));
        let (exited_tx, mut exited_rx) = tokio::sync::watch::channel(false);

        let read_output = async {
            let pumps = pump(output, &buffer);
            let drained = async {
                let _ = exited_rx.wait_for(|exited| *exited).await;
                tokio::time::sleep(DRAIN_GRACE).await;
            };
            tokio::select! {
                _ = pumps => {}
                () = drained => {}
            }
        };
        let wait_exit = async {
            let ended = tokio::time::timeout(timeout, child.wait()).await;
            let (status, timed_out) = match ended {
                Ok(status) => (status.ok(), false),
                Err(_) => {
                    group.kill();
                    (child.wait().await.ok(), true)
                }
            };
            // Whatever the command left running in its group goes with it. (The leader is
            // reaped by now; its id naming another group would take the pid space wrapping
            // around between the two calls.)
            group.kill();
            let _ = exited_tx.send(true);
            (status, timed_out)
        };
        let ((), (status, timed_out)) = tokio::join!(read_output, wait_exit);

        let buffer = buffer.into_inner().unwrap_or_else(|p| p.into_inner());
        #[cfg(unix)]
        let signal = {
            use std::os::unix::process::ExitStatusExt as _;
            status.and_then(|s| s.signal())
        };
        #[cfg(not(unix))]
        let signal = None;
        Ok(ShellOutcome {
            output: buffer.render(),
            exit_code: status.and_then(|s| s.code()),
            signal,
            timed_out,
            timeout,
            cut_bytes: buffer.cut_bytes(),
            elapsed: started.elapsed(),
        })
    }

    /// A [`ShellError::Spawn`] for this runner's shell and root.
    fn spawn_error(&self, reason: String) -> ShellError {
        ShellError::Spawn {
            shell: self.config.shell.display().to_string(),
            root: self.config.root.display().to_string(),
            reason,
        }
    }

    /// Confines `command_line` as [`Confinement::here`] reads the configured sandbox: under
    /// Landlock, to writes beneath the root, the policy's paths and a temporary directory of
    /// the command's own (its `TMPDIR`, returned); a required sandbox this kernel lacks
    /// refuses the command; otherwise nothing is done.
    fn prepare_sandbox(
        &self,
        command_line: &mut tokio::process::Command,
    ) -> Result<Option<tempfile::TempDir>, ShellError> {
        match Confinement::here(&self.config.sandbox) {
            Confinement::Unconfined(_) => Ok(None),
            Confinement::Refused(reason) => Err(ShellError::SandboxUnavailable(reason.to_owned())),
            Confinement::Landlock { policy, .. } => {
                // The rest of the system's temporary space is not writable, and
                // here-documents, `sort` and `mktemp` need some.
                let tmp = tempfile::Builder::new()
                    .prefix("toolsmith-bash-")
                    .tempdir()
                    .map_err(|err| self.spawn_error(format!("could not make its TMPDIR: {err}")))?;
                command_line.env("TMPDIR", tmp.path());
                restrict(command_line, policy, &self.config.root, tmp.path())?;
                Ok(Some(tmp))
            }
        }
    }

    /// The root commands run in.
    pub fn root(&self) -> &Path {
        &self.config.root
    }
}

/// Copies a pipe into the shared buffer until it closes.
async fn pump<R: AsyncRead + Unpin>(mut pipe: R, buffer: &Mutex<HeadTailBuffer>) {
    let mut chunk = vec![0u8; 8192];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(&chunk[..n]),
        }
    }
}

/// The session (and process group) a command leads; killed on demand and when dropped, so
/// a cancelled call leaves nothing running.
struct ProcessGroup(Option<u32>);

impl ProcessGroup {
    fn kill(&self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .0
            .and_then(|id| rustix::process::Pid::from_raw(id as i32))
        {
            // ESRCH (the group is gone already) is the expected case after a clean exit.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            #[cfg(target_os = "linux")]
            kill_session(pid);
        }
    }
}

/// Kills every process of the session `leader` leads but not of its process group: the
/// groups job control (`set -m`) made for background jobs. Read from `/proc`, again while
/// a pass still finds some (one may have forked meanwhile).
#[cfg(target_os = "linux")]
fn kill_session(leader: rustix::process::Pid) {
    for _ in 0..3 {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        let members: Vec<rustix::process::Pid> = entries
            .filter_map(|entry| {
                let pid: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                (session_of(&stat)? == leader.as_raw_nonzero().get())
                    .then(|| rustix::process::Pid::from_raw(pid))
                    .flatten()
            })
            .collect();
        if members.is_empty() {
            return;
        }
        for member in members {
            let _ = rustix::process::kill_process(member, rustix::process::Signal::KILL);
        }
    }
}

/// The session id in a `/proc/PID/stat` line: the fourth field after the command's name
/// (which is in parentheses, and may hold spaces and parentheses itself).
#[cfg(target_os = "linux")]
fn session_of(stat: &str) -> Option<i32> {
    let (_, after_name) = stat.rsplit_once(')')?;
    // state, ppid, pgrp, session
    after_name.split_whitespace().nth(3)?.parse().ok()
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Has the child of `command_line` confine itself, before it runs the shell, with `policy`'s
/// ruleset (writes beneath `root` and `tmp` too), prepared here so that the child, between
/// `fork` and `exec`, only makes two system calls.
#[cfg(target_os = "linux")]
fn restrict(
    command_line: &mut tokio::process::Command,
    policy: &LandlockPolicy,
    root: &Path,
    tmp: &Path,
) -> Result<(), ShellError> {
    use std::os::fd::AsRawFd as _;
    let ruleset = policy
        .prepare(root, tmp)
        .map_err(ShellError::SandboxUnavailable)?;
    if let Some(ruleset) = ruleset {
        // The closure owns the descriptor: it stays open until the command line is dropped,
        // after the spawn.
        // SAFETY: the closure runs in the child between fork and exec, and makes only two
        // async-signal-safe system calls on a descriptor the child inherited.
        unsafe {
            command_line.pre_exec(move || restrict_self(ruleset.as_raw_fd()));
        }
    }
    Ok(())
}

/// Landlock is Linux's: [`Confinement::here`] never reads a sandbox as Landlock elsewhere.
#[cfg(not(target_os = "linux"))]
fn restrict(
    _command_line: &mut tokio::process::Command,
    _policy: &LandlockPolicy,
    _root: &Path,
    _tmp: &Path,
) -> Result<(), ShellError> {
    Err(ShellError::SandboxUnavailable(
        "Landlock exists only on Linux".to_owned(),
    ))
}

/// Applies the prepared Landlock ruleset `fd` to the calling (child) process.
#[cfg(target_os = "linux")]
fn restrict_self(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: plain system calls with integer arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
