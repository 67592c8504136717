//! A probe tool for execution tests: it sleeps, fails on request, and records when each run
//! started and how many runs overlapped.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;
use toolsmith::{
    Args, FnTool, ToolAnnotations, ToolArgs, ToolArguments, ToolCallRequest, ToolCallResult,
    ToolError, scheme,
};

/// What the probe tools of one test saw.
pub struct Probe {
    origin: Instant,
    running: AtomicUsize,
    max_running: AtomicUsize,
    starts: Mutex<Vec<(String, Duration)>>,
    runs: Mutex<HashMap<String, u32>>,
}

impl Probe {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            origin: Instant::now(),
            running: AtomicUsize::new(0),
            max_running: AtomicUsize::new(0),
            starts: Mutex::default(),
            runs: Mutex::default(),
        })
    }

    /// The most runs that overlapped.
    pub fn max_running(&self) -> usize {
        self.max_running.load(Ordering::SeqCst)
    }

    /// Runs now in progress.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Every run's tag and start time since the probe was made, in start order.
    pub fn starts(&self) -> Vec<(String, Duration)> {
        self.starts.lock().unwrap().clone()
    }

    /// The tags of every run, in start order.
    pub fn started_tags(&self) -> Vec<String> {
        self.starts().into_iter().map(|(tag, _)| tag).collect()
    }

    /// How many times the call tagged `tag` ran.
    pub fn runs(&self, tag: &str) -> u32 {
        self.runs.lock().unwrap().get(tag).copied().unwrap_or(0)
    }

    /// The total number of runs.
    pub fn total_runs(&self) -> usize {
        self.starts.lock().unwrap().len()
    }

    /// Records a run of `tag` starting now: which run of the tag it is (from 1), and a guard
    /// that counts it as over when dropped. For probe tools written other than `probe_tool`.
    pub fn start(self: &Arc<Self>, tag: &str) -> (u32, RunningGuard) {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        self.starts
            .lock()
            .unwrap()
            .push((tag.to_owned(), self.origin.elapsed()));
        let mut runs = self.runs.lock().unwrap();
        let run = runs.entry(tag.to_owned()).or_default();
        *run += 1;
        (*run, RunningGuard(Arc::clone(self)))
    }
}

/// Counts a run as over when dropped, so a run whose future is dropped is counted too.
pub struct RunningGuard(Arc<Probe>);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A tool `name` with the given annotations. Its arguments: `tag` (which call this is),
/// `ms` (how long to sleep), `fail` (`execution`, `network`, `error_result`, `cancelled` or
/// `invalid`: how to fail) and `fail_times` (fail only the first N runs of the tag).
pub fn probe_tool(name: &str, annotations: ToolAnnotations, probe: &Arc<Probe>) -> FnTool {
    let probe = Arc::clone(probe);
    let tool = name.to_owned();
    FnTool::new(
        name,
        "Sleeps, then succeeds or fails as told.",
        Args::new(
            scheme::object()
                .required("tag", scheme::string())
                .optional("ms", scheme::integer().minimum(0))
                .optional("fail", scheme::string())
                .optional("fail_times", scheme::integer().minimum(0))
                .build(),
        ),
        move |args: ToolArgs<'_>| {
            let probe = Arc::clone(&probe);
            let tool = tool.clone();
            let tag = args.str("tag").map(str::to_owned);
            let ms = args.opt_i64("ms");
            let fail = args.opt_str("fail").map(|f| f.map(str::to_owned));
            let fail_times = args.opt_i64("fail_times");
            async move {
                let tag = tag?;
                let (ms, fail, fail_times) = (ms?, fail?, fail_times?);
                let (run, _guard) = probe.start(&tag);
                let ms = ms.unwrap_or(0) as u64;
                if ms > 0 {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                }
                let fails_now = i64::from(run) <= fail_times.unwrap_or(i64::MAX);
                match fail.as_deref().filter(|_| fails_now) {
                    None => Ok(ToolCallResult::text(tag)),
                    Some("execution") => Err(ToolError::execution(tool, format!("{tag} broke"))),
                    Some("network") => Err(ToolError::network(tool, "connection reset")),
                    Some("error_result") => {
                        Ok(ToolCallResult::error(format!("{tag} reports a failure")))
                    }
                    Some("cancelled") => Err(ToolError::Cancelled(format!("{tag} gave up"))),
                    Some("invalid") => Err(ToolError::invalid_arguments(tool, "bad input")),
                    Some(other) => panic!("unknown failure mode {other}"),
                }
            }
        },
    )
    .with_annotations(annotations)
}

/// A call of tool `name` tagged `tag`, with extra arguments from `extra` (a JSON object).
pub fn call(id: &str, name: &str, extra: Value) -> ToolCallRequest {
    let mut arguments = json!({"tag": id});
    arguments
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    ToolCallRequest::new(id, name, ToolArguments::try_from(arguments).unwrap())
}
