//! The library's log on stderr: its `tracing` events, through `tracing-subscriber`. By
//! default the toolsmith crates' warnings and errors (`serve --http` open to the network
//! without a token, a fallback model taking over, a summary of the conversation that
//! failed); `RUST_LOG` chooses others, as for other Rust commands, and keeps those warnings
//! unless it says what of toolsmith's to show.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

use crate::output;

/// The variable that chooses the filter, as `tracing-subscriber` names it.
const FILTER_VARIABLE: &str = EnvFilter::DEFAULT_ENV;

/// Shows the library's log on stderr from now on: the events `RUST_LOG` picks
/// ([`filter_read_from`]), or by default the toolsmith crates' warnings and errors. Other
/// crates' (rmcp's, hyper's) are left out by default: what of theirs matters reaches the
/// user as the library's own error or warning.
pub fn show_on_stderr() {
    let given = match std::env::var(FILTER_VARIABLE) {
        Ok(given) => given,
        Err(std::env::VarError::NotPresent) => String::new(),
        Err(std::env::VarError::NotUnicode(_)) => {
            unread_filter("it is not UTF-8");
            String::new()
        }
    };
    let filter = EnvFilter::builder()
        .parse(filter_read_from(&given))
        .unwrap_or_else(|error| {
            unread_filter(&error.to_string());
            EnvFilter::new(DEFAULT_FILTER)
        });
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Its report of a failed write is an `eprintln!`, which panics where the write
        // failed: a stderr that cannot be written is passed over, as `output::note` does.
        .log_internal_errors(false)
        .event_format(CommandLine)
        .finish();
    // Fails only when a subscriber is already set, which then shows them its own way.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// Says that `RUST_LOG` is not a filter, and why. `from_env_lossy` would say so with
/// `eprintln!`, which panics on a stderr that cannot be written (`2>/dev/full`).
fn unread_filter(why: &str) {
    output::note(format_args!(
        "toolsmith: warning: {FILTER_VARIABLE} is not a filter ({}): the default, {DEFAULT_FILTER}, is used",
        output::escaped(why)
    ));
}

/// The filter read from `RUST_LOG`'s value `given`: [`DEFAULT_FILTER`] added to it unless
/// it names a toolsmith target or sets a level for every target (`off`, `debug`).
/// `tracing-subscriber` applies a default only to an empty filter, so `RUST_LOG=hyper=debug`
/// hid the toolsmith crates' warnings, such as that of a server open to the network.
fn filter_read_from(given: &str) -> Cow<'_, str> {
    let mut directives = given.split(',').map(str::trim).filter(|d| !d.is_empty());
    if !directives
        .clone()
        .any(|d| d.contains("toolsmith") || d.parse::<LevelFilter>().is_ok())
    {
        return match directives.next() {
            None => Cow::Borrowed(DEFAULT_FILTER),
            Some(_) => Cow::Owned(format!(
                "{},{DEFAULT_FILTER}",
                given.trim_end_matches([',', ' '])
            )),
        };
    }
    Cow::Borrowed(given)
}

/// The filter without `RUST_LOG`: the toolsmith crates' (`toolsmith`, `toolsmith_harness`,
/// …: a target in a filter is a prefix) warnings and errors.
const DEFAULT_FILTER: &str = "toolsmith=warn";

/// Each event as one line in the command's voice: `toolsmith: warning: MESSAGE FIELDS`.
/// Below WARN (asked for with `RUST_LOG`, to see what happened) its target and spans too.
/// The line is escaped as a whole: a field or message may quote what a server or a model
/// wrote, and `tracing-subscriber` escapes ANSI sequences but keeps line breaks and `%`
/// fields as they are, which could forge a line or drive the terminal.
struct CommandLine;

impl<S, N> FormatEvent<S, N> for CommandLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        let level = match *metadata.level() {
            Level::ERROR => "error",
            Level::WARN => "warning",
            Level::INFO => "info",
            Level::DEBUG => "debug",
            Level::TRACE => "trace",
        };
        let mut text = String::new();
        if *metadata.level() > Level::WARN {
            write!(text, "{}: ", metadata.target())?;
            for span in context
                .event_scope()
                .into_iter()
                .flat_map(|scope| scope.from_root())
            {
                text.push_str(span.name());
                let extensions = span.extensions();
                if let Some(fields) = extensions.get::<FormattedFields<N>>()
                    && !fields.is_empty()
                {
                    write!(text, "{{{fields}}}")?;
                }
                text.push_str(": ");
            }
        }
        context.format_fields(Writer::new(&mut text), event)?;
        writeln!(writer, "toolsmith: {level}: {}", output::escaped(&text))
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    /// What the subscriber wrote, kept for the test to read.
    #[derive(Clone, Default)]
    struct Written(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Written {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Written {
        type Writer = Self;

        fn make_writer(&'a self) -> Self {
            self.clone()
        }
    }

    /// What `events` logged, as the command shows it with `RUST_LOG` set to `filter`.
    fn shown(filter: &str, events: impl FnOnce()) -> String {
        let written = Written::default();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(
                EnvFilter::builder()
                    .parse(filter_read_from(filter))
                    .unwrap(),
            )
            .with_writer(written.clone())
            .event_format(CommandLine)
            .finish();
        tracing::subscriber::with_default(subscriber, events);
        String::from_utf8(written.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn a_filter_naming_other_crates_alone_keeps_the_toolsmith_warnings() {
        // `tracing-subscriber` applies the default only to an empty filter: `hyper=debug`
        // hid the warning of a server open to the network.
        for (given, read) in [
            ("", "toolsmith=warn"),
            ("  ", "toolsmith=warn"),
            ("hyper=debug", "hyper=debug,toolsmith=warn"),
            ("rmcp=off,hyper", "rmcp=off,hyper,toolsmith=warn"),
            ("[run]=debug", "[run]=debug,toolsmith=warn"),
            // What names toolsmith, or every target, is the user's choice.
            (
                "toolsmith_harness::mcp=debug",
                "toolsmith_harness::mcp=debug",
            ),
            ("off", "off"),
            ("rmcp=debug, ERROR", "rmcp=debug, ERROR"),
            ("hyper=debug,trace", "hyper=debug,trace"),
        ] {
            assert_eq!(filter_read_from(given), read, "{given:?}");
        }
        let said = shown("hyper=debug", || {
            tracing::warn!(target: "toolsmith_harness::mcp", "open");
            tracing::info!(target: "toolsmith_harness::agent", "an info");
        });
        assert_eq!(said, "toolsmith: warning: open\n");
    }

    #[test]
    fn the_default_filter_parses() {
        // `EnvFilter::new` would drop a directive that does not parse, in silence.
        assert!(
            DEFAULT_FILTER
                .parse::<tracing_subscriber::filter::Directive>()
                .is_ok()
        );
    }

    #[test]
    fn a_quoted_line_break_or_escape_cannot_forge_a_line_or_drive_the_terminal() {
        let quoted = "bad\ntoolsmith: error: forged\r\u{1b}[2J\u{7}";
        let said = shown("", || {
            tracing::warn!(target: "toolsmith_harness::model", error = %quoted, "a model failed: {quoted}");
        });
        assert_eq!(
            said,
            "toolsmith: warning: a model failed: bad\\ntoolsmith: error: forged\\r\\x1b[2J\\x07 \
             error=bad\\ntoolsmith: error: forged\\r\\u{1b}[2J\\u{7}\n"
        );
    }

    #[test]
    fn by_default_only_the_toolsmith_crates_warnings_and_errors() {
        let said = shown("", || {
            tracing::warn!(target: "toolsmith_harness::mcp", port = 1, "open");
            tracing::error!(target: "toolsmith_core", "failed");
            tracing::info!(target: "toolsmith_harness::agent", "an info");
            tracing::warn!(target: "rmcp::transport", "another crate's");
        });
        assert_eq!(
            said,
            "toolsmith: warning: open port=1\ntoolsmith: error: failed\n"
        );
    }

    #[test]
    fn a_filter_given_shows_what_it_picks_with_target_and_spans_below_warn() {
        let said = shown("toolsmith=debug,rmcp=off", || {
            let span = tracing::info_span!(target: "toolsmith_harness::agent", "run", turn = 2);
            let _entered = span.enter();
            tracing::debug!(target: "toolsmith_harness::agent", "a step");
            tracing::warn!(target: "rmcp::transport", "another crate's");
        });
        assert_eq!(
            said,
            "toolsmith: debug: toolsmith_harness::agent: run{turn=2}: a step\n"
        );
    }
}
