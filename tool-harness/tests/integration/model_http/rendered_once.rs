//! A client renders a set of declarations once: requests that carry the same
//! `Arc<ToolDeclarations>` (with the same strictness) reuse its `tools` array, and its
//! warnings (a tool left non-strict) are logged once for the set, not on every request.
//! Another set, even an equal one, other options or another client render again.

use std::sync::Arc;

use serde_json::Value;
use toolsmith_core::ToolDeclarations;
use toolsmith_core::provider::StrictMode;
use toolsmith_harness::model::{
    ChatModel, ChatOptions, ChatRequest, Message, ModelError, ToolChoice,
};

use super::server::{MockServer, Reply};
use super::strict::tools;
use super::{Api, Client};
use crate::common::warnings::Warnings;

/// The APIs with a strict mode, whose rendering warns about `set_env`.
const STRICT_APIS: [Api; 3] = [Api::Chat, Api::Responses, Api::Anthropic];

fn request(
    api: Api,
    set: &Arc<ToolDeclarations>,
    strict: StrictMode,
    choice: ToolChoice,
) -> ChatRequest {
    ChatRequest {
        model: api.model_name().to_owned(),
        messages: vec![Message::user("Set HOME and add 2 and 3.")],
        tools: Arc::clone(set),
        options: ChatOptions {
            strict,
            tool_choice: choice,
            ..ChatOptions::default()
        },
        ..ChatRequest::default()
    }
}

/// The warnings logged while `run` runs, on this thread.
async fn warnings_of<F: std::future::Future<Output = ()>>(run: F) -> Vec<String> {
    let warnings = Warnings::default();
    let _guard = tracing::subscriber::set_default(warnings.clone());
    run.await;
    warnings.lines()
}

#[tokio::test(flavor = "current_thread")]
async fn a_set_declared_on_every_request_is_rendered_and_warned_about_once() {
    let set = Arc::new(tools());
    for api in STRICT_APIS {
        let server =
            MockServer::start((0..3).map(|_| Reply::json(200, &api.text_answer("done")))).await;
        let model = api.model(&server.base, &Client::default());
        let warned = warnings_of(async {
            for choice in [
                ToolChoice::Auto,
                ToolChoice::Tool("add".into()),
                ToolChoice::Auto,
            ] {
                let request = request(api, &set, StrictMode::Always, choice);
                model
                    .complete(&request)
                    .await
                    .unwrap_or_else(|err| panic!("{api:?}: {err}"));
            }
        })
        .await;
        assert_eq!(warned.len(), 1, "{api:?}: {warned:#?}");
        assert!(warned[0].contains("set_env"), "{api:?}: {warned:#?}");
        let sent = server.requests();
        assert_eq!(sent.len(), 3, "{api:?}");
        // The same array each time; the tool choice is the request's own.
        for body in &sent[1..] {
            assert_eq!(body.body["tools"], sent[0].body["tools"], "{api:?}");
        }
        assert!(sent[0].body.get("tool_choice").is_none(), "{api:?}");
        assert!(sent[1].body.get("tool_choice").is_some(), "{api:?}");
        assert!(sent[2].body.get("tool_choice").is_none(), "{api:?}");
        // A tool choice no declared tool answers is refused, rendered array or not.
        let unanswerable = request(
            api,
            &set,
            StrictMode::Always,
            ToolChoice::Tool("nope".into()),
        );
        let refused = model.complete(&unanswerable).await.unwrap_err();
        assert!(
            matches!(&refused, ModelError::InvalidRequest { reason, .. } if reason.contains("'nope'")),
            "{api:?}: {refused}"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn another_set_other_options_or_another_client_render_again() {
    let first = Arc::new(tools());
    let equal = Arc::new(tools());
    for api in STRICT_APIS {
        let server =
            MockServer::start((0..6).map(|_| Reply::json(200, &api.text_answer("done")))).await;
        let model = api.model(&server.base, &Client::default());
        // The same sets went to the other clients before: each client renders its own.
        let sequence = [
            request(api, &first, StrictMode::Always, ToolChoice::Auto),
            // An equal set in another `Arc`.
            request(api, &equal, StrictMode::Always, ToolChoice::Auto),
            // The same set, other options: no tool is strict, nothing to warn about.
            request(api, &equal, StrictMode::Never, ToolChoice::Auto),
            request(
                api,
                &equal,
                StrictMode::WhenReturnsDeclared,
                ToolChoice::Auto,
            ),
        ];
        let warned = warnings_of(async {
            for request in &sequence {
                model
                    .complete(request)
                    .await
                    .unwrap_or_else(|err| panic!("{api:?}: {err}"));
            }
            // A set dropped, and a new one made (perhaps where it was): rendered again.
            let dropped = Arc::new(tools());
            let again = request(api, &dropped, StrictMode::Always, ToolChoice::Auto);
            model.complete(&again).await.unwrap();
            drop(again);
            drop(dropped);
            let new = Arc::new(tools());
            let again = request(api, &new, StrictMode::Always, ToolChoice::Auto);
            model.complete(&again).await.unwrap();
        })
        .await;
        assert_eq!(warned.len(), 4, "{api:?}: {warned:#?}");
        for warning in &warned {
            assert!(warning.contains(api.name()), "{api:?}: {warning}");
        }
        // Each body is the one a client that never saw a set sends.
        let sent: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
        for (request, body) in sequence.iter().zip(&sent) {
            let fresh = api.body_sent(request).await;
            assert_eq!(body, &fresh, "{api:?}: {:?}", request.options.strict);
        }
        assert_ne!(sent[1]["tools"], sent[2]["tools"], "{api:?}: strict or not");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn sessions_taking_turns_on_one_client_keep_their_sets_rendered() {
    let api = Api::Chat;
    let sets: Vec<Arc<ToolDeclarations>> = (0..3).map(|_| Arc::new(tools())).collect();
    let server =
        MockServer::start((0..9).map(|_| Reply::json(200, &api.text_answer("done")))).await;
    let model = api.model(&server.base, &Client::default());
    let warned = warnings_of(async {
        for _ in 0..3 {
            for set in &sets {
                let request = request(api, set, StrictMode::Always, ToolChoice::Auto);
                model.complete(&request).await.unwrap();
            }
        }
    })
    .await;
    // Each set once, however their requests interleave.
    assert_eq!(warned.len(), 3, "{warned:#?}");
}
