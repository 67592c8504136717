//! Observability: the spans a user's subscriber sees for one run (their names, fields and
//! parents) and the events it is told, recorded by [`TraceTree`].

use std::sync::Arc;

use serde_json::json;
use toolsmith_core::{Args, FnTool, ToolArgs, ToolCallResult, ToolImpl, ToolShed, scheme};
use toolsmith_harness::agent::{AgentSession, AgentTool};
use toolsmith_harness::model::{ScriptedModel, ScriptedTurn};

use crate::common::trace_tree::TraceTree;

fn text_tool(name: &str, answer: &'static str) -> Arc<dyn ToolImpl> {
    Arc::new(FnTool::new(
        name,
        format!("The {name} tool."),
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| async move { Ok(ToolCallResult::text(answer)) },
    ))
}

/// An `AgentTool`'s run goes on a task of its own; its spans still sit under the parent's
/// call of the tool, as the run sits under the call.
#[tokio::test]
async fn an_agent_tools_run_is_traced_under_the_call_that_started_it() {
    let trace = TraceTree::default();
    let _guard = tracing::subscriber::set_default(trace.subscriber());
    let child = AgentSession::builder(ScriptedModel::new([
        ScriptedTurn::call("lookup", json!({})),
        ScriptedTurn::text("found it"),
    ]))
    .with_model("child-model")
    .with_toolshed(ToolShed::new().tool(text_tool("lookup", "a hit")))
    .build()
    .unwrap();
    child.tool_manager().activate(&["lookup".into()]);
    let research: Arc<dyn ToolImpl> =
        Arc::new(AgentTool::new(Arc::new(child), "research", "Researches."));
    let parent = AgentSession::builder(ScriptedModel::new([
        ScriptedTurn::call("research", json!({"input": "find it"})),
        ScriptedTurn::text("done"),
    ]))
    .with_model("parent-model")
    .with_toolshed(ToolShed::new().tool(research))
    .build()
    .unwrap();
    parent.tool_manager().activate(&["research".into()]);
    parent.run("delegate").await.unwrap();

    let spans = trace.spans();
    let runs = trace.named("invoke_agent");
    assert_eq!(runs.len(), 2, "{spans:#?}");
    let child_run = runs
        .iter()
        .copied()
        .find(|&run| spans[run].field("gen_ai.request.model") == Some("child-model"))
        .expect("the child's run has a span");
    assert_eq!(
        trace.path(child_run),
        ["invoke_agent", "execute_tool", "invoke_agent"],
        "{spans:#?}"
    );
    let call = spans[child_run].parent.unwrap();
    assert_eq!(spans[call].field("gen_ai.tool.name"), Some("research"));
    // The child's own model call and tool call sit under its run.
    let lookup = trace
        .named("execute_tool")
        .into_iter()
        .find(|&span| spans[span].field("gen_ai.tool.name") == Some("lookup"))
        .expect("the child's call has a span");
    assert_eq!(
        trace.path(lookup),
        [
            "execute_tool",
            "invoke_agent",
            "execute_tool",
            "invoke_agent"
        ]
    );
    let child_chats = trace
        .named("chat")
        .into_iter()
        .filter(|&span| spans[span].parent == Some(child_run))
        .count();
    assert_eq!(child_chats, 2, "{spans:#?}");
}
