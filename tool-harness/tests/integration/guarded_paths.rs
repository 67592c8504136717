//! Every path by which a model's call reaches a tool's code passes the session's
//! `before_tool` hooks and its approval: a refusal means the tool did not run. And what an
//! `after_tool` hook redacts is nowhere kept unredacted (transcript, records, events, the next
//! request, a sub-agent's events).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::{
    Args, FnTool, ToolAnnotations, ToolArgs, ToolCallRequest, ToolCallResult, ToolError, ToolImpl,
    ToolRetryConfig, ToolShed, scheme,
};
use toolsmith_harness::ToolPreset;
use toolsmith_harness::agent::{
    AgentEvent, AgentSession, AgentTool, ApprovalDecision, HookDecision, PauseHandle,
    SubAgentConfig, ToolApproval, ToolHook,
};
use toolsmith_harness::model::{Message, ModelError, ScriptedModel, ScriptedTurn};

use crate::common::DecideFor;
use crate::common::recorded_events::tool_saying_it_ran;

fn destructive(tool: FnTool) -> FnTool {
    tool.with_annotations(ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    })
}

/// An approval that denies every call and records the ids of the calls it was asked about.
#[derive(Clone, Default)]
struct DenyAll(Arc<Mutex<Vec<String>>>);

impl DenyAll {
    fn asked(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

#[async_trait]
impl ToolApproval for DenyAll {
    async fn approve(&self, call: &ToolCallRequest) -> ApprovalDecision {
        self.0
            .lock()
            .unwrap()
            .push(format!("{}:{}", call.id, call.name));
        ApprovalDecision::Deny("denied by the user".into())
    }
}

/// The text of each tool result in `messages`, in order.
fn results_in(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .flat_map(Message::results)
        .map(|result| result.result.content.to_text())
        .collect()
}

#[tokio::test]
async fn a_batch_of_destructive_calls_asks_for_each_and_runs_only_those_approved() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::calls([
            ("wipe", json!({})),
            ("wipe", json!({})),
            ("ping", json!({})),
            ("wipe", json!({})),
        ]),
        ScriptedTurn::text("done"),
    ]);
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(
            ToolShed::new()
                .tool(destructive(tool_saying_it_ran("wipe", Arc::clone(&runs))))
                .tool(tool_saying_it_ran("ping", Arc::clone(&runs))),
        )
        .with_every_tool_declared(true)
        .with_hook(DecideFor {
            tool: "ping",
            decision: HookDecision::Deny("no pings".into()),
        })
        // Approves the second call alone.
        .with_approval(move |call: &ToolCallRequest| {
            let mut seen = seen.lock().unwrap();
            seen.push(call.id.clone());
            seen.len() == 2
        })
        .build()
        .unwrap();
    let run = session.run("go").await.unwrap();
    assert_eq!(asked.lock().unwrap().len(), 3);
    // One wipe approved, the ping denied by the hook, the others by the approval.
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let results = results_in(&run.transcript);
    assert!(results[0].contains("did not approve"), "{results:?}");
    assert_eq!(results[1], "wipe ran");
    assert!(results[2].contains("no pings"), "{results:?}");
    assert!(results[3].contains("did not approve"), "{results:?}");
}

#[tokio::test]
async fn a_retried_call_is_approved_once_and_a_denied_one_is_never_tried() {
    // Fails with a network error the first time: the retry policy tries it again.
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let flaky = destructive(FnTool::new(
        "upload",
        "Uploads.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            let attempt = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                if attempt == 0 {
                    Err(ToolError::network("upload", "connection reset"))
                } else {
                    Ok(ToolCallResult::text("uploaded"))
                }
            }
        },
    ));
    let policy = ToolRetryConfig::fixed(2, std::time::Duration::from_millis(1));
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    let model = ScriptedModel::new([
        ScriptedTurn::call("upload", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(flaky))
        .with_every_tool_declared(true)
        .with_retry_policy(policy)
        .with_approval(move |_: &ToolCallRequest| {
            count.fetch_add(1, Ordering::SeqCst);
            true
        })
        .build()
        .unwrap();
    let run = session.run("upload").await.unwrap();
    // The approval is for the call: its attempts are not asked about again.
    assert_eq!(run.tool_calls[0].attempts, 2);
    assert_eq!(run.tool_calls[0].result.content.to_text(), "uploaded");
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // A denied call is not tried at all, retry policy or not.
    let model = ScriptedModel::new([
        ScriptedTurn::call("upload", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let deny = DenyAll::default();
    let runs_again = Arc::new(AtomicUsize::new(0));
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(destructive(tool_saying_it_ran(
            "upload",
            Arc::clone(&runs_again),
        ))))
        .with_every_tool_declared(true)
        .with_retry_policy(ToolRetryConfig::fixed(
            2,
            std::time::Duration::from_millis(1),
        ))
        .with_approval(deny.clone())
        .build()
        .unwrap();
    let run = session.run("upload").await.unwrap();
    assert_eq!(run.tool_calls[0].attempts, 0);
    assert_eq!(runs_again.load(Ordering::SeqCst), 0);
    assert_eq!(deny.asked().len(), 1);
}

/// A store of files: listing reads, `wipe` destroys. Counts the wipes.
#[derive(Default)]
struct Files {
    wiped: AtomicUsize,
}

/// The files of the project.
#[toolsmith_core::tool_fn(name = "files")]
impl Files {
    /// List the files.
    #[command(read_only)]
    fn list(&self) -> String {
        "a.txt".to_owned()
    }

    /// Delete every file.
    #[command(destructive)]
    fn wipe(&self) -> String {
        self.wiped.fetch_add(1, Ordering::SeqCst);
        "wiped".to_owned()
    }
}

#[tokio::test]
async fn a_command_group_puts_its_destructive_command_to_the_approval_not_its_read_only_one() {
    let files = Arc::new(Files::default());
    let model = ScriptedModel::new([
        ScriptedTurn::call("files", json!({"command": "list"}))
            .and_call("files", json!({"command": "wipe"})),
        ScriptedTurn::text("done"),
    ]);
    let deny = DenyAll::default();
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(vec![Arc::clone(&files) as Arc<dyn ToolImpl>]))
        .with_every_tool_declared(true)
        .with_approval(deny.clone())
        .build()
        .unwrap();
    let run = session.run("clean").await.unwrap();
    // Asked for the command that destroys, by the command's annotations, not the group's.
    assert_eq!(deny.asked().len(), 1, "{:?}", deny.asked());
    assert_eq!(files.wiped.load(Ordering::SeqCst), 0);
    let results = results_in(&run.transcript);
    assert_eq!(results[0], "a.txt");
    assert!(results[1].contains("denied by the user"), "{results:?}");
}

/// An approval that, asked about `wipe`, says so on `asking` and waits for `gate` before it
/// denies; it records every call it is asked about.
struct WaitsOnWipe {
    asking: Arc<tokio::sync::Notify>,
    gate: Arc<tokio::sync::Notify>,
    asked: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl ToolApproval for WaitsOnWipe {
    async fn approve(&self, call: &ToolCallRequest) -> ApprovalDecision {
        self.asked.lock().unwrap().push(call.name.clone());
        if call.name == "wipe" {
            self.asking.notify_one();
            self.gate.notified().await;
        }
        ApprovalDecision::Deny("denied by the user".into())
    }
}

#[tokio::test]
async fn a_tool_another_run_finds_while_the_approval_waits_is_not_run_unapproved() {
    // Run A's answer calls `hidden` (destructive, not offered yet: nobody is asked about a
    // call the batch will refuse) and `wipe`, whose approval waits on a person. Meanwhile
    // run B of the same session (runs do not wait for each other) finds `hidden` with
    // `shed`. A's call to `hidden` must not then run without anyone having approved it.
    let hidden_runs = Arc::new(AtomicUsize::new(0));
    let wipe_runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        // Run A's first request.
        ScriptedTurn::call("hidden", json!({})).and_call("wipe", json!({})),
        // Run B's two.
        ScriptedTurn::call("shed", json!({"description": "select:hidden"})),
        ScriptedTurn::text("B done"),
        // Run A's second.
        ScriptedTurn::text("A done"),
    ]);
    let (asking, gate) = (Arc::default(), Arc::new(tokio::sync::Notify::new()));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(
            ToolShed::new()
                .tool(destructive(tool_saying_it_ran(
                    "hidden",
                    Arc::clone(&hidden_runs),
                )))
                .tool(destructive(tool_saying_it_ran(
                    "wipe",
                    Arc::clone(&wipe_runs),
                ))),
        )
        .with_approval(WaitsOnWipe {
            asking: Arc::clone(&asking),
            gate: Arc::clone(&gate),
            asked: Arc::clone(&asked),
        })
        .build()
        .unwrap();
    session.tool_manager().activate(&["wipe".into()]);
    let (a, ()) = tokio::join!(session.run("A"), async {
        asking.notified().await;
        let b = session.run("B").await.unwrap();
        assert_eq!(b.text, "B done");
        assert!(session.tool_manager().is_active("hidden"));
        gate.notify_one();
    });
    let a = a.unwrap();
    assert_eq!(wipe_runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        hidden_runs.load(Ordering::SeqCst),
        0,
        "`hidden` ran though nobody approved it (asked: {:?}); it answered {:?}",
        asked.lock().unwrap(),
        a.tool_calls[0].result.content.to_text()
    );
    // Refused as a tool not offered when the call was decided, as it was then.
    assert!(a.tool_calls[0].result.is_error(), "{:?}", a.tool_calls[0]);
    assert_eq!(*asked.lock().unwrap(), ["wipe"]);
    assert_eq!(a.text, "A done");
    model.assert_complete();
}

/// A tool that destroys, counting its runs in `runs`.
fn erase(runs: &Arc<AtomicUsize>) -> Arc<dyn ToolImpl> {
    Arc::new(destructive(tool_saying_it_ran("erase", Arc::clone(runs))))
}

#[tokio::test]
async fn a_grandchild_s_calls_pass_the_top_session_s_hooks_and_approval() {
    // One script serves child and grandchild, answering by the request's task.
    let erased = Arc::new(AtomicUsize::new(0));
    let sub_model = ScriptedModel::new([]);
    let script = |request: &toolsmith_harness::model::ChatRequest| {
        let task = request.messages[0].text().unwrap_or_default().to_owned();
        let answered = request.messages.len() > 1;
        let call = |name: &str, arguments: serde_json::Value| {
            toolsmith_harness::model::ChatResponse::calls(vec![Ok(ToolCallRequest::new(
                format!("{task}-{name}-{}", request.messages.len()),
                name,
                arguments.try_into().unwrap(),
            ))])
        };
        Ok(match (task.as_str(), answered) {
            ("child task", false) => call(
                "agent",
                json!({"command": "start", "task": "grandchild task"}),
            ),
            ("child task", true) if request.messages.len() == 3 => call(
                "agent",
                json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
            ),
            ("grandchild task", false) => call("erase", json!({})),
            _ => toolsmith_harness::model::ChatResponse::text("done"),
        })
    };
    for _ in 0..8 {
        sub_model.push([ScriptedTurn::respond(script)]);
    }
    let config = SubAgentConfig::new(sub_model.clone(), "sub")
        .with_tools(vec![erase(&erased)])
        .with_max_depth(2);
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("agent", json!({"command": "start", "task": "child task"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::text("all done"),
    ]);
    let deny = DenyAll::default();
    let parent = AgentSession::builder(parent_model)
        .with_model("parent")
        .with_toolshed(ToolShed::new().tools(ToolPreset::agent(config)))
        .with_every_tool_declared(true)
        .with_approval(deny.clone())
        .build()
        .unwrap();
    let run = parent.run("delegate").await.unwrap();
    assert_eq!(run.text, "all done");
    assert_eq!(erased.load(Ordering::SeqCst), 0);
    // The grandchild's call was put to the top session's approval.
    assert!(
        deny.asked().iter().any(|asked| asked.ends_with(":erase")),
        "{:?}",
        deny.asked()
    );
    let grandchild_results: Vec<String> = sub_model
        .requests()
        .iter()
        .filter(|request| request.messages[0].text() == Some("grandchild task"))
        .flat_map(|request| results_in(&request.messages))
        .collect();
    assert!(
        grandchild_results
            .iter()
            .any(|result| result.contains("denied by the user")),
        "{grandchild_results:?}"
    );
}

#[tokio::test]
async fn an_agent_tool_s_session_is_held_by_its_own_hooks_and_approval() {
    // The agent inside the call is a session of its own: its own approval holds it (the
    // caller's hooks and approval hold the call to the agent tool itself).
    let erased = Arc::new(AtomicUsize::new(0));
    let inner_model = ScriptedModel::new([
        ScriptedTurn::call("erase", json!({})),
        ScriptedTurn::text("could not erase"),
    ]);
    let deny = DenyAll::default();
    let inner = AgentSession::builder(inner_model.clone())
        .with_model("inner")
        .with_toolshed(ToolShed::new().tools(vec![erase(&erased)]))
        .with_every_tool_declared(true)
        .with_approval(deny.clone())
        .build()
        .unwrap();
    let outer_model = ScriptedModel::new([
        ScriptedTurn::call("cleaner", json!({"input": "erase it"})),
        ScriptedTurn::call("cleaner", json!({"input": "erase it again"})),
        ScriptedTurn::text("done"),
    ]);
    let outer = AgentSession::builder(outer_model)
        .with_model("outer")
        .with_toolshed(ToolShed::new().tools(vec![Arc::new(AgentTool::new(
            Arc::new(inner),
            "cleaner",
            "Cleans up.",
        )) as Arc<dyn ToolImpl>]))
        .with_every_tool_declared(true)
        // The second call to the agent is denied: the inner agent does not run.
        .with_hook(DenyNth(AtomicUsize::new(0), 2))
        .build()
        .unwrap();
    let run = outer.run("clean").await.unwrap();
    assert_eq!(erased.load(Ordering::SeqCst), 0);
    assert_eq!(deny.asked().len(), 1);
    assert_eq!(
        run.tool_calls[0].result.content.to_text(),
        "could not erase"
    );
    assert_eq!(run.tool_calls[1].denied.as_deref(), Some("second call"));
    assert_eq!(inner_model.requests().len(), 2);
}

/// A `before_tool` hook that denies the `n`-th call it sees (from 1).
struct DenyNth(AtomicUsize, usize);

#[async_trait]
impl ToolHook for DenyNth {
    async fn before_tool(&self, _: &ToolCallRequest) -> HookDecision {
        if self.0.fetch_add(1, Ordering::SeqCst) + 1 == self.1 {
            HookDecision::Deny("second call".into())
        } else {
            HookDecision::Allow
        }
    }
}

/// A session over `model` with a destructive `wipe` counting in `runs`, declared from the
/// start, and `deny` as its approval.
fn wipe_session(
    model: &ScriptedModel,
    runs: &Arc<AtomicUsize>,
    deny: &DenyAll,
) -> toolsmith_harness::agent::AgentSessionBuilder {
    AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(
            ToolShed::new().tool(destructive(tool_saying_it_ran("wipe", Arc::clone(runs)))),
        )
        .with_every_tool_declared(true)
        .with_approval(deny.clone())
}

#[tokio::test]
async fn a_typed_answer_runs_its_calls_through_the_approval_and_its_own_exchange_runs_none() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::call("wipe", json!({})),
        ScriptedTurn::text("Nothing was wiped."),
        // Asked for the typed answer, the model also calls `wipe`: not run.
        ScriptedTurn::call("wipe", json!({})).and_call("final_answer", json!({"answer": 0})),
    ]);
    let deny = DenyAll::default();
    let session = wipe_session(&model, &runs, &deny).build().unwrap();
    let typed = session
        .send_as::<u32>("wipe, and say how many")
        .await
        .unwrap();
    assert_eq!(typed.value, 0);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(deny.asked().len(), 1);
    model.assert_complete();
}

#[tokio::test]
async fn a_streamed_run_passes_the_hooks_and_the_approval() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::call("wipe", json!({})).with_text("Wiping."),
        ScriptedTurn::text("Not allowed."),
    ]);
    let deny = DenyAll::default();
    let session = wipe_session(&model, &runs, &deny)
        .with_streaming(true)
        .build()
        .unwrap();
    let run = session.run("wipe").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(deny.asked().len(), 1);
    assert_eq!(run.text, "Not allowed.");
}

#[tokio::test]
async fn a_resumed_session_and_one_continued_after_a_model_error_pass_the_approval() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::error(ModelError::Other("the model is down".into())),
        ScriptedTurn::call("wipe", json!({})),
        ScriptedTurn::text("Not allowed."),
    ]);
    let deny = DenyAll::default();
    let pause = PauseHandle::new();
    let session = wipe_session(&model, &runs, &deny)
        .with_pause(pause.clone())
        .build()
        .unwrap();
    session.send("wipe").await.unwrap_err();
    // Paused before the next send, resumed while it waits.
    pause.pause();
    let (run, ()) = tokio::join!(session.send("again"), async {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        assert!(
            model.requests().len() == 1,
            "a paused session made a model call"
        );
        pause.resume();
    });
    assert_eq!(run.unwrap().text, "Not allowed.");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(deny.asked().len(), 1);
}

#[cfg(feature = "mcp")]
#[tokio::test]
async fn a_remote_tool_said_nothing_about_is_put_to_the_approval_and_does_not_run_denied() {
    use toolsmith_core::ToolCallManager;

    // The server's `purge` says nothing of what it does (MCP: it may destroy); its `peek`
    // says it only reads.
    let (purged, peeked) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let served = Arc::new(ToolCallManager::new("remote"));
    served
        .register(Arc::new(tool_saying_it_ran("purge", Arc::clone(&purged))))
        .unwrap();
    served
        .register(Arc::new(
            tool_saying_it_ran("peek", Arc::clone(&peeked)).with_annotations(ToolAnnotations {
                read_only: Some(true),
                ..ToolAnnotations::default()
            }),
        ))
        .unwrap();
    let (client, serving) = crate::mcp::our_client_of(served, "remote").await;
    let bridges: Vec<Arc<dyn ToolImpl>> = client
        .tools()
        .into_iter()
        .map(|tool| Arc::new(tool) as Arc<dyn ToolImpl>)
        .collect();

    let model = ScriptedModel::new([
        ScriptedTurn::call("purge", json!({})).and_call("peek", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let deny = DenyAll::default();
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tools(bridges))
        .with_every_tool_declared(true)
        .with_approval(deny.clone())
        .build()
        .unwrap();
    let run = session.run("purge").await.unwrap();
    assert_eq!(deny.asked().len(), 1, "{:?}", deny.asked());
    assert!(deny.asked()[0].ends_with(":purge"), "{:?}", deny.asked());
    assert_eq!(purged.load(Ordering::SeqCst), 0);
    assert_eq!(peeked.load(Ordering::SeqCst), 1);
    assert!(
        run.tool_calls[0]
            .result
            .content
            .to_text()
            .contains("denied by the user")
    );
    client.close().await;
    serving.await.unwrap().unwrap();
}

/// An `after_tool` hook that redacts the password from every result.
struct Redact;

#[async_trait]
impl ToolHook for Redact {
    async fn after_tool(&self, _: &ToolCallRequest, result: &mut ToolCallResult) {
        let text = result.content.to_text();
        if text.contains("hunter2") {
            let redacted = text.replace("hunter2", "[redacted]");
            *result = if result.is_error() {
                ToolCallResult::error(redacted)
            } else {
                ToolCallResult::text(redacted)
            };
        }
    }
}

/// `secret` answers the password; `leaky` fails with an error that quotes it.
fn secret_tools() -> Vec<Arc<dyn ToolImpl>> {
    let secret = FnTool::new(
        "secret",
        "Reads the password.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("the password is hunter2")) },
    );
    let leaky = FnTool::new(
        "leaky",
        "Logs in.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async { Err(ToolError::execution("leaky", "hunter2 was refused")) },
    );
    vec![Arc::new(secret), Arc::new(leaky)]
}

#[tokio::test]
async fn a_redacted_result_is_kept_nowhere_unredacted_a_child_s_included() {
    let child_model = ScriptedModel::new([
        ScriptedTurn::call("secret", json!({})).and_call("leaky", json!({})),
        ScriptedTurn::text("the child read it"),
    ]);
    let config = SubAgentConfig::new(child_model.clone(), "child").with_tools(secret_tools());
    let parent_model = ScriptedModel::new([
        ScriptedTurn::call("secret", json!({})).and_call("leaky", json!({})),
        ScriptedTurn::call("agent", json!({"command": "start", "task": "read it"})),
        ScriptedTurn::call(
            "agent",
            json!({"command": "result", "id": "agent-1", "wait_ms": 5000}),
        ),
        ScriptedTurn::call("agent", json!({"command": "check", "id": "agent-1"})),
        ScriptedTurn::text("done"),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let session = AgentSession::builder(parent_model.clone())
        .with_model("parent")
        .with_toolshed(
            ToolShed::new()
                .tools(secret_tools())
                .tools(ToolPreset::agent(config)),
        )
        .with_every_tool_declared(true)
        .with_hook(Redact)
        .with_event_handler(move |event: &AgentEvent| sink.lock().unwrap().push(event.clone()))
        .build()
        .unwrap();
    let run = session.send("read the password").await.unwrap();
    assert_eq!(run.text, "done");
    let results = results_in(&run.transcript);
    assert_eq!(results[0], "the password is [redacted]");
    assert!(results[1].contains("[redacted] was refused"), "{results:?}");

    let kept = session.transcript().await;
    let events = events.lock().unwrap().clone();
    assert!(
        events
            .iter()
            .any(|event| matches!(event, AgentEvent::SubAgent { .. })),
        "the child's events came"
    );
    let everywhere = [
        format!("{:?}", run.transcript),
        format!("{:?}", run.tool_calls),
        format!("{kept:?}"),
        format!("{events:?}"),
        format!("{:?}", parent_model.requests()),
        format!("{:?}", child_model.requests()),
    ];
    for (place, text) in [
        "transcript",
        "records",
        "kept",
        "events",
        "parent's requests",
        "child's requests",
    ]
    .iter()
    .zip(&everywhere)
    {
        assert!(
            !text.contains("hunter2"),
            "the password is in the {place}: {text}"
        );
        assert!(
            text.contains("[redacted]"),
            "nothing redacted in the {place}"
        );
    }
}

/// A `before_tool` hook that denies a recursive `delete`, reading the argument as the tool's
/// schema declares it: a boolean.
struct NoRecursiveDelete;

#[async_trait]
impl ToolHook for NoRecursiveDelete {
    async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
        if call.name == "delete" && call.arguments.get("recursive") == Some(&json!(true)) {
            HookDecision::Deny("no recursive deletes".into())
        } else {
            HookDecision::Allow
        }
    }
}

#[tokio::test]
async fn a_hook_sees_the_arguments_the_tool_will_read_not_a_spelling_validation_repairs() {
    // The model spells the boolean as a string: validation repairs it to `true`, which the
    // tool reads. The hook must see it as the tool will, or the model walks past it.
    let recursive_deletes = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&recursive_deletes);
    let delete = FnTool::new(
        "delete",
        "Deletes a path.",
        Args::new(
            scheme::object()
                .required("path", scheme::string())
                .optional("recursive", scheme::boolean())
                .build(),
        ),
        move |args: ToolArgs<'_>| {
            let recursive = args.opt_bool("recursive").ok().flatten() == Some(true);
            if recursive {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            async move {
                Ok(ToolCallResult::text(format!(
                    "deleted (recursive: {recursive})"
                )))
            }
        },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::call("delete", json!({"path": "/", "recursive": "true"})),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(delete))
        .with_every_tool_declared(true)
        .with_hook(NoRecursiveDelete)
        .build()
        .unwrap();
    let run = session.run("delete everything").await.unwrap();
    assert_eq!(
        recursive_deletes.load(Ordering::SeqCst),
        0,
        "the hook let a recursive delete through: {:?}",
        run.tool_calls[0]
    );
    assert_eq!(
        run.tool_calls[0].denied.as_deref(),
        Some("no recursive deletes")
    );
    // The record holds the arguments as the hook saw them.
    assert_eq!(
        run.tool_calls[0].arguments.as_value(),
        &json!({"path": "/", "recursive": true})
    );
}

/// Denies a `resize` to a depth of 0, judged as a hook naturally reads an integer.
struct NoDepthZero;

#[async_trait]
impl ToolHook for NoDepthZero {
    async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
        let depth = call.arguments.get("depth").and_then(Value::as_i64);
        if call.name == "resize" && depth == Some(0) {
            HookDecision::Deny("not to depth 0".into())
        } else {
            HookDecision::Allow
        }
    }
}

#[tokio::test]
async fn a_hook_sees_a_whole_float_as_the_integer_the_tool_reads() {
    // `0.0` validates as an integer and the tool reads it as 0; a hook reading the integer
    // (`as_i64`, or comparing with `json!(0)`) saw a float and let it by.
    let zero_depths = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&zero_depths);
    let resize = FnTool::new(
        "resize",
        "Resizes to a depth.",
        Args::new(
            scheme::object()
                .required("depth", scheme::integer())
                .optional("scale", scheme::number())
                .build(),
        ),
        move |args: ToolArgs<'_>| {
            if args.i64("depth").ok() == Some(0) {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            async move { Ok(ToolCallResult::text("resized")) }
        },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::call("resize", json!({"depth": 0.0, "scale": 2.0})),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model)
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(resize))
        .with_every_tool_declared(true)
        .with_hook(NoDepthZero)
        .build()
        .unwrap();
    let run = session.run("flatten it").await.unwrap();
    assert_eq!(
        zero_depths.load(Ordering::SeqCst),
        0,
        "{:?}",
        run.tool_calls[0]
    );
    assert_eq!(run.tool_calls[0].denied.as_deref(), Some("not to depth 0"));
    assert_eq!(
        run.tool_calls[0].arguments.as_value(),
        &json!({"depth": 0, "scale": 2})
    );
}

#[tokio::test]
async fn a_call_the_hooks_let_run_reaches_its_tool_with_its_floats_as_sent() {
    // The hooks judge `2.0` as the integer 2, but the tool is given what a session without
    // hooks gives it: a free-form argument keeps the float the model wrote.
    let given = Arc::new(Mutex::new(Vec::new()));
    let store = || {
        let kept = Arc::clone(&given);
        FnTool::new(
            "store",
            "Stores a raw value at a depth.",
            Args::new(
                scheme::object()
                    .required("depth", scheme::integer())
                    .required("raw", json!({}))
                    .build(),
            ),
            move |args: ToolArgs<'_>| {
                kept.lock()
                    .unwrap()
                    .push(args.arguments().as_value().clone());
                async move { Ok(ToolCallResult::text("stored")) }
            },
        )
    };
    let arguments = json!({"depth": 1.0, "raw": 2.0});
    for hooked in [false, true] {
        let model = ScriptedModel::new([
            ScriptedTurn::call("store", arguments.clone()),
            ScriptedTurn::text("done"),
        ]);
        let mut builder = AgentSession::builder(model)
            .with_model("m")
            .with_toolshed(ToolShed::new().tool(store()))
            .with_every_tool_declared(true);
        if hooked {
            builder = builder.with_hook(NoDepthZero);
        }
        let run = builder.build().unwrap().run("store it").await.unwrap();
        assert_eq!(run.tool_calls[0].denied, None);
        assert_eq!(
            run.tool_calls[0].arguments.as_value(),
            &arguments,
            "hooked: {hooked}"
        );
    }
    let given = given.lock().unwrap();
    assert_eq!(given.len(), 2);
    assert_eq!(given[0], arguments);
    assert_eq!(
        given[1], arguments,
        "the hooked session's tool got {}",
        given[1]
    );
}
