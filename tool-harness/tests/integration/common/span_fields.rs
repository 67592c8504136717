//! [`SpanFields`]: the fields the spans of a test's thread were given or recorded, by span
//! name, to assert on what a span ends up saying.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span's `field=value` pairs, in the order given.
pub type Fields = Vec<(String, String)>;

/// Collects, for each span of the thread it is the default subscriber of
/// (`tracing::subscriber::set_default`), its name and `field=value` pairs (values as `{:?}`
/// writes them, strings quoted), in the order given.
#[derive(Clone, Default)]
pub struct SpanFields {
    next: Arc<AtomicU64>,
    spans: Arc<Mutex<HashMap<u64, (String, Fields)>>>,
}

impl SpanFields {
    /// Each span named `name` (in no set order), as its fields.
    pub fn named(&self, name: &str) -> Vec<Fields> {
        self.spans
            .lock()
            .unwrap()
            .values()
            .filter(|(span, _)| span == name)
            .map(|(_, fields)| fields.clone())
            .collect()
    }
}

struct Pairs<'a>(&'a mut Fields);

impl Visit for Pairs<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

impl Subscriber for SpanFields {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        // Ids start at 1: 0 is not a span id.
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut fields = Vec::new();
        span.record(&mut Pairs(&mut fields));
        let name = span.metadata().name().to_owned();
        self.spans.lock().unwrap().insert(id, (name, fields));
        Id::from_u64(id)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some((_, fields)) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Pairs(fields));
        }
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
