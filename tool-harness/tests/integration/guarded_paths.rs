//! Every path by which a model's call reaches a tool's code passes the session's
//! `before_tool` hooks and its approval: a refusal means the tool did not run. And what an
//! `after_tool` hook redacts is nowhere kept unredacted (transcript, records, events, the next
//! request, a sub-agent's events).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use toolsmith_core::{
    Args, FnTool, ToolAnnotations, ToolArgs, ToolCallRequest, ToolCallResult, ToolShed, scheme,
};
use toolsmith_harness::agent::{AgentSession, ApprovalDecision, ToolApproval};
use toolsmith_harness::model::{ScriptedModel, ScriptedTurn};

/// A tool counting its runs in `runs`, answering `"<name> ran"`.
fn counting(name: &str, runs: &Arc<AtomicUsize>) -> FnTool {
    let (runs, answer) = (Arc::clone(runs), format!("{name} ran"));
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

fn destructive(tool: FnTool) -> FnTool {
    tool.with_annotations(ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    })
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
                .tool(destructive(counting("hidden", &hidden_runs)))
                .tool(destructive(counting("wipe", &wipe_runs))),
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
