//! One run's events as a stream of its own (`AgentSession::events_of`): the events of that
//! run alone, whatever else the session runs at once, in the handlers' order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt as _;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{Barrier, Notify};
use toolsmith_core::{
    Args, FnTool, ToolArgs, ToolArguments, ToolCallContext, ToolCallRequest, ToolCallResult,
    ToolImpl, ToolShed, scheme,
};
use toolsmith_harness::agent::{AgentEvent, AgentRun, AgentSession, AgentTool, RunEvents};
use toolsmith_harness::model::{ChatRequest, ChatResponse, Message, ScriptedModel, ScriptedTurn};

use crate::common::recorded_events::Recorded;
use crate::common::stalled::waits_for_ever;

/// What a stream had, then the run's outcome.
async fn read_all<F: Future>(mut events: RunEvents<F>) -> (Vec<AgentEvent>, F::Output) {
    let mut read = Vec::new();
    while let Some(event) = events.next().await {
        read.push(event);
    }
    (read, events.finish().await)
}

/// An event in a few words: its kind and, for a call's, the call id.
fn kind(event: &AgentEvent) -> String {
    match event {
        AgentEvent::ModelRequest { .. } => "request".to_owned(),
        AgentEvent::ModelResponse { .. } => "response".to_owned(),
        AgentEvent::ToolCallStarted { call_id, .. } => format!("started {call_id}"),
        AgentEvent::ToolCallFinished { call_id, .. } => format!("finished {call_id}"),
        AgentEvent::ToolCallProgress(progress) => {
            format!("progress {}", progress.message.as_deref().unwrap_or(""))
        }
        AgentEvent::TextDelta(text) => format!("delta {text}"),
        AgentEvent::TurnFinished { .. } => "turn".to_owned(),
        other => format!("{other:?}"),
    }
}

fn kinds(events: &[AgentEvent]) -> Vec<String> {
    events.iter().map(kind).collect()
}

/// The user's task, the conversation's first message.
fn task(request: &ChatRequest) -> String {
    request.messages[0].text().unwrap_or_default().to_owned()
}

/// A model that answers a task by calling `tool` once (call id `call-<task>`), then with
/// "done <task>", for `runs` runs in any order.
fn one_call_per_task(tool: &'static str, runs: usize) -> ScriptedModel {
    let turn = move || {
        ScriptedTurn::respond(move |request| {
            let task = task(request);
            Ok(match request.messages.last() {
                Some(Message::User { .. }) => ChatResponse::calls(vec![Ok(ToolCallRequest::new(
                    format!("call-{task}"),
                    tool,
                    ToolArguments::try_from(json!({"who": task})).unwrap(),
                ))]),
                _ => ChatResponse::text(format!("done {task}")),
            })
        })
    };
    ScriptedModel::new((0..runs * 2).map(|_| turn()))
}

#[tokio::test]
async fn two_runs_of_one_session_at_once_each_stream_their_own_events() {
    // Each run's call waits for the other's: the two runs are under way together.
    let both = Arc::new(Barrier::new(2));
    let meet = FnTool::new(
        "meet",
        "Meets the other run.",
        Args::new(scheme::object().required("who", scheme::string()).build()),
        move |args: ToolArgs<'_>| {
            let both = Arc::clone(&both);
            let who: String = args.field("who").unwrap_or_default();
            async move {
                both.wait().await;
                Ok(ToolCallResult::text(format!("met {who}")))
            }
        },
    );
    let recorded = Recorded::default();
    let session = recorded.session_over(
        AgentSession::builder(one_call_per_task("meet", 2)),
        ToolShed::new().tool(meet),
    );
    let ((a, ran_a), (b, ran_b)) = tokio::join!(
        read_all(session.events_of(session.run("A"))),
        read_all(session.events_of(session.run("B"))),
    );
    assert_eq!(ran_a.unwrap().text, "done A");
    assert_eq!(ran_b.unwrap().text, "done B");
    for (events, task) in [(&a, "A"), (&b, "B")] {
        assert_eq!(
            kinds(events),
            [
                "request".to_owned(),
                "response".to_owned(),
                format!("started call-{task}"),
                format!("finished call-{task}"),
                "turn".to_owned(),
                "request".to_owned(),
                "response".to_owned(),
            ],
            "run {task}'s stream"
        );
        let finished = events.iter().find_map(|event| match event {
            AgentEvent::ToolCallFinished { summary, .. } => Some(summary.clone()),
            _ => None,
        });
        assert_eq!(finished.as_deref(), Some(&*format!("met {task}")));
    }
    // The handlers heard both, interleaved: the two calls started before either ended.
    let heard = kinds(&recorded.0.lock().unwrap());
    assert_eq!(heard.len(), 14, "{heard:?}");
    let position = |kind: &str| heard.iter().position(|k| k == kind).unwrap();
    assert!(
        position("started call-B") < position("finished call-A"),
        "{heard:?}"
    );
    assert!(
        position("started call-A") < position("finished call-B"),
        "{heard:?}"
    );
}

#[tokio::test]
async fn a_runs_stream_has_the_events_its_handlers_heard_in_their_order() {
    let crawl = FnTool::new(
        "crawl",
        "Crawls.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async {
            let call = ToolCallContext::current().expect("a call's context");
            call.progress(0.5, None, "half way");
            Ok(ToolCallResult::text("crawled"))
        },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::call("crawl", json!({})),
        ScriptedTurn::text("All crawled."),
    ]);
    let recorded = Recorded::default();
    let session = recorded.session_over(
        AgentSession::builder(model).with_streaming(true),
        ToolShed::new().tool(crawl),
    );
    let (streamed, ran) = read_all(session.events_of(session.send("Crawl."))).await;
    assert_eq!(ran.unwrap().text, "All crawled.");
    assert_eq!(streamed, *recorded.0.lock().unwrap());
    assert_eq!(
        kinds(&streamed),
        [
            "request",
            "response",
            "started call-1-0",
            "progress half way",
            "finished call-1-0",
            "turn",
            "request",
            "delta All crawled.",
            "response",
        ]
    );
}

#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct City {
    name: String,
}

#[tokio::test]
async fn a_typed_runs_stream_has_its_answers_exchange_too() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Paris, I think."),
        ScriptedTurn::call("final_answer", json!({"name": "Paris"})),
    ]);
    let session = AgentSession::builder(model)
        .with_model("m")
        .build()
        .unwrap();
    let (streamed, typed) = read_all(session.events_of(session.send_as::<City>("A city?"))).await;
    assert_eq!(typed.unwrap().value.name, "Paris");
    let requests: Vec<_> = streamed
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ModelRequest { turn, tools } => Some((*turn, tools.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(requests.len(), 2, "{streamed:?}");
    assert!(!requests[0].1.contains(&"final_answer".to_owned()));
    assert!(requests[1].1.contains(&"final_answer".to_owned()));
    assert_eq!(
        kinds(&streamed),
        ["request", "response", "request", "response"]
    );
}

#[tokio::test]
async fn runs_made_inside_a_call_stream_to_their_own_wrapper_and_to_the_callers_wrapped() {
    // `ask` reads another session's run as a stream of its own, inside the outer run's call;
    // `research` is an agent tool, whose session's run nobody asked a stream of. The caller's
    // stream has both runs' events as its sub-agents', under their calls' ids.
    let inner = Arc::new(
        AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("inner answer")]))
            .with_model("inner")
            .build()
            .unwrap(),
    );
    let inner_read = Arc::new(Mutex::new(Vec::new()));
    let ask = {
        let inner_read = Arc::clone(&inner_read);
        FnTool::new(
            "ask",
            "Asks another agent.",
            Args::new(scheme::object().build()),
            move |_: ToolArgs<'_>| {
                let inner = Arc::clone(&inner);
                let inner_read = Arc::clone(&inner_read);
                async move {
                    let (events, ran) = read_all(inner.events_of(inner.run("inner task"))).await;
                    *inner_read.lock().unwrap() = kinds(&events);
                    Ok(ToolCallResult::text(ran.unwrap().text))
                }
            },
        )
    };
    let research = AgentTool::new(
        Arc::new(
            AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("research answer")]))
                .with_model("research")
                .build()
                .unwrap(),
        ),
        "research",
        "Researches.",
    );
    let model = ScriptedModel::new([
        ScriptedTurn::call("ask", json!({})).and_call("research", json!({"input": "look"})),
        ScriptedTurn::text("outer answer"),
    ]);
    let recorded = Recorded::default();
    let outer = recorded.session_over(
        AgentSession::builder(model),
        ToolShed::new()
            .tool(ask)
            .tool(Arc::new(research) as Arc<dyn ToolImpl>),
    );
    let (streamed, ran) = read_all(outer.events_of(outer.run("outer task"))).await;
    let ran: AgentRun = ran.unwrap();
    assert_eq!(ran.text, "outer answer");
    assert_eq!(ran.tool_calls[0].result.content.to_text(), "inner answer");
    assert_eq!(*inner_read.lock().unwrap(), ["request", "response"]);
    let started: Vec<_> = kinds(&streamed)
        .into_iter()
        .filter(|kind| kind.starts_with("started") || kind == "request")
        .collect();
    assert_eq!(
        started,
        ["request", "started call-1-0", "started call-1-1", "request"],
        "{streamed:?}"
    );
    for call in ["call-1-0", "call-1-1"] {
        let of_call: Vec<String> = streamed
            .iter()
            .filter_map(|event| match event {
                AgentEvent::SubAgent { agent, event } if agent == call => Some(kind(event)),
                _ => None,
            })
            .collect();
        assert_eq!(of_call, ["request", "response"], "{call}: {streamed:?}");
    }
    assert_eq!(streamed, *recorded.0.lock().unwrap());
}

#[tokio::test]
async fn a_future_that_starts_no_run_of_the_session_has_an_empty_stream() {
    let session = AgentSession::builder(ScriptedModel::new([]))
        .with_model("m")
        .build()
        .unwrap();
    let other_heard = Arc::new(Mutex::new(Vec::new()));
    let other = AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("other")]))
        .with_model("m")
        .with_event_handler({
            let heard = Arc::clone(&other_heard);
            move |event: &AgentEvent| heard.lock().unwrap().push(kind(event))
        })
        .build()
        .unwrap();
    let (events, answer) = read_all(session.events_of(async { 42 })).await;
    assert!(events.is_empty());
    assert_eq!(answer, 42);
    // Another session's run does not take the stream offered to this one's.
    let (events, ran) = read_all(session.events_of(other.run("hello"))).await;
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(ran.unwrap().text, "other");
    assert_eq!(*other_heard.lock().unwrap(), ["request", "response"]);
}

#[tokio::test]
async fn only_the_first_run_a_future_starts_takes_the_stream() {
    let model = ScriptedModel::new([ScriptedTurn::text("one"), ScriptedTurn::text("two")]);
    let session = AgentSession::builder(model)
        .with_model("m")
        .build()
        .unwrap();
    let both = async {
        let first = session.send("first").await.unwrap();
        let second = session.send("second").await.unwrap();
        (first.text, second.text)
    };
    let (events, answers) = read_all(session.events_of(both)).await;
    assert_eq!(answers, ("one".to_owned(), "two".to_owned()));
    let turns: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ModelResponse { turn, .. } => Some(*turn),
            _ => None,
        })
        .collect();
    assert_eq!(turns, [1], "{events:?}");
}

#[tokio::test]
async fn finish_alone_runs_to_the_end_and_the_handlers_still_hear() {
    let recorded = Recorded::default();
    let session = recorded.session_over(
        AgentSession::builder(one_call_per_task("ping", 1)),
        ToolShed::new().tool(ping()),
    );
    let ran = session.events_of(session.run("P")).finish().await.unwrap();
    assert_eq!(ran.text, "done P");
    assert_eq!(ran.tool_calls[0].result.content.to_text(), "pong");
    assert_eq!(recorded.0.lock().unwrap().len(), 7);
}

fn ping() -> FnTool {
    FnTool::new(
        "ping",
        "Pings.",
        Args::new(scheme::object().optional("who", scheme::string()).build()),
        |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) },
    )
}

#[tokio::test]
async fn a_stream_dropped_midway_drops_its_send_and_the_conversation_stays_as_it_was() {
    let started = Arc::new(Notify::new());
    let dropped = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::text("first answer"),
        ScriptedTurn::call("wait", json!({})),
        ScriptedTurn::text("third answer"),
    ]);
    let recorded = Recorded::default();
    let session = recorded.session_over(
        AgentSession::builder(model),
        ToolShed::new().tool(waits_for_ever(started, Arc::clone(&dropped))),
    );
    session.send("first").await.unwrap();
    let mut events = session.events_of(session.send("second"));
    while let Some(event) = events.next().await {
        if matches!(event, AgentEvent::ToolCallStarted { .. }) {
            break;
        }
    }
    // The call has started and waits: reading no more holds the run there.
    tokio::task::yield_now().await;
    assert_eq!(dropped.load(Ordering::SeqCst), 0);
    drop(events);
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the tool's future dropped with the run"
    );
    let kept = session.transcript().await;
    assert_eq!(kept.len(), 2, "{kept:?}");
    let run = session.send("third").await.unwrap();
    assert_eq!(run.text, "third answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_stream_is_read_on_a_task_of_its_own() {
    // As a server would: each request's run on a task, its stream read there.
    let session = Arc::new(
        AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("hi")]))
            .with_model("m")
            .build()
            .unwrap(),
    );
    let task = tokio::spawn({
        let session = Arc::clone(&session);
        async move { read_all(session.events_of(session.send("hello"))).await }
    });
    let (events, ran) = task.await.unwrap();
    assert_eq!(ran.unwrap().text, "hi");
    assert_eq!(kinds(&events), ["request", "response"]);
    assert_eq!(session.transcript().await.len(), 2);
}

#[test]
fn every_event_goes_through_json_and_back_the_same() {
    use std::time::Duration;
    use toolsmith_core::Progress;
    use toolsmith_harness::agent::{ContextEstimate, DeniedBy, NotRunReason};
    use toolsmith_harness::model::{StopReason, Usage};

    let estimate = ContextEstimate::new(900, 100, 1_000);
    let events = [
        AgentEvent::ModelRequest {
            turn: 1,
            tools: vec!["shed".into()],
        },
        AgentEvent::TextDelta("Hel".into()),
        AgentEvent::ModelResponse {
            turn: 1,
            calls: 2,
            stop_reason: StopReason::Other("pause_turn".into()),
            usage: Usage::new(10, 3),
        },
        AgentEvent::ToolCallStarted {
            call_id: "c1".into(),
            name: "add".into(),
        },
        AgentEvent::ToolCallDenied {
            call_id: "c2".into(),
            name: "wipe".into(),
            by: DeniedBy::Approval,
            reason: "not now".into(),
        },
        AgentEvent::ToolCallNotRun {
            call_id: "c3".into(),
            name: String::new(),
            why: NotRunReason::RepeatedId,
            summary: "repeated".into(),
        },
        AgentEvent::ToolCallProgress(Progress {
            call_id: "c1".into(),
            tool: "add".into(),
            done: 0.5,
            total: Some(1.0),
            message: None,
        }),
        AgentEvent::ToolCallFinished {
            call_id: "c1".into(),
            name: "add".into(),
            duration: Duration::from_micros(1_500),
            is_error: false,
            summary: "5".into(),
        },
        AgentEvent::ContextShortened {
            turn: 2,
            attempt: 1,
            dropped: 4,
            emptied: 0,
            estimate: Some(estimate),
        },
        AgentEvent::ContextCompacted {
            turn: 3,
            summarized: 6,
            estimate,
        },
        AgentEvent::ImagesRemoved {
            turn: 2,
            removed: 1,
            image: Some(0),
            reason: "unreadable".into(),
        },
        AgentEvent::ImagesOverLimits {
            turn: 2,
            removed: vec!["[image removed]".into()],
        },
        AgentEvent::TurnFinished {
            turn: 1,
            usage: Usage::new(10, 3),
        },
        AgentEvent::SubAgent {
            agent: "agent-1".into(),
            event: Box::new(AgentEvent::SubAgent {
                agent: "call-2".into(),
                event: Box::new(AgentEvent::TurnFinished {
                    turn: 2,
                    usage: Usage::new(1, 1),
                }),
            }),
        },
    ];
    for event in events {
        let text = serde_json::to_string(&event).unwrap();
        let back: AgentEvent = serde_json::from_str(&text).unwrap();
        assert_eq!(back, event, "{text}");
    }
    let denied = serde_json::to_value(AgentEvent::ToolCallDenied {
        call_id: "c2".into(),
        name: "wipe".into(),
        by: DeniedBy::Hook,
        reason: "no".into(),
    })
    .unwrap();
    assert_eq!(
        denied,
        json!({"type": "tool_call_denied",
               "data": {"call_id": "c2", "name": "wipe", "by": "hook", "reason": "no"}})
    );
    let grandchilds = serde_json::to_value(AgentEvent::SubAgent {
        agent: "agent-1".into(),
        event: Box::new(AgentEvent::SubAgent {
            agent: "agent-2".into(),
            event: Box::new(AgentEvent::TextDelta("Hel".into())),
        }),
    })
    .unwrap();
    assert_eq!(
        grandchilds,
        json!({"type": "sub_agent", "data": {"agent": "agent-1", "event":
               {"type": "sub_agent", "data": {"agent": "agent-2", "event":
                {"type": "text_delta", "data": "Hel"}}}}})
    );
}

#[tokio::test]
async fn a_panic_in_a_wrapper_polled_inside_another_leaves_the_outer_stream_offered() {
    use futures::FutureExt as _;
    use std::panic::AssertUnwindSafe;

    let a = Recorded::default().session_over(
        AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("a's answer")])),
        ToolShed::new(),
    );
    let b = AgentSession::builder(ScriptedModel::new([]))
        .with_model("m")
        .build()
        .unwrap();
    let outer = a.events_of(async {
        // A wrapper of another session whose future panics before it starts a run, the
        // panic caught here as a `catch_unwind` (or tokio's task) catches it.
        let inner = b.events_of(async { panic!("before any run") });
        let caught = AssertUnwindSafe(inner.finish()).catch_unwind().await;
        assert!(caught.is_err());
        a.send("hello").await
    });
    let (events, ran) = read_all(outer).await;
    assert_eq!(ran.unwrap().text, "a's answer");
    assert_eq!(kinds(&events), ["request", "response"]);
}

#[tokio::test]
async fn a_panic_before_a_run_starts_leaves_no_offer_on_the_thread() {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::task::{Context, Waker};

    let a = AgentSession::builder(ScriptedModel::new([ScriptedTurn::text("plain")]))
        .with_model("m")
        .build()
        .unwrap();
    // The stream outlives the panic of its run's poll, caught by its caller.
    let mut events = a.events_of(async { panic!("before any run") });
    let mut cx = Context::from_waker(Waker::noop());
    let caught = catch_unwind(AssertUnwindSafe(|| events.poll_next_unpin(&mut cx)));
    assert!(caught.is_err());
    // A run of the session outside any wrapper, later on the same thread, is nobody's.
    assert_eq!(a.send("hello").await.unwrap().text, "plain");
    let debug = format!("{events:?}");
    assert!(debug.contains("queued: 0"), "{debug}");
}

/// A server moves a run's stream to a task, or shares it behind a lock: both need `Send`.
#[test]
fn a_runs_stream_is_send() {
    fn send<T: Send>(_: &T) {}
    let session = Arc::new(
        AgentSession::builder(ScriptedModel::new([]))
            .with_model("m")
            .build()
            .unwrap(),
    );
    let owned = Arc::clone(&session);
    let events = session.events_of(async move { owned.send("hello").await });
    send(&events);
    let typed = session.events_of(session.run_as::<String>("hello"));
    send(&typed);
}

/// A tool that answers "started" at once and reports progress 50 ms later, from a task it
/// handed its call's context to.
fn reports_late() -> FnTool {
    FnTool::new(
        "index",
        "Indexes in the background.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async {
            let context = ToolCallContext::current().expect("a call's context");
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                context.progress(1.0, None, "late");
            });
            Ok(ToolCallResult::text("started"))
        },
    )
}

/// A stream ends with its run: progress a tool's work reports after the run ended reaches
/// the session's handlers, not the ended run's stream (kept unread, it would queue them).
#[tokio::test]
async fn progress_reported_after_the_run_ended_reaches_the_handlers_not_the_ended_stream() {
    let recorded = Recorded::default();
    let session = recorded.session_over(
        AgentSession::builder(ScriptedModel::new([
            ScriptedTurn::call("index", json!({})),
            ScriptedTurn::text("indexing"),
        ])),
        ToolShed::new().tool(reports_late()),
    );
    session.tool_manager().activate(&["index".to_owned()]);
    let mut events = session.events_of(session.run("index it"));
    while events.next().await.is_some() {}
    let heard_late = || {
        recorded
            .0
            .lock()
            .unwrap()
            .iter()
            .any(|event| matches!(event, AgentEvent::ToolCallProgress(_)))
    };
    let waited = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while !heard_late() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the handlers never heard the late progress");
    let after_the_end = events.next().await;
    assert!(after_the_end.is_none(), "{after_the_end:?}");
    assert_eq!(events.finish().await.unwrap().text, "indexing");
}
