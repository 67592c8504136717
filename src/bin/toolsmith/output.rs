//! What the subcommands print on stdout. A reader that stops early (`toolsmith tools | head`)
//! ends the command quietly, as it does other Unix tools, where `println!` would panic; and
//! what they say on stderr, where a failed write is passed over ([`note`]).

use std::borrow::Cow;
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
            Err(reader_gone())
        }
        Err(error) => Err(Failure::new(format!("cannot write to stdout: {error}"))),
    }
}

/// Prints `text` and a newline on stderr. A stderr that cannot be written (its reader gone,
/// `2>/dev/full`) is passed over: stderr is where a failure would be reported, and
/// `eprintln!` panicked there.
pub fn note(text: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// The failure of a write to a stdout whose reader has gone.
const CLOSED_MESSAGE: &str = "stdout was closed";

/// Whether stdout's reader went away before the command finished.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// The failure of a command stopped because stdout's reader went away: not reported, and
/// the command ends with success ([`is_closed_stdout`]).
pub fn reader_gone() -> Failure {
    Failure::new(CLOSED_MESSAGE.to_owned())
}

/// Whether `failure` is only that stdout's reader went away: what it wanted was printed,
/// and the command ends quietly. Any other failure is still one.
pub fn is_closed_stdout(failure: &Failure) -> bool {
    closed() && failure.message == CLOSED_MESSAGE
}

/// `text` as a terminal may be shown it: its control characters (escape sequences that
/// would drive the terminal, line breaks) escaped, the rest as it is. For what a model or
/// a server wrote: a tool's name, a description.
pub fn escaped(text: &str) -> Cow<'_, str> {
    escaped_where(text, |c, _| c.is_control())
}

/// `text` as a terminal may be shown it with its lines: as [`escaped`], but line breaks
/// (`\n`, and `\r\n`) and tabs are kept. For text that is read as lines: a model's
/// answer, a tool's result. A lone `\r` is escaped, since it would let text overwrite
/// what the line showed; one that ends a streamed piece, its `\n` in the next, is too.
pub fn escaped_lines(text: &str) -> Cow<'_, str> {
    escaped_where(text, |c, next| {
        c.is_control() && !matches!(c, '\n' | '\t') && !(c == '\r' && next == Some('\n'))
    })
}

/// `text` with each character `escapes` picks (given the character after it) escaped;
/// borrowed when it picks none.
fn escaped_where(text: &str, escapes: impl Fn(char, Option<char>) -> bool) -> Cow<'_, str> {
    let picked = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        let c = chars.next()?;
        Some((c, escapes(c, chars.peek().copied())))
    };
    let mut chars = text.chars().peekable();
    if !std::iter::from_fn(|| picked(&mut chars)).any(|(_, escape)| escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    for (c, escape) in std::iter::from_fn(|| picked(&mut chars)) {
        if escape {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::{escaped, escaped_lines};

    #[test]
    fn lines_keep_their_breaks_and_tabs_and_lose_the_rest() {
        assert_eq!(escaped_lines("a\n\tb\r\nc"), "a\n\tb\r\nc");
        assert_eq!(
            escaped_lines("ok\u{1b}[2J\u{1b}]52;c;eA==\u{7}\rhidden\r"),
            "ok\\u{1b}[2J\\u{1b}]52;c;eA==\\u{7}\\rhidden\\r"
        );
        assert_eq!(escaped_lines("\u{9b}31m\u{0}"), "\\u{9b}31m\\u{0}");
    }

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(escaped("read_file"), "read_file");
        assert_eq!(escaped("é ü"), "é ü");
        assert_eq!(
            escaped("\u{1b}]0;title\u{7}a\nb\u{9b}"),
            "\\u{1b}]0;title\\u{7}a\\nb\\u{9b}"
        );
    }
}
