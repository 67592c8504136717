//! A session that compacts, over each API's client: the summary request reaches the API as
//! the compaction's system prompt and one user message of transcript, declaring no tools
//! (every API takes it, whatever calls the transcript holds); the next request declares the
//! session's tools again and starts with the summary and the user's latest message.

use serde_json::Value;
use toolsmith_core::{ToolShed, tool_fn};
use toolsmith_harness::agent::{AgentSession, Compaction, SUMMARY_HEADING};
use toolsmith_harness::model::ChatOptions;

use super::server::{MockServer, Reply};
use super::{Api, Client};

/// Echo `text`.
#[tool_fn]
fn echo(
    /// What to echo.
    text: String,
) -> String {
    text
}

/// The words the compaction's instructions begin with.
const INSTRUCTIONS_START: &str = "You condense the earlier part of a conversation";

#[tokio::test]
async fn every_api_is_sent_the_summary_request_without_tools_and_then_the_summary() {
    for api in Api::ALL {
        // 3,000 bytes of answer: some 1,000 tokens, past 800 of the window of 1,000 once the
        // next question comes.
        let long = "The capital of France is Paris. ".repeat(94);
        let server = MockServer::start([
            Reply::json(200, &api.text_answer(&long)),
            Reply::json(200, &api.text_answer("Asked for France's capital: Paris.")),
            Reply::json(200, &api.text_answer("Rome.")),
        ])
        .await;
        let session = AgentSession::builder(api.model(&server.base, &Client::default()))
            .with_model(api.model_name())
            .with_toolshed(ToolShed::new().tool(Echo))
            .with_context_window(1_000)
            // Anthropic's client reserves 4,096 by default, more than the whole window: no
            // compaction could bring a request under its threshold.
            .with_options(ChatOptions {
                max_output_tokens: Some(100),
                ..ChatOptions::default()
            })
            .with_compaction(Compaction::new())
            .build()
            .unwrap();
        let names = session.tool_manager().names();
        session.tool_manager().activate(&names);
        session.send("The capital of France?").await.unwrap();
        let run = session.send("And of Italy?").await.unwrap();
        assert_eq!(run.text, "Rome.", "{api:?}");

        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{api:?}");
        for request in &requests {
            api.check_request(request);
        }
        let (first, summary, next) = (&requests[0].body, &requests[1].body, &requests[2].body);
        assert!(first.get("tools").is_some(), "{api:?}: {first}");
        // The summary request: no tools, the instructions, the transcript.
        assert_eq!(summary.get("tools"), None, "{api:?}: {summary}");
        let sent = summary.to_string();
        assert!(sent.contains(INSTRUCTIONS_START), "{api:?}: {sent}");
        assert!(
            sent.contains("## User\\nThe capital of France?\\n"),
            "{api:?}: {sent}"
        );
        assert!(
            sent.contains("## Assistant\\nThe capital of France is Paris."),
            "{api:?}"
        );
        assert!(
            !sent.contains("And of Italy?"),
            "{api:?}: the latest question is kept"
        );
        // The next request: the tools again, the summary with the question, not the answer.
        assert!(next.get("tools").is_some(), "{api:?}: {next}");
        let sent = next.to_string();
        assert!(!sent.contains(INSTRUCTIONS_START), "{api:?}: {sent}");
        assert!(!sent.contains(&long), "{api:?}: {sent}");
        let heading = serde_json::to_string(SUMMARY_HEADING).unwrap();
        let heading = heading.trim_matches('"');
        assert!(sent.contains(heading), "{api:?}: {sent}");
        assert!(
            sent.contains("Asked for France's capital: Paris."),
            "{api:?}"
        );
        assert!(sent.contains("And of Italy?"), "{api:?}");
        assert_eq!(user_messages(api, next), 1, "{api:?}: {sent}");
    }
}

/// How many user messages `body` holds, in `api`'s format.
fn user_messages(api: Api, body: &Value) -> usize {
    let (list, role) = match api {
        Api::Chat | Api::Anthropic => ("messages", "user"),
        Api::Responses => ("input", "user"),
        Api::Gemini => ("contents", "user"),
    };
    body[list]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == role)
        .count()
}
