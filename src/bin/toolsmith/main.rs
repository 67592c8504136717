//! `toolsmith`: the harness presets from the command line — served over MCP, declared for a
//! provider, called once, given to a model with a question — and a remote MCP server's
//! tools listed through the bridge.
//!
//! Each subcommand lives in its own module; this file only reads the command line, runs the
//! subcommand and turns its outcome into an exit code (0: done, 1: failed, 2: usage).

mod call;
mod cli;
mod output;
mod presets;
mod remote;
mod run;
mod serve;
mod tools;

use std::process::ExitCode;

use clap::Parser as _;

use cli::{Cli, Command, McpCommand};

/// Why a subcommand failed: shown on stderr, exit code 1.
#[derive(Debug)]
pub struct Failure(pub String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(error: E) -> Self {
        Self(error.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    let outcome = runtime.block_on(async {
        match cli.command {
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
    });
    // Blocking reads of stdin (serve) must not hold the process at exit.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // Its reader stopped reading (`| head`): what it wanted was printed.
        Err(failure) if output::is_closed_stdout(&failure) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            output::note(format_args!("toolsmith: {message}"));
            ExitCode::FAILURE
        }
    }
}
