//! `FallbackModel` over scripted models: which errors move it on to the next model and
//! which end the call, the error when every model failed, streaming that never shows two
//! answers, the limits it reports for its models together, and a session's handling of
//! a last error it knows (too long, an unreadable image) behind a fallback.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use toolsmith_core::{Image, Tool, ToolImpl as _, tool_fn};
use toolsmith_harness::agent::{AgentSession, DropOldestExchanges, UserInput};
use toolsmith_harness::model::{
    ChatModel, ChatOptions, ChatRequest, ChatResponse, FallbackModel, ImageLimits, Message,
    ModelError, ScriptedModel, ScriptedTurn, StreamDelta,
};

use crate::common::span_fields::SpanFields;

fn rate_limited() -> ModelError {
    ModelError::RateLimited {
        provider: "anthropic".into(),
        retry_after: Some(Duration::from_secs(30)),
        message: "Number of requests has exceeded your rate limit".into(),
    }
}

fn overloaded() -> ModelError {
    ModelError::Api {
        provider: "anthropic".into(),
        status: 529,
        message: "Overloaded".into(),
    }
}

fn bad_request() -> ModelError {
    ModelError::Api {
        provider: "anthropic".into(),
        status: 400,
        message: "messages: at least one message is required".into(),
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "claude-sonnet-4-5".into(),
        messages: vec![Message::user("Hello?")],
        ..ChatRequest::default()
    }
}

#[tokio::test]
async fn a_rate_limited_primary_is_followed_by_the_next_model_under_its_own_name() {
    let primary = ScriptedModel::new([ScriptedTurn::error(rate_limited())]);
    let secondary = ScriptedModel::new([ScriptedTurn::text("Hi from the second")]);
    let model = FallbackModel::new(primary.clone()).or_as(secondary.clone(), "gpt-x");

    let answer = model.complete(&request()).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("Hi from the second"));
    assert_eq!(primary.requests()[0].model, "claude-sonnet-4-5");
    let sent = secondary.requests();
    assert_eq!(sent.len(), 1);
    // The same request, but for the model's name.
    assert_eq!(sent[0].model, "gpt-x");
    assert_eq!(sent[0].messages, request().messages);
    primary.assert_complete();
    secondary.assert_complete();
}

#[tokio::test]
async fn a_fallback_s_answer_names_the_model_it_was_asked_under() {
    // Scripted answers name no model: the fallback names the one it asked.
    let primary = ScriptedModel::new([ScriptedTurn::error(rate_limited())]);
    let secondary = ScriptedModel::new([ScriptedTurn::text("Hi from the second")]);
    let model = FallbackModel::new(primary).or_as(secondary, "gpt-x");
    let answer = model.complete(&request()).await.unwrap();
    assert_eq!(answer.model.as_deref(), Some("gpt-x"));

    let primary = ScriptedModel::new([ScriptedTurn::error(overloaded())]);
    let secondary = ScriptedModel::new([ScriptedTurn::text("Hi from the second")]);
    let model = FallbackModel::new(primary).or_as(secondary, "gpt-x");
    let answer = model.stream(&request(), &mut |_| {}).await.unwrap();
    assert_eq!(answer.model.as_deref(), Some("gpt-x"));

    // A model without a name of its own was asked under the request's.
    let primary = ScriptedModel::new([ScriptedTurn::text("Hi from the first")]);
    let model = FallbackModel::new(primary).or_as(ScriptedModel::new([]), "gpt-x");
    let answer = model.complete(&request()).await.unwrap();
    assert_eq!(answer.model.as_deref(), Some("claude-sonnet-4-5"));
}

#[tokio::test]
async fn each_move_to_the_next_model_is_a_warning_naming_both_and_the_error() {
    let warnings = crate::common::warnings::Warnings::default();
    let _default = tracing::subscriber::set_default(warnings.clone());
    let primary = ScriptedModel::new([ScriptedTurn::error(rate_limited())]);
    let secondary = ScriptedModel::new([ScriptedTurn::text("Hi from the second")]);
    let model = FallbackModel::new(primary).or_as(secondary, "gpt-x");
    model.complete(&request()).await.unwrap();
    let lines = warnings.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with(
            "a model failed: asking the next failed=model 1 (scripted, claude-sonnet-4-5) \
             next=model 2 (scripted, gpt-x) error="
        ),
        "{lines:?}"
    );
    assert!(lines[0].contains(&rate_limited().to_string()), "{lines:?}");
    // An error that does not move on is not a move: no warning.
    let model = FallbackModel::new(ScriptedModel::new([ScriptedTurn::error(bad_request())]))
        .or(ScriptedModel::new([]));
    model.complete(&request()).await.unwrap_err();
    assert_eq!(warnings.lines().len(), 1);
}

#[tokio::test]
async fn a_fallback_keeps_the_model_an_answer_names() {
    let primary = ScriptedModel::new([ScriptedTurn::error(rate_limited())]);
    let secondary = ScriptedModel::new([ScriptedTurn::respond(|_| {
        let mut named = ChatResponse::text("Hi");
        named.model = Some("gpt-x-2025-01-01".into());
        Ok(named)
    })]);
    let model = FallbackModel::new(primary).or_as(secondary, "gpt-x");
    let answer = model.complete(&request()).await.unwrap();
    assert_eq!(answer.model.as_deref(), Some("gpt-x-2025-01-01"));
}

#[tokio::test]
async fn each_provider_side_error_moves_on_and_the_request_s_own_do_not() {
    let timeout = ModelError::Timeout {
        provider: "openai_chat".into(),
        after: Duration::from_secs(60),
    };
    let connection = ModelError::Connection {
        provider: "openai_chat".into(),
        url: "https://api.openai.com/v1/chat/completions".into(),
        reason: "connection refused".into(),
    };
    let api = |status| ModelError::Api {
        provider: "gemini".into(),
        status,
        message: "m".into(),
    };
    let moving_on = [
        rate_limited(),
        timeout,
        connection,
        api(500),
        api(501),
        api(503),
        api(529),
        api(408),
        api(409),
    ];
    let too_long = ModelError::ContextTooLong {
        provider: "anthropic".into(),
        status: 400,
        message: "prompt is too long: 200010 tokens > 200000 maximum".into(),
    };
    let staying = [
        bad_request(),
        api(404),
        api(429),
        ModelError::Auth {
            provider: "anthropic".into(),
            status: 401,
            message: "invalid x-api-key".into(),
        },
        too_long,
        ModelError::ImageRefused {
            provider: "anthropic".into(),
            status: 400,
            message: "Could not process image".into(),
            image: None,
        },
        ModelError::InvalidRequest {
            provider: "gemini".into(),
            reason: "recursive schema".into(),
        },
        ModelError::MalformedResponse {
            provider: "openai_chat".into(),
            reason: "not JSON".into(),
        },
        ModelError::Config {
            provider: "openai_chat".into(),
            reason: "no API key".into(),
        },
        ModelError::Other("custom".into()),
    ];
    for (error, moves_on) in moving_on
        .into_iter()
        .map(|error| (error, true))
        .chain(staying.into_iter().map(|error| (error, false)))
    {
        assert_eq!(error.is_provider_side(), moves_on, "{error}");
        let primary = ScriptedModel::new([ScriptedTurn::error(error.clone())]);
        let secondary = ScriptedModel::new([ScriptedTurn::text("second")]);
        let model = FallbackModel::new(primary).or(secondary.clone());
        let answer = model.complete(&request()).await;
        if moves_on {
            assert_eq!(answer.unwrap().text.as_deref(), Some("second"), "{error}");
        } else {
            // Returned as it is, the next model never asked.
            assert_eq!(answer.unwrap_err(), error);
            assert!(secondary.requests().is_empty(), "{error}");
        }
    }
}

#[tokio::test]
async fn a_bad_request_is_returned_at_once() {
    let primary = ScriptedModel::new([ScriptedTurn::error(bad_request())]);
    let secondary = ScriptedModel::new([ScriptedTurn::text("unused")]);
    let model = FallbackModel::new(primary).or_as(secondary.clone(), "gpt-x");
    assert_eq!(model.complete(&request()).await.unwrap_err(), bad_request());
    assert_eq!(secondary.remaining(), 1);
    assert!(secondary.requests().is_empty());
}

#[tokio::test]
async fn when_every_model_fails_the_error_names_each_and_ends_with_the_last() {
    let unreachable = ModelError::Connection {
        provider: "openai_chat".into(),
        url: "http://127.0.0.1:9/v1/chat/completions".into(),
        reason: "connection refused".into(),
    };
    let primary = ScriptedModel::new([ScriptedTurn::error(overloaded())]);
    let second = ScriptedModel::new([ScriptedTurn::error(unreachable.clone())]);
    let third = ScriptedModel::new([ScriptedTurn::error(rate_limited())]);
    let model = FallbackModel::new(primary).or_as(second, "gpt-x").or(third);
    let error = model.complete(&request()).await.unwrap_err();
    assert_eq!(
        error,
        ModelError::AllFailed {
            errors: vec![
                ("model 1 (scripted, claude-sonnet-4-5)".into(), overloaded()),
                ("model 2 (scripted, gpt-x)".into(), unreachable.clone()),
                (
                    "model 3 (scripted, claude-sonnet-4-5)".into(),
                    rate_limited()
                ),
            ]
        }
    );
    assert_eq!(error.last_error(), &rate_limited());
    assert!(error.is_transient() && error.is_provider_side());
    let message = error.to_string();
    for part in [
        "every model asked failed",
        "model 1 (scripted, claude-sonnet-4-5) -> anthropic: API error (HTTP 529): Overloaded",
        "model 2 (scripted, gpt-x) -> openai_chat: cannot reach http://127.0.0.1:9/v1/chat/completions: connection refused",
        "then model 3 (scripted, claude-sonnet-4-5) -> anthropic: rate limited (HTTP 429)",
    ] {
        assert!(message.contains(part), "{part:?} in {message}");
    }

    // A second model's own error (not one to move on for) ends the call there: the
    // models asked failed, the third was not asked.
    let primary = ScriptedModel::new([ScriptedTurn::error(overloaded())]);
    let second = ScriptedModel::new([ScriptedTurn::error(bad_request())]);
    let third = ScriptedModel::new([ScriptedTurn::text("unused")]);
    let model = FallbackModel::new(primary).or(second).or(third.clone());
    let error = model.complete(&request()).await.unwrap_err();
    assert_eq!(error.last_error(), &bad_request());
    assert!(matches!(&error, ModelError::AllFailed { errors } if errors.len() == 2));
    assert!(third.requests().is_empty());
}

#[tokio::test]
async fn a_fallback_of_fallbacks_lists_every_error_in_one_line() {
    let inner = FallbackModel::new(ScriptedModel::new([ScriptedTurn::error(overloaded())]))
        .or(ScriptedModel::new([ScriptedTurn::error(rate_limited())]));
    let last = ScriptedModel::new([ScriptedTurn::error(bad_request())]);
    let model = FallbackModel::new(inner).or(last);
    assert_eq!(
        model.name(),
        "fallback(fallback(scripted, scripted), scripted)"
    );
    let error = model.complete(&request()).await.unwrap_err();
    let ModelError::AllFailed { errors } = &error else {
        panic!("{error:?}");
    };
    // Each named by its place in both lists.
    let model = |label: &str| format!("{label} (scripted, claude-sonnet-4-5)");
    assert_eq!(
        errors,
        &[
            (model("model 1.1"), overloaded()),
            (model("model 1.2"), rate_limited()),
            (model("model 2"), bad_request()),
        ]
    );

    // A fallback that fails alone (its last error is not one to move on for): the next
    // model is not asked, and its models keep their places in both lists.
    let inner = FallbackModel::new(ScriptedModel::new([ScriptedTurn::error(overloaded())]))
        .or(ScriptedModel::new([ScriptedTurn::error(bad_request())]));
    let unused = ScriptedModel::new([ScriptedTurn::text("unused")]);
    let alone = FallbackModel::new(inner).or(unused);
    let ModelError::AllFailed { errors } = alone.complete(&request()).await.unwrap_err() else {
        panic!("not every model failed");
    };
    assert_eq!(
        errors,
        [
            (model("model 1.1"), overloaded()),
            (model("model 1.2"), bad_request()),
        ]
    );

    // A model of one's own failing with its own labels: they follow its place.
    let own = ModelError::AllFailed {
        errors: vec![
            ("east".into(), overloaded()),
            ("west".into(), rate_limited()),
        ],
    };
    let model = FallbackModel::new(ScriptedModel::new([ScriptedTurn::error(own)]))
        .or(ScriptedModel::new([ScriptedTurn::error(bad_request())]));
    let ModelError::AllFailed { errors } = model.complete(&request()).await.unwrap_err() else {
        panic!("not AllFailed");
    };
    let labels: Vec<&str> = errors.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "model 1: east",
            "model 1: west",
            "model 2 (scripted, claude-sonnet-4-5)"
        ]
    );
}

/// Two clients of one API share a name (`openai_chat`): the error says which of the list
/// failed, by its place and the model it was asked for, whether it streamed or not.
#[tokio::test]
async fn models_of_one_name_are_told_apart_by_their_place_and_model() {
    let down = |model: &str| ModelError::Api {
        provider: "openai_chat".into(),
        status: 503,
        message: format!("{model} is down"),
    };
    for streamed in [false, true] {
        let first = ScriptedModel::new([ScriptedTurn::error(down("first"))]);
        let second = ScriptedModel::new([ScriptedTurn::error(down("second"))]);
        let third = ScriptedModel::new([ScriptedTurn::error(down("third"))]);
        let model = FallbackModel::new(first)
            .or(second)
            .or_as(third, "gpt-4.1-mini");
        let error = if streamed {
            model.stream(&request(), &mut |_| {}).await
        } else {
            model.complete(&request()).await
        }
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "every model asked failed: \
             model 1 (scripted, claude-sonnet-4-5) -> openai_chat: API error (HTTP 503): first is down; \
             then model 2 (scripted, claude-sonnet-4-5) -> openai_chat: API error (HTTP 503): second is down; \
             then model 3 (scripted, gpt-4.1-mini) -> openai_chat: API error (HTTP 503): third is down",
            "streamed: {streamed}"
        );
    }
    // A request naming no model: the place and the client's name.
    let model = FallbackModel::new(ScriptedModel::new([ScriptedTurn::error(down("a"))]))
        .or(ScriptedModel::new([ScriptedTurn::error(down("b"))]));
    let unnamed = ChatRequest {
        model: " ".into(),
        ..request()
    };
    let ModelError::AllFailed { errors } = model.complete(&unnamed).await.unwrap_err() else {
        panic!("not AllFailed");
    };
    let labels: Vec<&str> = errors.iter().map(|(label, _)| label.as_str()).collect();
    assert_eq!(labels, ["model 1 (scripted)", "model 2 (scripted)"]);
}

#[tokio::test]
async fn a_predicate_of_one_s_own_decides_what_moves_on() {
    let too_long = ModelError::ContextTooLong {
        provider: "openai_chat".into(),
        status: 400,
        message: "context_length_exceeded".into(),
    };
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    // A model of a larger window for the conversations too long; an overload is the
    // caller's to retry.
    let primary = ScriptedModel::new([
        ScriptedTurn::error(too_long.clone()),
        ScriptedTurn::error(overloaded()),
    ]);
    let larger = ScriptedModel::new([ScriptedTurn::text("read it all")]);
    let model = FallbackModel::new(primary)
        .or(larger.clone())
        .falling_back_when(move |error: &ModelError| {
            seen.lock().unwrap().push(error.clone());
            matches!(error, ModelError::ContextTooLong { .. })
        });
    let answer = model.complete(&request()).await.unwrap();
    assert_eq!(answer.text.as_deref(), Some("read it all"));
    assert_eq!(model.complete(&request()).await.unwrap_err(), overloaded());
    assert_eq!(larger.requests().len(), 1);
    assert_eq!(*asked.lock().unwrap(), [too_long, overloaded()]);
}

/// A model streaming `pieces`, then failing with `error` (if any), else answering them.
struct Streams {
    pieces: Vec<&'static str>,
    error: Option<ModelError>,
    calls: AtomicUsize,
}

impl Streams {
    fn new(pieces: Vec<&'static str>, error: Option<ModelError>) -> Arc<Self> {
        Arc::new(Self {
            pieces,
            error,
            calls: AtomicUsize::new(0),
        })
    }
}

#[async_trait]
impl ChatModel for Streams {
    fn name(&self) -> &str {
        "streams"
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.stream(request, &mut |_| {}).await
    }

    async fn stream(
        &self,
        _: &ChatRequest,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        for piece in &self.pieces {
            on_delta(StreamDelta::Text((*piece).to_owned()));
        }
        match &self.error {
            Some(error) => Err(error.clone()),
            None => Ok(ChatResponse::text(self.pieces.concat())),
        }
    }
}

/// The text deltas `model` streams for `request()`, and its answer.
async fn streamed(model: &FallbackModel) -> (Vec<String>, Result<ChatResponse, ModelError>) {
    let mut deltas = Vec::new();
    let answer = model
        .stream(&request(), &mut |delta| {
            if let StreamDelta::Text(text) = delta {
                deltas.push(text);
            }
        })
        .await;
    (deltas, answer)
}

#[tokio::test]
async fn a_stream_failing_before_any_delta_is_followed_by_the_next_model_s_deltas_only() {
    let primary = Streams::new(Vec::new(), Some(overloaded()));
    let secondary = Streams::new(vec!["Hel", "lo"], None);
    let model = FallbackModel::new(Arc::clone(&primary)).or(Arc::clone(&secondary));
    let (deltas, answer) = streamed(&model).await;
    assert_eq!(deltas, ["Hel", "lo"]);
    assert_eq!(answer.unwrap().text.as_deref(), Some("Hello"));
    assert_eq!(primary.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_stream_failing_after_a_delta_ends_with_its_error() {
    let primary = Streams::new(vec!["Hel"], Some(overloaded()));
    let secondary = Streams::new(vec!["Another answer"], None);
    let model = FallbackModel::new(Arc::clone(&primary)).or(Arc::clone(&secondary));
    let (deltas, answer) = streamed(&model).await;
    // The caller saw the start of the first answer: no second one follows it.
    assert_eq!(deltas, ["Hel"]);
    assert_eq!(answer.unwrap_err(), overloaded());
    assert_eq!(secondary.calls.load(Ordering::SeqCst), 0);

    // A fallback that delivered a delta after its own fallbacks does not move on either.
    let inner = FallbackModel::new(Streams::new(Vec::new(), Some(overloaded())))
        .or(Streams::new(vec!["Hel"], Some(rate_limited())));
    let model = FallbackModel::new(inner).or(Arc::clone(&secondary));
    let (deltas, answer) = streamed(&model).await;
    assert_eq!(deltas, ["Hel"]);
    assert_eq!(answer.unwrap_err().last_error(), &rate_limited());
    assert_eq!(secondary.calls.load(Ordering::SeqCst), 0);
}

/// A model that refuses to declare tools named `refused`, and asks `output` tokens.
struct Limited {
    refused: &'static str,
    output: Option<u32>,
    images: ImageLimits,
}

#[async_trait]
impl ChatModel for Limited {
    fn name(&self) -> &str {
        "limited"
    }

    async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Ok(ChatResponse::text("ok"))
    }

    fn check_declarations(&self, tools: &[&Tool]) -> Result<(), ModelError> {
        match tools.iter().find(|tool| tool.name() == self.refused) {
            Some(tool) => Err(ModelError::InvalidRequest {
                provider: "limited".into(),
                reason: format!("cannot declare {}", tool.name()),
            }),
            None => Ok(()),
        }
    }

    fn output_limit(&self, request: &ChatRequest) -> Option<u32> {
        // What a client asks for when the request names this model.
        if request.model == "big" {
            return Some(64_000);
        }
        request.options.max_output_tokens.or(self.output)
    }

    fn image_limits(&self) -> ImageLimits {
        self.images
    }
}

/// Add two integers.
#[tool_fn]
fn add(
    /// The first.
    a: i64,
    /// The second.
    b: i64,
) -> i64 {
    a + b
}

/// Subtract two integers.
#[tool_fn]
fn subtract(
    /// The first.
    a: i64,
    /// The second.
    b: i64,
) -> i64 {
    a - b
}

#[test]
fn the_limits_reported_are_what_every_model_takes() {
    let anthropic_like = Limited {
        refused: "add",
        output: Some(8192),
        images: ImageLimits::anthropic(),
    };
    let gemini_like = Limited {
        refused: "subtract",
        output: None,
        images: ImageLimits::gemini(),
    };
    let openai_like = Limited {
        refused: "none",
        output: Some(16_000),
        images: ImageLimits::openai(),
    };
    let model = FallbackModel::new(anthropic_like)
        .or(gemini_like)
        .or(openai_like);
    assert_eq!(model.name(), "fallback(limited, limited, limited)");

    let images = model.image_limits();
    assert_eq!(images.max_side, Some(8000));
    assert_eq!(images.max_side_beyond, Some((20, 2000)));
    assert_eq!(images.max_images, Some(100));
    assert_eq!(images.max_image_bytes, Some(30_000_000));
    assert!(!images.animated);
    assert_eq!(
        images.media_types,
        ["image/png", "image/jpeg", "image/webp"]
    );

    // The largest any of them asks for.
    assert_eq!(model.output_limit(&request()), Some(16_000));
    let asked = ChatRequest {
        options: ChatOptions {
            max_output_tokens: Some(512),
            ..ChatOptions::default()
        },
        ..request()
    };
    assert_eq!(model.output_limit(&asked), Some(512));
    // As each model would be sent the request: under its own name.
    let renamed = FallbackModel::new(Limited {
        refused: "none",
        output: Some(8192),
        images: ImageLimits::none(),
    })
    .or_as(
        Limited {
            refused: "none",
            output: None,
            images: ImageLimits::none(),
        },
        "big",
    );
    assert_eq!(renamed.output_limit(&request()), Some(64_000));

    // Each tool must be taken by every model.
    let tools = [Add.definition(), Subtract.definition()];
    let refused = |tool: &Tool| model.check_declarations(&[tool]).unwrap_err().to_string();
    assert!(refused(&tools[0]).contains("cannot declare add"));
    assert!(refused(&tools[1]).contains("cannot declare subtract"));
    assert!(model.check_declarations(&[]).is_ok());
}

/// A refusal by 10 tokens: `DropOldestExchanges` drops the oldest exchange.
fn too_long() -> ModelError {
    ModelError::ContextTooLong {
        provider: "openai_chat".into(),
        status: 400,
        message: "This model's maximum context length is 200000 tokens. However, your messages resulted in 200010 tokens.".into(),
    }
}

#[tokio::test]
async fn a_session_shortens_its_conversation_when_the_fallback_s_last_error_is_too_long() {
    // The primary is overloaded, the fallback's window is the smaller: the session must see
    // its refusal as one of length, shorten the conversation and ask again (the primary
    // first again).
    let primary = ScriptedModel::new([
        ScriptedTurn::text("first answer"),
        ScriptedTurn::error(overloaded()),
        ScriptedTurn::text("second answer"),
    ]);
    let secondary = ScriptedModel::new([ScriptedTurn::error(too_long())]);
    let session = AgentSession::builder(FallbackModel::new(primary.clone()).or(secondary))
        .with_model("claude-sonnet-4-5")
        .with_context_overflow(DropOldestExchanges::new())
        .build()
        .unwrap();
    session.send("First question").await.unwrap();
    let run = session.send("Second question").await.unwrap();
    assert_eq!(run.text, "second answer");
    let asked = primary.requests();
    assert_eq!(asked.len(), 3);
    assert_eq!(asked[2].messages, [Message::user("Second question")]);
}

#[tokio::test]
async fn a_session_removes_an_unreadable_image_when_the_fallback_s_last_error_refuses_it() {
    let refused = ModelError::ImageRefused {
        provider: "openai_chat".into(),
        status: 400,
        message: "You uploaded an unsupported image.".into(),
        image: None,
    };
    let primary = ScriptedModel::new([
        ScriptedTurn::error(overloaded()),
        ScriptedTurn::text("no image now"),
    ]);
    let secondary = ScriptedModel::new([ScriptedTurn::error(refused)]);
    let session = AgentSession::builder(FallbackModel::new(primary.clone()).or(secondary))
        .with_model("claude-sonnet-4-5")
        .build()
        .unwrap();
    let broken = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n(cut off)").unwrap();
    let run = session
        .send_input(UserInput::new("What is this?").image(broken))
        .await
        .unwrap();
    assert_eq!(run.text, "no image now");
    let asked = primary.requests();
    assert_eq!(asked[0].messages[0].images().len(), 1);
    assert!(asked[1].messages[0].images().is_empty());
}

/// The session's `chat` span says which model answered (`gen_ai.response.model`): behind a
/// fallback, the one that did; an answer that names none records none.
#[tokio::test]
async fn the_chat_span_names_the_model_that_answered() {
    let traced = SpanFields::default();
    // A test runs on its own thread: the subscriber is this test's only.
    let _default = tracing::subscriber::set_default(traced.clone());
    let primary = ScriptedModel::new([ScriptedTurn::error(rate_limited())]);
    let secondary = ScriptedModel::new([ScriptedTurn::text("Hi from the second")]);
    let model = FallbackModel::new(primary).or_as(secondary, "gpt-x");
    let session = AgentSession::builder(model)
        .with_model("claude-sonnet-4-5")
        .build()
        .unwrap();
    session.run("Hello?").await.unwrap();
    let unnamed = ScriptedModel::new([ScriptedTurn::text("Hi")]);
    let session = AgentSession::builder(unnamed)
        .with_model("m")
        .build()
        .unwrap();
    session.run("Hello?").await.unwrap();

    let answered = |fields: &Vec<(String, String)>| {
        fields
            .iter()
            .find(|(name, _)| name == "gen_ai.response.model")
            .map(|(_, value)| value.clone())
    };
    let mut models: Vec<_> = traced.named("chat").iter().map(answered).collect();
    models.sort();
    assert_eq!(models, [None, Some(r#""gpt-x""#.to_owned())]);
}

#[tokio::test]
async fn a_stream_failing_after_only_empty_text_is_followed_by_the_next_model() {
    // An empty piece shows nothing: no answer began, and the next model may give one.
    let primary = Streams::new(vec![""], Some(overloaded()));
    let secondary = Streams::new(vec!["Hel", "lo"], None);
    let model = FallbackModel::new(Arc::clone(&primary)).or(Arc::clone(&secondary));
    let (deltas, answer) = streamed(&model).await;
    assert_eq!(deltas.concat(), "Hello");
    assert_eq!(answer.unwrap().text.as_deref(), Some("Hello"));
    assert_eq!(secondary.calls.load(Ordering::SeqCst), 1);
}

/// A model whose every way of answering panics, as a bug in a client of one's own would.
struct Panics;

#[async_trait]
impl ChatModel for Panics {
    fn name(&self) -> &str {
        "panics"
    }

    async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        panic!("a bug in the client")
    }
}

#[tokio::test]
async fn a_panicking_model_is_a_bug_not_an_outage_its_panic_ends_the_session_s_run() {
    // A panic is not an error to move on for: the session catches it and names the model.
    let secondary = ScriptedModel::new([ScriptedTurn::text("unused")]);
    let session = AgentSession::builder(FallbackModel::new(Panics).or(secondary.clone()))
        .with_model("claude-sonnet-4-5")
        .build()
        .unwrap();
    let error = session.run("Hello?").await.unwrap_err();
    let shown = error.to_string();
    assert!(shown.contains("fallback(panics, scripted)"), "{shown}");
    assert!(shown.contains("a bug in the client"), "{shown}");
    assert!(secondary.requests().is_empty());
}
