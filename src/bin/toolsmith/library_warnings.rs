//! The library's warnings and errors (its `tracing` events of those levels), each a line on
//! stderr. Without a subscriber they were dropped: `serve --http` on a network address
//! without a token, a fallback model taking over, a summary of the conversation that
//! failed, would all pass unseen.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use crate::output;

/// Shows the toolsmith crates' warnings and errors on stderr from now on. Other crates'
/// (rmcp's, hyper's) are left out: what of theirs matters reaches the user as the
/// library's own error or warning.
pub fn show_on_stderr() {
    // Fails only when a subscriber is already set, which then shows them its own way.
    let _ = tracing::subscriber::set_global_default(StderrWarnings);
}

/// A subscriber of events only: each WARN or ERROR event of a toolsmith crate, one line.
struct StderrWarnings;

impl Subscriber for StderrWarnings {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event()
            && *metadata.level() <= Level::WARN
            && metadata.target().starts_with("toolsmith")
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::WARN)
    }

    // Spans are never enabled ([`enabled`](Self::enabled)): tracing asks for none of them,
    // but the trait wants an id.
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = EventLine::default();
        event.record(&mut line);
        let level = if *event.metadata().level() == Level::ERROR {
            "error"
        } else {
            "warning"
        };
        output::note(format_args!("toolsmith: {level}: {}", line.shown()));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// An event's message and its other fields, as they are recorded.
#[derive(Default)]
struct EventLine {
    /// The `message` field: the text the event was written with.
    message: String,
    /// The other fields, `name=value` separated by `, `.
    fields: String,
}

impl EventLine {
    /// The message, then its fields in brackets, on one line: a field may quote what a
    /// server or a model wrote, escaped so that it cannot drive the terminal.
    fn shown(&self) -> String {
        let text = if self.fields.is_empty() {
            self.message.clone()
        } else {
            format!("{} ({})", self.message, self.fields)
        };
        output::escaped(&text).into_owned()
    }

    fn add(&mut self, field: &Field, value: fmt::Arguments<'_>) {
        if field.name() == "message" {
            let _ = self.message.write_fmt(value);
            return;
        }
        if !self.fields.is_empty() {
            self.fields.push_str(", ");
        }
        let _ = write!(self.fields, "{}={value}", field.name());
    }
}

impl Visit for EventLine {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.add(field, format_args!("{value}"));
    }

    // `%value` fields come here as Display wrappers, whose Debug is the value's Display.
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.add(field, format_args!("{value:?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_the_message_then_its_fields_escaped() {
        let line = EventLine {
            message: "a model failed: asking the next".to_owned(),
            fields: "failed=openai_chat, error=bad\u{1b}[2J\nanswer".to_owned(),
        };
        assert_eq!(
            line.shown(),
            "a model failed: asking the next (failed=openai_chat, error=bad\\u{1b}[2J\\nanswer)"
        );
        let bare = EventLine {
            message: "only this".to_owned(),
            fields: String::new(),
        };
        assert_eq!(bare.shown(), "only this");
    }
}
