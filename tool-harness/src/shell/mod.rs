//! The shell behind `bash`: the runner (this file), its Landlock confinement
//! (`landlock_policy`) and the capped output buffer (`output_cap`).
//!
//! [`ShellRunner`]: runs a command with `bash -c` in the root directory, in its own process
//! group, with a time limit that kills the whole group and an output cap that keeps the head
//! and the tail.

pub(crate) mod environment;
pub(crate) mod landlock_policy;
pub(crate) mod output_cap;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt as _};

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
/// use toolsmith_harness::{ShellConfig, ShellSandbox};
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
/// use toolsmith_harness::{ShellConfig, ShellRunner};
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
        sandbox_status_at(&self.config.sandbox, LandlockPolicy::kernel_abi())
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
        let spawn_error = |reason: String| ShellError::Spawn {
            shell: config.shell.display().to_string(),
            root: config.root.display().to_string(),
            reason,
        };

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
        let (reader, writer) = std::io::pipe().map_err(|err| spawn_error(err.to_string()))?;
        let writer_too = writer
            .try_clone()
            .map_err(|err| spawn_error(err.to_string()))?;
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
        // Under Landlock, a temporary directory of the command's own (`TMPDIR`), writable as
        // the rest of the system's is not: here-documents, `sort` and `mktemp` need one.
        // Removed with everything in it when the command ends.
        let private_tmp = if self.confines() {
            let tmp = tempfile::Builder::new()
                .prefix("toolsmith-bash-")
                .tempdir()
                .map_err(|err| spawn_error(format!("could not make its TMPDIR: {err}")))?;
            command_line.env("TMPDIR", tmp.path());
            Some(tmp)
        } else {
            None
        };
        let ruleset = self.prepare_sandbox(private_tmp.as_ref().map(tempfile::TempDir::path))?;
        #[cfg(target_os = "linux")]
        if let Some(ruleset) = &ruleset {
            use std::os::fd::AsRawFd as _;
            let fd = ruleset.as_raw_fd();
            // SAFETY: the closure runs in the child between fork and exec, and makes only two
            // async-signal-safe system calls on a descriptor the child inherited.
            unsafe {
                command_line.pre_exec(move || restrict_self(fd));
            }
        }
        let started = Instant::now();
        let mut child = command_line
            .spawn()
            .map_err(|err| spawn_error(err.to_string()))?;
        drop(ruleset);
        // The child holds the write ends now; ours must close for the reader to see the end.
        drop(command_line);
        let group = ProcessGroup(child.id());
        let output = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into())
            .map_err(|err| spawn_error(err.to_string()))?;

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

    /// Whether commands run confined by Landlock (on this machine, as configured).
    fn confines(&self) -> bool {
        match &self.config.sandbox {
            ShellSandbox::None => false,
            ShellSandbox::Landlock(_) | ShellSandbox::LandlockIfSupported(_) => {
                LandlockPolicy::is_supported()
            }
        }
    }

    /// The Landlock ruleset of a command, writable beneath the root, the policy's paths and
    /// `tmp` (its own temporary directory).
    #[cfg(target_os = "linux")]
    fn prepare_sandbox(
        &self,
        tmp: Option<&Path>,
    ) -> Result<Option<std::os::fd::OwnedFd>, ShellError> {
        let root = &self.config.root;
        match &self.config.sandbox {
            ShellSandbox::None => Ok(None),
            ShellSandbox::Landlock(policy) | ShellSandbox::LandlockIfSupported(policy)
                if LandlockPolicy::is_supported() =>
            {
                policy
                    .prepare(root, tmp)
                    .map_err(ShellError::SandboxUnavailable)
            }
            ShellSandbox::Landlock(_) => Err(ShellError::SandboxUnavailable(
                "the Landlock sandbox is required, and this kernel does not support it".to_owned(),
            )),
            ShellSandbox::LandlockIfSupported(_) => Ok(None),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn prepare_sandbox(&self, _tmp: Option<&Path>) -> Result<Option<()>, ShellError> {
        match &self.config.sandbox {
            ShellSandbox::Landlock(_) => Err(ShellError::SandboxUnavailable(
                "the Landlock sandbox is required, and it exists only on Linux".to_owned(),
            )),
            _ => Ok(None),
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

/// [`ShellRunner::sandbox_status`] on a kernel of Landlock ABI `abi` (`None`: none).
fn sandbox_status_at(sandbox: &ShellSandbox, abi: Option<u8>) -> SandboxStatus {
    match (sandbox, abi) {
        (ShellSandbox::None, _) => {
            SandboxStatus::NotSandboxed("no sandbox is configured".to_owned())
        }
        (ShellSandbox::Landlock(_), None) => SandboxStatus::Unavailable(
            "Landlock is required but this kernel does not support it".to_owned(),
        ),
        (ShellSandbox::LandlockIfSupported(_), None) => {
            SandboxStatus::NotSandboxed("this kernel does not support Landlock".to_owned())
        }
        (_, Some(3..)) => SandboxStatus::Confined,
        (_, Some(abi)) => {
            let mut reason = format!(
                "this kernel's Landlock (ABI {abi}; Linux 6.2 has ABI 3) does not confine \
                 truncating files outside the root"
            );
            if abi < 2 {
                reason.push_str(
                    ", and refuses moving or linking a file into another directory, inside \
                     the root too",
                );
            }
            SandboxStatus::PartlyConfined(reason)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_kernels_landlock_is_reported_as_partial() {
        let required = ShellSandbox::Landlock(LandlockPolicy::new());
        let wanted = ShellSandbox::LandlockIfSupported(LandlockPolicy::new());
        for sandbox in [&required, &wanted] {
            assert_eq!(sandbox_status_at(sandbox, Some(3)), SandboxStatus::Confined);
            assert_eq!(sandbox_status_at(sandbox, Some(5)), SandboxStatus::Confined);
            let SandboxStatus::PartlyConfined(reason) = sandbox_status_at(sandbox, Some(2)) else {
                panic!("ABI 2 confines all but truncation");
            };
            assert!(
                reason.contains("truncating files outside the root"),
                "{reason}"
            );
            assert!(!reason.contains("another directory"), "{reason}");
            let SandboxStatus::PartlyConfined(reason) = sandbox_status_at(sandbox, Some(1)) else {
                panic!("ABI 1 confines all but truncation");
            };
            assert!(
                reason.contains("ABI 1") && reason.contains("another directory"),
                "{reason}"
            );
        }
        assert!(matches!(
            sandbox_status_at(&required, None),
            SandboxStatus::Unavailable(_)
        ));
        assert!(matches!(
            sandbox_status_at(&wanted, None),
            SandboxStatus::NotSandboxed(_)
        ));
        assert!(matches!(
            sandbox_status_at(&ShellSandbox::None, Some(3)),
            SandboxStatus::NotSandboxed(_)
        ));
    }
}
