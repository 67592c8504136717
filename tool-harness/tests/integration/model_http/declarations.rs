//! A tool an API cannot be declared is refused before the run (`ChatModel::check_declarations`):
//! Gemini's function declarations cannot express recursion, so a session holding a recursive
//! tool fails at `build()`, and a typed answer of a recursive type before its first request.
//! A tool Gemini's OpenAPI subset cannot say (a map, a value of any type) is declared to it in
//! JSON Schema.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use toolsmith_core::{ToolShed, tool_fn};
use toolsmith_harness::agent::{AgentSession, AgenticError, FINAL_ANSWER_TOOL};
use toolsmith_harness::model::{ChatModel, ChatRequest, ChatResponse, ModelError};

use super::server::{MockServer, Reply};
use super::{Api, Client};

/// A node of a tree: its schema refers to itself.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Node {
    name: String,
    children: Vec<Node>,
}

/// Plant a tree.
#[tool_fn]
fn plant_tree(
    /// The tree.
    root: Node,
) -> String {
    format!("{} with {} branches", root.name, root.children.len())
}

/// Count to three.
#[tool_fn]
fn count_to_three() -> u32 {
    3
}

/// Set environment variables.
#[tool_fn]
fn set_env(
    /// The variables, by name.
    vars: HashMap<String, String>,
    /// A note of any shape, kept with them.
    note: serde_json::Value,
) -> String {
    format!("{} set ({note})", vars.len())
}

/// Repeat a text.
#[tool_fn]
fn repeat(
    /// The text.
    text: String,
    /// How many times.
    times: u32,
) -> String {
    text.repeat(times as usize)
}

#[tokio::test]
async fn gemini_is_sent_a_map_and_an_untyped_value_in_json_schema() {
    let api = Api::Gemini;
    let server = MockServer::start([Reply::json(200, &api.text_answer("Done."))]).await;
    let session = AgentSession::builder(api.model(&server.base, &Client::default()))
        .with_model(api.model_name())
        .with_toolshed(
            ToolShed::new()
                .tool(Arc::new(SetEnv))
                .tool(Arc::new(Repeat)),
        )
        .with_every_tool_declared(true)
        .build()
        .unwrap();
    let run = session.send("Set HOME to /root.").await.unwrap();
    assert_eq!(run.text, "Done.");
    let requests = server.requests();
    let declarations = requests[0].body["tools"][0]["functionDeclarations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let declared = |name: &str| {
        declarations
            .iter()
            .find(|d| d["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not declared: {declarations:#?}"))
    };
    // The subset has no keyword for a map's values, nor a schema without `type`.
    let set_env = declared("set_env");
    assert_eq!(set_env.get("parameters"), None, "{set_env:#}");
    assert_eq!(
        set_env["parametersJsonSchema"],
        serde_json::json!({
            "type": "object",
            "properties": {
                "vars": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "The variables, by name."
                },
                "note": {"description": "A note of any shape, kept with them."}
            },
            "required": ["vars"],
            "additionalProperties": false
        })
    );
    // A tool the subset says whole is declared in it, beside.
    let repeat = declared("repeat");
    assert_eq!(repeat.get("parametersJsonSchema"), None, "{repeat:#}");
    assert_eq!(
        repeat["parameters"]["properties"]["times"]["type"], "integer",
        "{repeat:#}"
    );
}

/// A session of `model` holding `count_to_three` and the recursive `plant_tree` (which
/// `shed` does not offer until it is found).
fn with_recursive_tool(
    model: impl ChatModel + 'static,
    name: &str,
) -> Result<AgentSession, AgenticError> {
    AgentSession::builder(model)
        .with_model(name)
        .with_toolshed(
            ToolShed::new()
                .tool(Arc::new(CountToThree))
                .tool(Arc::new(PlantTree)),
        )
        .build()
}

#[tokio::test]
async fn gemini_refuses_a_recursive_tool_at_build_naming_it() {
    let server = MockServer::start([]).await;
    let api = Api::Gemini;
    let err = with_recursive_tool(
        api.model(&server.base, &Client::default()),
        api.model_name(),
    )
    .expect_err("a recursive tool cannot be declared to Gemini");
    let AgenticError::Config(message) = &err else {
        panic!("not a configuration error: {err:?}");
    };
    assert!(message.contains("'plant_tree'"), "{message}");
    assert!(message.contains("gemini"), "{message}");
    assert!(message.contains("recursion"), "{message}");
    assert!(server.requests().is_empty());

    // The other APIs declare it (non-strict where strict mode cannot hold it).
    for api in [Api::Chat, Api::Responses, Api::Anthropic] {
        with_recursive_tool(
            api.model(&server.base, &Client::default()),
            api.model_name(),
        )
        .unwrap_or_else(|err| panic!("{api:?}: {err}"));
    }
}

#[tokio::test]
async fn gemini_refuses_a_recursive_typed_answer_before_any_request() {
    let server = MockServer::start([]).await;
    let api = Api::Gemini;
    let session = AgentSession::builder(api.model(&server.base, &Client::default()))
        .with_model(api.model_name())
        .build()
        .unwrap();
    let err = session.send_as::<Vec<Node>>("A tree?").await.unwrap_err();
    let AgenticError::Config(message) = &err else {
        panic!("not a configuration error: {err:?}");
    };
    assert!(message.contains("Vec<"), "{message}");
    assert!(message.contains("Node>"), "{message}");
    assert!(message.contains(FINAL_ANSWER_TOOL), "{message}");
    assert!(message.contains("recursion"), "{message}");
    assert!(server.requests().is_empty(), "no model call is made");
    assert!(session.transcript().await.is_empty());
}

/// A client of the user's own, written before `check_declarations` existed: `name` and
/// `complete` only.
struct Plain;

#[async_trait]
impl ChatModel for Plain {
    fn name(&self) -> &str {
        "plain"
    }

    async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Ok(ChatResponse::text("Planted."))
    }
}

#[tokio::test]
async fn a_model_without_the_check_takes_every_tool() {
    let session = with_recursive_tool(Plain, "plain").unwrap();
    let run = session.send("Plant a tree.").await.unwrap();
    assert_eq!(run.text, "Planted.");
}

/// A client whose check panics.
struct PanickingCheck;

#[async_trait]
impl ChatModel for PanickingCheck {
    fn name(&self) -> &str {
        "panicking"
    }

    async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Ok(ChatResponse::text("unused"))
    }

    fn check_declarations(&self, _: &[&toolsmith_core::Tool]) -> Result<(), ModelError> {
        panic!("the check broke")
    }
}

#[tokio::test]
async fn a_check_that_panics_is_a_configuration_error() {
    let err = with_recursive_tool(PanickingCheck, "panicking")
        .expect_err("the check's panic fails the build");
    let AgenticError::Config(message) = &err else {
        panic!("not a configuration error: {err:?}");
    };
    assert!(message.contains("panicked: the check broke"), "{message}");
}
