//! What the subcommands print on stdout. A reader that stops early (`toolsmith tools | head`)
//! ends the command quietly, as it does other Unix tools, where `println!` would panic.

use std::fmt::Display;
use std::io::{ErrorKind, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::Failure;

/// Set once stdout's reader has gone: the command stops and exits with success.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Prints `text` and a newline. Fails when stdout cannot be written (then the command
/// stops); a reader that has gone is not reported ([`closed`]).
pub fn line(text: impl Display) -> Result<(), Failure> {
    piece(format_args!("{text}\n"))
}

/// Prints `text` as it is (a piece of a streamed answer), at once.
pub fn piece(text: impl Display) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match write!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Err(Failure("stdout was closed".to_owned()))
        }
        Err(error) => Err(Failure(format!("cannot write to stdout: {error}"))),
    }
}

/// Whether stdout's reader went away before the command finished.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}
