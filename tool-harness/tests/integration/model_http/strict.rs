//! Strict mode through the clients: a tool that cannot be strict is sent non-strict, with a
//! warning naming it, and never fails the request.

use serde_json::json;
use toolsmith_core::provider::StrictMode;
use toolsmith_core::{Args, Tool, ToolDeclarations, ToolDefinition, scheme};
use toolsmith_harness::model::{ChatOptions, ChatRequest, Message};

use super::server::{MockServer, Reply};
use super::{Api, Client};
use crate::common::warnings::Warnings;

/// `add` can be strict; `set_env` takes an open map, which strict mode cannot express.
pub(super) fn tools() -> ToolDeclarations {
    let add = ToolDefinition::new(
        "add",
        "Add two integers.",
        Args::new(
            scheme::object()
                .required("a", scheme::integer())
                .required("b", scheme::integer())
                .build(),
        ),
    );
    let set_env = ToolDefinition::new(
        "set_env",
        "Set environment variables.",
        Args::new(
            scheme::object()
                .required(
                    "vars",
                    json!({"type": "object", "additionalProperties": {"type": "string"}}),
                )
                .build(),
        ),
    );
    ToolDeclarations {
        shed: None,
        tools: vec![Tool::SingleCommand(add), Tool::SingleCommand(set_env)],
    }
}

#[tokio::test]
async fn a_tool_that_cannot_be_strict_is_sent_non_strict_with_a_warning() {
    let warnings = Warnings::default();
    let _guard = tracing::subscriber::set_default(warnings.clone());
    for api in Api::ALL {
        let server = MockServer::start([Reply::json(200, &api.text_answer("done"))]).await;
        let model = api.model(&server.base, &Client::default());
        let request = ChatRequest {
            model: api.model_name().to_owned(),
            messages: vec![Message::user("Set HOME and add 2 and 3.")],
            tools: tools().into(),
            options: ChatOptions {
                strict: StrictMode::Always,
                ..ChatOptions::default()
            },
            ..ChatRequest::default()
        };
        let answer = model
            .complete(&request)
            .await
            .unwrap_or_else(|err| panic!("{api:?}: the request failed: {err}"));
        assert_eq!(answer.text.as_deref(), Some("done"), "{api:?}");
        let tools = &server.requests()[0].body["tools"];
        match api {
            Api::Chat => {
                assert_eq!(tools[0]["function"]["strict"], true);
                assert_eq!(tools[1]["function"].get("strict"), None);
                assert_eq!(tools[1]["function"]["parameters"], set_env_schema());
            }
            Api::Responses => {
                assert_eq!(tools[0]["strict"], true);
                assert_eq!(tools[1]["strict"], false);
            }
            Api::Anthropic => {
                assert_eq!(tools[0]["strict"], true);
                assert_eq!(tools[1].get("strict"), None);
                assert_eq!(tools[1]["input_schema"], set_env_schema());
            }
            // No strict mode: both declared as usual.
            Api::Gemini => {
                assert_eq!(tools[0]["functionDeclarations"][1]["name"], "set_env");
            }
        }
    }
    let warnings = warnings.lines();
    // One warning per request of a format with a strict mode, naming tool, path and reason.
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    for (warning, provider) in warnings
        .iter()
        .zip(["openai_chat", "openai_responses", "anthropic"])
    {
        assert!(warning.contains("set_env"), "{warning}");
        assert!(warning.contains(provider), "{warning}");
        assert!(
            warning.contains("/properties/vars/additionalProperties"),
            "{warning}"
        );
        assert!(warning.contains("open map"), "{warning}");
    }
}

/// `set_env`'s schema, as declared.
fn set_env_schema() -> serde_json::Value {
    tools().tools[1].commands()[0].arguments.schema().clone()
}
