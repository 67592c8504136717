//! Tests: a time limit that expires is traced with the limit, which the error (its shape
//! fixed by the specification) cannot carry.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use crate::{
    Args, BatchOptions, FnTool, ToolArgs, ToolArguments, ToolCallManager, ToolCallRequest,
    ToolCallResult, ToolError,
};

/// Collects the events of the thread it is the default subscriber of, as
/// `message field=value …` lines.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<String>>>);

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl Subscriber for Events {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut line = Line(String::new());
        event.record(&mut line);
        self.0.lock().unwrap().push(line.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// A tool that sleeps ten seconds.
fn nap(name: &str) -> FnTool {
    FnTool::new(name, "Naps.", Args::empty(), |_: ToolArgs<'_>| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(ToolCallResult::empty())
    })
}

#[tokio::test(start_paused = true)]
async fn a_calls_time_limit_is_traced_with_the_limit() {
    let events = Events::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let manager = ToolCallManager::new("s");
    let tool = nap("nap").with_timeout(Duration::from_millis(250));
    manager.register(Arc::new(tool)).unwrap();
    let err = manager
        .execute_call("nap", &ToolArguments::new())
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::timeout("nap"));
    let lines = events.0.lock().unwrap();
    assert!(
        lines.iter().any(|line| line.contains("timed out")
            && line.contains("tool=\"nap\"")
            && line.contains("limit=250ms")),
        "{lines:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_batch_deadline_is_traced_with_the_deadline() {
    let events = Events::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let manager = ToolCallManager::new("s");
    manager.register(Arc::new(nap("nap"))).unwrap();
    let request = ToolCallRequest::new("1", "nap", ToolArguments::new());
    let options = BatchOptions::new().with_deadline(Duration::from_millis(400));
    let outcomes = manager
        .execute_batch_with(std::slice::from_ref(&request), &options)
        .await;
    assert!(
        matches!(&outcomes[0].result, Err(ToolError::Cancelled(_))),
        "{outcomes:?}"
    );
    let lines = events.0.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|line| line.contains("deadline") && line.contains("deadline=400ms")),
        "{lines:?}"
    );
}
