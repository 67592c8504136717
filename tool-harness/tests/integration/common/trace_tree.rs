//! [`TraceTree`]: the spans (with their parents and fields) and events a test's thread
//! emits, as a user's subscriber (`tracing-subscriber`'s registry) sees them.

use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

use super::warnings::Line;

/// One span: its name, its parent's index in [`TraceTree::spans`], its `field=value` pairs
/// (values as `{:?}` writes them, strings quoted) given or recorded, in that order, and the
/// spans it follows from (links, not parents).
#[derive(Clone, Debug)]
pub struct SpanRecord {
    pub name: String,
    pub parent: Option<usize>,
    pub fields: Vec<(String, String)>,
    pub follows_from: Vec<usize>,
}

impl SpanRecord {
    /// The value of the field `name`, if the span has it (the last one recorded).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .rev()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.as_str())
    }
}

/// One event: its level, `message field=value …` line, and the index of the span it was
/// emitted in.
#[derive(Clone, Debug)]
pub struct EventRecord {
    pub level: Level,
    pub line: String,
    pub span: Option<usize>,
}

#[derive(Default)]
struct Recorded {
    spans: Vec<SpanRecord>,
    events: Vec<EventRecord>,
}

/// Collects the spans and events of the thread it is the default subscriber of (through
/// [`TraceTree::subscriber`] and `tracing::subscriber::set_default`). Every level is on.
#[derive(Clone, Default)]
pub struct TraceTree(Arc<Mutex<Recorded>>);

/// The index of a span in [`TraceTree::spans`], kept in the registry's span extensions.
struct Index(usize);

impl TraceTree {
    /// A registry that reports to this tree, for `tracing::subscriber::set_default`.
    pub fn subscriber(&self) -> impl Subscriber + Send + Sync + 'static {
        tracing_subscriber::registry().with(self.clone())
    }

    /// Every span so far, in the order they were made.
    pub fn spans(&self) -> Vec<SpanRecord> {
        self.0.lock().unwrap().spans.clone()
    }

    /// Every event so far, in the order they were emitted.
    pub fn events(&self) -> Vec<EventRecord> {
        self.0.lock().unwrap().events.clone()
    }

    /// The indexes of the spans named `name`.
    pub fn named(&self, name: &str) -> Vec<usize> {
        let recorded = self.0.lock().unwrap();
        (0..recorded.spans.len())
            .filter(|&index| recorded.spans[index].name == name)
            .collect()
    }

    /// The names of `span` and of the spans above it, innermost first.
    pub fn path(&self, span: usize) -> Vec<String> {
        let recorded = self.0.lock().unwrap();
        let mut names = Vec::new();
        let mut at = Some(span);
        while let Some(index) = at {
            names.push(recorded.spans[index].name.clone());
            at = recorded.spans[index].parent;
        }
        names
    }
}

struct Pairs<'a>(&'a mut Vec<(String, String)>);

impl Visit for Pairs<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

fn index_of<S: Subscriber + for<'a> LookupSpan<'a>>(
    ctx: &Context<'_, S>,
    id: &Id,
) -> Option<usize> {
    ctx.span(id)?.extensions().get::<Index>().map(|i| i.0)
}

impl<S> Layer<S> for TraceTree
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent = span
            .parent()
            .and_then(|parent| parent.extensions().get::<Index>().map(|i| i.0));
        let mut fields = Vec::new();
        attrs.record(&mut Pairs(&mut fields));
        let mut recorded = self.0.lock().unwrap();
        let index = recorded.spans.len();
        recorded.spans.push(SpanRecord {
            name: attrs.metadata().name().to_owned(),
            parent,
            fields,
            follows_from: Vec::new(),
        });
        drop(recorded);
        span.extensions_mut().insert(Index(index));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(index) = index_of(&ctx, id) {
            values.record(&mut Pairs(&mut self.0.lock().unwrap().spans[index].fields));
        }
    }

    fn on_follows_from(&self, span: &Id, follows: &Id, ctx: Context<'_, S>) {
        if let (Some(span), Some(follows)) = (index_of(&ctx, span), index_of(&ctx, follows)) {
            self.0.lock().unwrap().spans[span]
                .follows_from
                .push(follows);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let span = ctx
            .event_span(event)
            .and_then(|span| span.extensions().get::<Index>().map(|i| i.0));
        let mut line = Line(String::new());
        event.record(&mut line);
        self.0.lock().unwrap().events.push(EventRecord {
            level: *event.metadata().level(),
            line: line.0,
            span,
        });
    }
}
