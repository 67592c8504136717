//! `toolsmith`: the harness presets from the command line — served over MCP, declared for a
//! provider, called once, given to a model with a question — and a remote MCP server's
//! tools listed through the bridge.
//!
//! Each subcommand lives in its own module; this file only reads the command line, runs the
//! subcommand and turns its outcome into an exit code (0: done, 1: failed, 2: usage).

mod call;
mod cli;
mod fallback_arg;
mod from_stdin;
mod library_log;
mod output;
mod presets;
mod remote;
mod run;
mod serve;
mod tools;

use std::process::ExitCode;

use cli::{Cli, Command, McpCommand};

/// Why a subcommand failed: shown on stderr, exit code 1, or 2 when the command line asked
/// for what cannot be (a value clap could not check: `call`'s JSON, its tool's name).
#[derive(Debug)]
pub struct Failure {
    /// What failed, one line.
    pub message: String,
    /// The command line is at fault: exit code 2, as for clap's own usage errors.
    pub usage: bool,
}

impl Failure {
    /// A failure of the command: exit code 1.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            usage: false,
        }
    }

    /// A usage error found after clap read the command line: exit code 2.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            usage: true,
        }
    }
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(error: E) -> Self {
        Self::new(error.to_string())
    }
}

/// How long an interrupted command waits for its tasks to be dropped, each ending what it
/// started (a `bash` command, an MCP server), before the process exits. A blocking read of
/// stdin (`serve` on stdio) never ends and holds it this long.
const INTERRUPTED_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

fn main() -> ExitCode {
    let cli = Cli::read();
    library_log::show_on_stderr();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            output::note(format_args!(
                "toolsmith: cannot start the async runtime: {error}"
            ));
            return ExitCode::FAILURE;
        }
    };
    // `run --json` ends every failure with its error line, an interruption too: a program
    // reading the lines can tell it from a cut pipe.
    let json_lines = matches!(&cli.command, Command::Run(args) if args.json);
    // Installed before the command starts anything.
    let interrupted = signal_watch();
    // The command runs on the runtime's workers, not on this thread: a write of its that
    // blocks (a reader of stdout that reads nothing) must not keep this thread from
    // hearing the signal and ending the process.
    let mut command = runtime.spawn(run(cli.command));
    let outcome = runtime.block_on(async {
        tokio::select! {
            joined = &mut command => Ok(joined),
            Ok(signal) = interrupted => Err(signal),
        }
    });
    let outcome = match outcome {
        Ok(Ok(outcome)) => outcome,
        // The command panicked: the panic was reported where it happened; end as it would
        // have ended on this thread.
        Ok(Err(error)) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Ok(Err(error)) => Err(Failure::new(format!("the command was stopped: {error}"))),
        Err(signal) => {
            // The command's task and those it spawned (a client's call under `serve`) are
            // dropped as the runtime shuts down. Each ends its child as it is dropped: a
            // child leads a process group of its own, which the signal missed.
            command.abort();
            runtime.shutdown_timeout(INTERRUPTED_WAIT);
            // After the shutdown, so that no task of the run prints a line after it. A
            // reader gone or a stdout that cannot be written changes nothing: the exit code
            // says the signal.
            if json_lines {
                let message = format!("interrupted by {}", signal_name(signal));
                write_within(INTERRUPTED_WAIT, move || {
                    let _ = run::error_line(Failure::new(message));
                });
            }
            return ExitCode::from(128 + signal);
        }
    };
    // Blocking reads of stdin (serve) must not hold the process at exit.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // Its reader stopped reading (`| head`): what it wanted was printed.
        Err(failure) if output::is_closed_stdout(&failure) => ExitCode::SUCCESS,
        Err(Failure { message, usage }) => {
            // One line: what failed may quote a server, a model or a tool.
            output::note(format_args!("toolsmith: {}", output::escaped(&message)));
            if usage {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Runs the subcommand.
async fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Serve(args) => serve::run(args).await,
        Command::Tools(args) => tools::run(&args),
        Command::Call(args) => call::run(args).await,
        Command::Run(args) => run::run(args).await,
        Command::Mcp {
            command:
                McpCommand::List {
                    url,
                    token,
                    command,
                },
        } => remote::list(url, token, command).await,
    }
}

/// The number of the first SIGINT (Ctrl-C) or SIGTERM the process receives, heard on a
/// thread of its own with a runtime of its own: the command's runtime may have every worker
/// blocked in a write to stdout, where no task is woken. Returns once the handlers are
/// installed ([`interruption`]); where they cannot be, the receiver is closed and the
/// signals end the process as they would have.
fn signal_watch() -> tokio::sync::oneshot::Receiver<u8> {
    let (signalled, interrupted) = tokio::sync::oneshot::channel();
    let (installed, handlers_installed) = std::sync::mpsc::channel();
    let watch = std::thread::Builder::new()
        .name("signals".to_owned())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                let signal = interruption();
                let _ = installed.send(());
                let _ = signalled.send(signal.await);
            });
        });
    if watch.is_ok() {
        // An error: the thread ended without installing them.
        let _ = handlers_installed.recv();
    }
    interrupted
}

/// Runs `write` (a last line on stdout) on a thread of its own and waits for it at most
/// `wait`: a write of the command's, blocked on a stdout nobody reads, holds stdout's lock,
/// and the process must exit all the same.
fn write_within(wait: std::time::Duration, write: impl FnOnce() + Send + 'static) {
    let (written, done) = std::sync::mpsc::channel();
    let writer = std::thread::Builder::new()
        .name("last line".to_owned())
        .spawn(move || {
            write();
            let _ = written.send(());
        });
    if writer.is_ok() {
        let _ = done.recv_timeout(wait);
    }
}

/// The number of the first SIGINT (Ctrl-C) or SIGTERM the process receives. The handlers
/// are installed when this is called, not when it is first polled: the command's own first
/// poll may start a child (a `bash` command) and a signal sent then must not find the
/// default action, which would end the process and leave the child running. Where the
/// handlers cannot be installed, never: the signals then end the process as they would
/// have.
///
/// A signal the process started with ignored stays ignored, as POSIX tools do: a shell
/// starts a background job (`toolsmith serve &` in a script) deaf to SIGINT, so that the
/// terminal's Ctrl-C stops the script's foreground work and not the job. Installing a
/// handler would undo that.
#[cfg(unix)]
fn interruption() -> impl std::future::Future<Output = u8> {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    let handler = |kind: SignalKind| -> std::io::Result<Option<Signal>> {
        if ignored_at_start(kind.as_raw_value()) {
            return Ok(None);
        }
        signal(kind).map(Some)
    };
    let handlers = (
        handler(SignalKind::interrupt()),
        handler(SignalKind::terminate()),
    );
    async move {
        let (Ok(mut interrupt), Ok(mut terminate)) = handlers else {
            return std::future::pending().await;
        };
        // An ignored signal's branch waits for ever.
        async fn received(handler: Option<&mut Signal>) {
            match handler {
                Some(handler) => _ = handler.recv().await,
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            () = received(interrupt.as_mut()) => libc::SIGINT as u8,
            () = received(terminate.as_mut()) => libc::SIGTERM as u8,
        }
    }
}

/// The name of `signal`, one [`interruption`] gives.
#[cfg(unix)]
fn signal_name(signal: u8) -> String {
    match libc::c_int::from(signal) {
        libc::SIGINT => "SIGINT (Ctrl-C)".to_owned(),
        libc::SIGTERM => "SIGTERM".to_owned(),
        other => format!("signal {other}"),
    }
}

/// The name of `signal`, one [`interruption`] gives: Ctrl-C.
#[cfg(not(unix))]
fn signal_name(_: u8) -> String {
    "Ctrl-C".to_owned()
}

/// Whether `signal`'s action is "ignore" (`SIG_IGN`), as the process was started with it.
#[cfg(unix)]
fn ignored_at_start(signal: libc::c_int) -> bool {
    let mut action = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: with a null new action, `sigaction` only writes the current one to `action`,
    // a valid, writable `sigaction`; the value is read only when the call succeeded.
    unsafe {
        libc::sigaction(signal, std::ptr::null(), action.as_mut_ptr()) == 0
            && action.assume_init().sa_sigaction == libc::SIG_IGN
    }
}

/// Ctrl-C, as SIGINT's number (the exit code is 130, as on Unix).
#[cfg(not(unix))]
fn interruption() -> impl std::future::Future<Output = u8> {
    const SIGINT: u8 = 2;
    async {
        match tokio::signal::ctrl_c().await {
            Ok(()) => SIGINT,
            Err(_) => std::future::pending().await,
        }
    }
}
