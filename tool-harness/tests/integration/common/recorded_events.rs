//! A session whose events are recorded, with two counting tools: what the agent event and
//! panic tests read a run by.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use toolsmith_core::{Args, FnTool, ToolAnnotations, ToolArgs, ToolCallResult, ToolShed, scheme};
use toolsmith_harness::agent::{AgentEvent, AgentSession, AgentSessionBuilder, NotRunReason};

/// A tool that counts its runs in `runs` and answers "ran".
pub fn counting_tool(name: &str, runs: &Arc<AtomicUsize>) -> FnTool {
    counting_tool_answering(name, Arc::clone(runs), "ran".to_owned())
}

/// A tool that counts its runs in `runs` and answers "<name> ran".
pub fn tool_saying_it_ran(name: &str, runs: Arc<AtomicUsize>) -> FnTool {
    counting_tool_answering(name, runs, format!("{name} ran"))
}

fn counting_tool_answering(name: &str, runs: Arc<AtomicUsize>, answer: String) -> FnTool {
    FnTool::new(
        name,
        format!("A tool named {name}."),
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            runs.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            async move { Ok(ToolCallResult::text(answer)) }
        },
    )
}

/// The events a session sent, in order.
#[derive(Clone, Default)]
pub struct Recorded(pub Arc<Mutex<Vec<AgentEvent>>>);

impl Recorded {
    /// `builder` with the recorder as an event handler, `ping` and a destructive `wipe`
    /// (both counting in `runs`) as tools, all of them offered.
    pub fn session(&self, builder: AgentSessionBuilder, runs: &Arc<AtomicUsize>) -> AgentSession {
        self.session_with(builder, runs, None)
    }

    /// [`session`](Self::session) with `extra` as a tool too.
    pub fn session_with(
        &self,
        builder: AgentSessionBuilder,
        runs: &Arc<AtomicUsize>,
        extra: Option<FnTool>,
    ) -> AgentSession {
        let wipe = counting_tool("wipe", runs).with_annotations(ToolAnnotations {
            destructive: Some(true),
            ..ToolAnnotations::default()
        });
        let mut shed = ToolShed::new().tool(counting_tool("ping", runs)).tool(wipe);
        if let Some(extra) = extra {
            shed = shed.tool(extra);
        }
        self.session_over(builder, shed)
    }

    /// `builder` with the recorder as an event handler and `shed`'s tools, all of them
    /// offered.
    pub fn session_over(&self, builder: AgentSessionBuilder, shed: ToolShed) -> AgentSession {
        let sink = Arc::clone(&self.0);
        let session = builder
            .with_model("m")
            .with_toolshed(shed)
            .with_event_handler(move |event: &AgentEvent| sink.lock().unwrap().push(event.clone()))
            .build()
            .unwrap();
        let names = session.tool_manager().names();
        session.tool_manager().activate(&names);
        session
    }

    /// Each event as a short word; a call's events with the call's id (`started c1`,
    /// `not-run c2`).
    pub fn kinds(&self) -> Vec<String> {
        self.words(false)
    }

    /// [`kinds`](Self::kinds), a `ToolCallNotRun` with its reason too (`not-run c2
    /// Panicked`).
    pub fn kinds_and_reasons(&self) -> Vec<String> {
        self.words(true)
    }

    fn words(&self, reasons: bool) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|event| match event {
                AgentEvent::ModelRequest { .. } => "request".to_owned(),
                AgentEvent::ModelResponse { .. } => "response".to_owned(),
                AgentEvent::ToolCallNotRun { call_id, why, .. } if reasons => {
                    format!("not-run {call_id} {why:?}")
                }
                AgentEvent::ToolCallNotRun { call_id, .. } => format!("not-run {call_id}"),
                AgentEvent::ToolCallDenied { call_id, .. } => format!("denied {call_id}"),
                AgentEvent::ToolCallStarted { call_id, .. } => format!("started {call_id}"),
                AgentEvent::ToolCallFinished { call_id, .. } => format!("finished {call_id}"),
                AgentEvent::TurnFinished { .. } => "turn".to_owned(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    /// The `ToolCallNotRun` events as (id, name, why, summary).
    pub fn not_run(&self) -> Vec<(String, String, NotRunReason, String)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|event| match event {
                AgentEvent::ToolCallNotRun {
                    call_id,
                    name,
                    why,
                    summary,
                } => Some((call_id.clone(), name.clone(), *why, summary.clone())),
                _ => None,
            })
            .collect()
    }
}
