//! `Debug` output is logged: it shows what helps (names, addresses, counts) and never a
//! credential (an API key, a bearer token, a password in a URL, a header's or environment
//! variable's value).

use serde_json::json;
use toolsmith::harness::agent::AgentSession;
use toolsmith::harness::mcp::{McpCommand, McpHttpOptions, McpTransport};
use toolsmith::harness::model::ScriptedModel;
use toolsmith::harness::model::http::{
    AnthropicModel, GeminiModel, HttpModelBuilder, OpenAiChatModel, OpenAiEmbedder,
    OpenAiResponsesModel,
};

const KEY: &str = "sk-secret-key-1234";
const HEADER_VALUE: &str = "header-secret-5678";
const PASSWORD: &str = "url-password-9012";
const BODY_VALUE: &str = "body-secret-3456";

/// `shown`, checked to hold no credential.
fn no_secret(shown: String) -> String {
    for secret in [KEY, HEADER_VALUE, PASSWORD, BODY_VALUE] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    shown
}

/// A builder given every kind of credential a client takes.
fn with_secrets<M>(builder: HttpModelBuilder<M>) -> HttpModelBuilder<M> {
    builder
        .api_key(KEY)
        .base_url(format!("http://user:{PASSWORD}@127.0.0.1:9/v1"))
        .header("x-proxy-auth", HEADER_VALUE)
        .body_field("metadata", json!({"secret": BODY_VALUE}))
}

#[test]
fn model_clients_and_their_builders_show_no_credential() {
    let chat = with_secrets(OpenAiChatModel::builder());
    let shown = no_secret(format!("{chat:?}"));
    assert!(shown.contains("127.0.0.1:9"), "{shown}");
    assert!(shown.contains("x-proxy-auth"), "{shown}");
    let shown = no_secret(format!("{:?}", chat.build().unwrap()));
    assert!(shown.contains("127.0.0.1:9"), "{shown}");

    let responses = with_secrets(OpenAiResponsesModel::builder());
    no_secret(format!("{responses:?}"));
    no_secret(format!("{:?}", responses.build().unwrap()));
    let anthropic = with_secrets(AnthropicModel::builder());
    no_secret(format!("{anthropic:?}"));
    no_secret(format!("{:?}", anthropic.build().unwrap()));
    let gemini = with_secrets(GeminiModel::builder());
    no_secret(format!("{gemini:?}"));
    no_secret(format!("{:?}", gemini.build().unwrap()));
    let embedder = OpenAiEmbedder::builder("text-embedding-3-small")
        .api_key(KEY)
        .base_url(format!("http://user:{PASSWORD}@127.0.0.1:9/v1"))
        .header("x-proxy-auth", HEADER_VALUE)
        .body_field("metadata", json!({"secret": BODY_VALUE}));
    no_secret(format!("{embedder:?}"));
    no_secret(format!("{:?}", embedder.build().unwrap()));
}

#[test]
fn mcp_transports_show_no_bearer_token() {
    let transport = McpTransport::http("http://127.0.0.1:9/mcp").with_bearer_token(KEY);
    let shown = no_secret(format!("{transport:?}"));
    assert!(shown.contains("http://127.0.0.1:9/mcp"), "{shown}");
    assert!(shown.contains("bearer_token"), "{shown}");

    let options = McpHttpOptions::default().with_bearer_token(KEY);
    let shown = no_secret(format!("{options:?}"));
    assert!(shown.contains("/mcp"), "{shown}");
}

#[test]
fn mcp_commands_show_environment_names_not_values() {
    let command = McpCommand::new("github-mcp-server")
        .arg("stdio")
        .env("GITHUB_PERSONAL_ACCESS_TOKEN", KEY);
    let shown = no_secret(format!("{command:?}"));
    assert!(shown.contains("github-mcp-server"), "{shown}");
    assert!(shown.contains("GITHUB_PERSONAL_ACCESS_TOKEN"), "{shown}");
    no_secret(format!("{:?}", McpTransport::child(command)));
}

#[test]
fn an_agent_session_builder_shows_its_model_and_settings() {
    let builder = AgentSession::builder(ScriptedModel::new([]))
        .with_model("test-model")
        .with_max_turns(7);
    let shown = format!("{builder:?}");
    assert!(shown.contains("test-model"), "{shown}");
    assert!(shown.contains("max_turns: 7"), "{shown}");
}
