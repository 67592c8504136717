//! The agent session against `ScriptedModel`: the loop, shed first, concurrency, failures that
//! go back to the model, limits, cancellation, hooks, approval and events.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::DecideFor;
use crate::common::recorded_events::tool_saying_it_ran;
use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::in_memory::{HashingEmbedder, InMemoryContext, InMemoryMemory};
use toolsmith_core::{
    Args, CancellationToken, ContextSearch, Embedder, FnTool, MemoryAccess, ToolAnnotations,
    ToolArgs, ToolArguments, ToolCallContext, ToolCallRequest, ToolCallResult, ToolError, ToolImpl,
    ToolRetryConfig, ToolShed, ToolShedError, scheme, tool_fn,
};
use toolsmith_harness::agent::{
    AgentEvent, AgentSession, AgenticError, ApprovalDecision, DeniedBy, HookDecision, ToolApproval,
    ToolHook,
};
use toolsmith_harness::model::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn,
    StreamDelta, Usage,
};

/// Add two integers.
#[tool_fn(category = "math")]
fn add(
    /// The first.
    a: i64,
    /// The second.
    b: i64,
) -> i64 {
    a + b
}

/// Current weather conditions for a city.
#[tool_fn(category = "weather")]
async fn get_weather(
    /// The city.
    city: String,
) -> Result<String, String> {
    if city == "Atlantis" {
        Err(format!("no weather station in {city}"))
    } else {
        Ok(format!("Sunny in {city}"))
    }
}

/// Wait a long time.
#[tool_fn(timeout = "50ms")]
async fn slow_job() -> String {
    tokio::time::sleep(Duration::from_secs(10)).await;
    "done".to_owned()
}

fn session(model: &ScriptedModel, shed: ToolShed) -> AgentSession {
    AgentSession::builder(model.clone())
        .with_model("test-model")
        .with_toolshed(shed)
        .build()
        .expect("the session builds")
}

/// A session whose tools are all active from the start (no `shed` round).
fn active_session(model: &ScriptedModel, shed: ToolShed) -> AgentSession {
    let session = session(model, shed);
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    session
}

fn results_of(request: &ChatRequest) -> Vec<(String, String)> {
    request
        .messages
        .last()
        .expect("a message")
        .results()
        .iter()
        .map(|r| (r.call_id.clone(), r.result.content.to_text()))
        .collect()
}

/// Spec 01 §2: a shed that cannot be built fails `build()` with the shed's error, as an
/// `AgenticError`.
#[test]
fn a_shed_that_cannot_be_built_fails_the_session_build() {
    let build = |shed: ToolShed| {
        AgentSession::builder(ScriptedModel::default())
            .with_model("test-model")
            .with_toolshed(shed)
            .build()
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let shed_error = |result: Result<AgentSession, AgenticError>| match result {
        Err(AgenticError::ToolShed(err)) => err,
        Err(other) => panic!("not a shed error: {other}"),
        Ok(_) => panic!("the session was built"),
    };
    let twice = ToolShed::new()
        .tool(tool_saying_it_ran("a", Arc::clone(&runs)))
        .tool(tool_saying_it_ran("a", Arc::clone(&runs)));
    assert_eq!(
        shed_error(build(twice)),
        ToolShedError::DuplicateTool("a".into())
    );
    let reserved = ToolShed::new().tool(tool_saying_it_ran("shed", Arc::clone(&runs)));
    assert_eq!(
        shed_error(build(reserved)),
        ToolShedError::ReservedName("shed".into())
    );
    let misnamed = ToolShed::new().tool(tool_fn("notes", move |_| {
        Arc::new(tool_saying_it_ran("memo", Arc::clone(&runs))) as Arc<dyn ToolImpl>
    }));
    assert_eq!(
        shed_error(build(misnamed)).to_string(),
        "the constructor for 'notes' built a tool named 'memo'"
    );
}

/// A `#[ctx] State<T>` whose `T` the shed was never given: by default the session builds
/// and the tool fails each call with the reason; a shed that requires every tool built
/// fails the session's `build()` instead, naming the tool and what it lacked.
#[tokio::test]
async fn a_tool_lacking_its_state_fails_the_build_only_when_every_tool_is_required() {
    struct Ledger;

    /// Count the entries.
    #[toolsmith::tool_fn]
    async fn count(#[ctx] _ledger: toolsmith_core::State<Ledger>) -> u64 {
        0
    }

    let model = || {
        ScriptedModel::new([
            ScriptedTurn::call("count", json!({})),
            ScriptedTurn::text("done"),
        ])
    };
    let lenient = AgentSession::builder(model())
        .with_model("test-model")
        .with_toolshed(ToolShed::new().tool(Count))
        .with_every_tool_declared(true)
        .build()
        .unwrap();
    let run = lenient.run("count").await.unwrap();
    let result = run.tool_calls[0].result.content.to_text();
    assert!(
        result.contains("could not be built for this session"),
        "{result}"
    );

    let strict = AgentSession::builder(model())
        .with_model("test-model")
        .with_toolshed(ToolShed::new().tool(Count).with_every_tool_built(true))
        .build();
    let Err(AgenticError::ToolShed(ToolShedError::Unbuilt { tool, reason })) = strict else {
        panic!("built: {strict:?}");
    };
    assert_eq!(tool, "count");
    assert!(reason.starts_with("no state of type `"), "{reason}");
    assert!(reason.contains("Ledger` was added to the shed"), "{reason}");
}

/// Spec 01 §2: a constructor gets the session's own parts, the same `Arc`s the session holds.
#[test]
fn constructors_get_the_session_s_own_parts() {
    type Seen = (
        String,
        Arc<dyn MemoryAccess>,
        Arc<dyn ContextSearch>,
        Option<Arc<dyn Embedder>>,
    );
    let seen: Arc<Mutex<Option<Seen>>> = Arc::default();
    let record = Arc::clone(&seen);
    let shed = ToolShed::new().tool(tool_fn("notes", move |parts| {
        *record.lock().unwrap() = Some((
            parts.session_id.clone(),
            Arc::clone(&parts.memory),
            Arc::clone(&parts.context),
            parts.embedder.clone(),
        ));
        Arc::new(tool_saying_it_ran("notes", Arc::default())) as Arc<dyn ToolImpl>
    }));
    let memory: Arc<dyn MemoryAccess> = Arc::new(InMemoryMemory::new());
    let context: Arc<dyn ContextSearch> = Arc::new(InMemoryContext::new());
    let embedder: Arc<dyn Embedder> = Arc::new(HashingEmbedder::new(8));
    let session = AgentSession::builder(ScriptedModel::default())
        .with_model("test-model")
        .with_session_id("s-7")
        .with_memory(Arc::clone(&memory))
        .with_context(Arc::clone(&context))
        .with_embedder(Arc::clone(&embedder))
        .with_toolshed(shed)
        .build()
        .unwrap();
    let (id, parts_memory, parts_context, parts_embedder) =
        seen.lock().unwrap().take().expect("the constructor ran");
    assert_eq!((id.as_str(), session.session_id()), ("s-7", "s-7"));
    assert!(Arc::ptr_eq(&parts_memory, &memory));
    assert!(Arc::ptr_eq(&parts_memory, session.memory_hierarchy()));
    assert!(Arc::ptr_eq(&parts_context, &context));
    assert!(Arc::ptr_eq(&parts_context, session.context()));
    assert!(Arc::ptr_eq(
        &parts_embedder.expect("an embedder"),
        &embedder
    ));
}

// 1.
#[tokio::test]
async fn a_text_answer_is_one_model_call() {
    let usage = Usage {
        input_tokens: 12,
        output_tokens: 3,
        cached_input_tokens: 4,
    };
    let model = ScriptedModel::new([ScriptedTurn::text("Hello!").with_usage(usage)]);
    let run = session(&model, ToolShed::new()).run("Hi").await.unwrap();
    assert_eq!(run.text, "Hello!");
    assert_eq!(run.model_calls, 1);
    assert_eq!(run.usage, usage);
    assert_eq!(
        run.transcript,
        [
            Message::user("Hi"),
            ChatResponse::text("Hello!").to_message()
        ]
    );
    // A session without tools declares none, not even `shed`.
    assert!(model.requests()[0].tools.is_empty());
    model.assert_complete();
}

// 2.
#[tokio::test]
async fn a_tool_call_round_trip_keeps_its_call_id() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::calls([("ping", json!({}))]).with_usage(Usage::new(10, 2)),
        ScriptedTurn::text("pinged").with_usage(Usage::new(15, 1)),
    ]);
    let session = active_session(
        &model,
        ToolShed::new().tool(tool_saying_it_ran("ping", Arc::clone(&runs))),
    );
    let run = session.run("ping it").await.unwrap();
    assert_eq!(run.text, "pinged");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(run.model_calls, 2);
    assert_eq!(run.usage, Usage::new(25, 3));
    let requests = model.requests();
    let call_id = requests.len().checked_sub(1).map(|_| "call-1-0").unwrap();
    assert_eq!(
        results_of(&requests[1]),
        [(call_id.to_owned(), "ping ran".to_owned())]
    );
    assert_eq!(requests[1].messages[1].calls()[0].id, call_id);
    assert_eq!(run.tool_calls.len(), 1);
    assert_eq!(run.tool_calls[0].attempts, 1);
    model.assert_complete();
}

// 3.
#[tokio::test]
async fn shed_comes_first_and_unfound_tools_are_not_active() {
    let model = ScriptedModel::new([
        ScriptedTurn::call(
            "shed",
            json!({"description": "weather conditions in a city", "limit": 1}),
        ),
        ScriptedTurn::call("get_weather", json!({"city": "Paris"}))
            .and_call("add", json!({"a": 1, "b": 2})),
        ScriptedTurn::text("It is sunny in Paris."),
    ]);
    let session = session(&model, ToolShed::new().tool(GetWeather).tool(Add));
    let run = session.run("Weather in Paris?").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["shed"]);
    assert_eq!(requests[1].tool_names(), ["shed", "get_weather"]);
    let results = results_of(&requests[2]);
    assert_eq!(results[0].1, "Sunny in Paris");
    assert!(
        results[1].1.contains("add") && results[1].1.contains("shed"),
        "an inactive tool's error tells the model to use shed: {}",
        results[1].1
    );
    assert!(run.tool_calls[2].result.is_error());
    model.assert_complete();
}

/// `with_every_tool_declared(true)`: every tool is declared on the first request, `shed`
/// not, and the model calls them with no search first; a tool registered on the session's
/// manager after the build is declared too.
#[tokio::test]
async fn every_tool_declared_needs_no_search_first() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("get_weather", json!({"city": "Paris"}))
            .and_call("add", json!({"a": 1, "b": 2})),
        ScriptedTurn::text("Sunny, and 3."),
    ]);
    let runs = Arc::new(AtomicUsize::new(0));
    let session = AgentSession::builder(model.clone())
        .with_model("test-model")
        .with_toolshed(ToolShed::new().tool(GetWeather).tool(Add))
        .with_every_tool_declared(true)
        .build()
        .unwrap();
    session
        .tool_manager()
        .register(Arc::new(tool_saying_it_ran("late", Arc::clone(&runs))))
        .unwrap();
    let run = session.run("Weather in Paris, and 1 + 2?").await.unwrap();
    assert_eq!(run.text, "Sunny, and 3.");
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["get_weather", "add", "late"]);
    assert!(requests[0].tools.shed.is_none());
    let results = results_of(&requests[1]);
    assert_eq!(results[0].1, "Sunny in Paris");
    assert_eq!(results[1].1, "3");
    assert!(run.tool_calls.iter().all(|call| !call.result.is_error()));
    model.assert_complete();
}

// 4.
#[tokio::test]
async fn calls_of_one_answer_run_concurrently_destructive_ones_alone() {
    // Three tools that meet on a barrier: run one after another, they would time out.
    let barrier = Arc::new(tokio::sync::Barrier::new(3));
    let meeting = |name: &str| {
        let barrier = Arc::clone(&barrier);
        let answer = format!("{name} met the others");
        FnTool::new(
            name,
            "Meets the others.",
            Args::new(scheme::object().build()),
            move |_: ToolArgs<'_>| {
                let barrier = Arc::clone(&barrier);
                let answer = answer.clone();
                async move {
                    tokio::time::timeout(Duration::from_secs(5), barrier.wait())
                        .await
                        .map_err(|_| ToolError::execution("meet", "the others never came"))?;
                    Ok(ToolCallResult::text(answer))
                }
            },
        )
    };
    // Two destructive tools that record how many of them run at once.
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let destructive = |name: &str| {
        let (running, most) = (Arc::clone(&running), Arc::clone(&most));
        FnTool::new(
            name,
            "Deletes something.",
            Args::new(scheme::object().build()),
            move |_: ToolArgs<'_>| {
                let (running, most) = (Arc::clone(&running), Arc::clone(&most));
                async move {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    running.fetch_sub(1, Ordering::SeqCst);
                    Ok(ToolCallResult::text("deleted"))
                }
            },
        )
        .with_annotations(ToolAnnotations {
            destructive: Some(true),
            ..ToolAnnotations::default()
        })
    };
    let model = ScriptedModel::new([
        ScriptedTurn::calls([
            ("meet_a", json!({})),
            ("meet_b", json!({})),
            ("meet_c", json!({})),
        ]),
        ScriptedTurn::calls([("delete_x", json!({})), ("delete_y", json!({}))]),
        ScriptedTurn::text("done"),
    ]);
    let session = active_session(
        &model,
        ToolShed::new()
            .tool(meeting("meet_a"))
            .tool(meeting("meet_b"))
            .tool(meeting("meet_c"))
            .tool(destructive("delete_x"))
            .tool(destructive("delete_y")),
    );
    session.run("go").await.unwrap();
    let requests = model.requests();
    assert_eq!(
        results_of(&requests[1]),
        [
            ("call-1-0".to_owned(), "meet_a met the others".to_owned()),
            ("call-1-1".to_owned(), "meet_b met the others".to_owned()),
            ("call-1-2".to_owned(), "meet_c met the others".to_owned()),
        ]
    );
    assert_eq!(results_of(&requests[2]).len(), 2);
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "destructive tools overlapped"
    );
}

// 5. and 6.
#[tokio::test(start_paused = true)]
async fn every_mistake_goes_back_to_the_model_and_the_run_goes_on() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("get_weather", json!({"city": "Rome"}))
            .and_call("get_weather", json!({"city": "Atlantis"}))
            .and_call("add", json!({"a": 1, "b": 2})),
        ScriptedTurn::call("add", json!({"a": "one", "b": 2}))
            .and_call("get_wether", json!({"city": "Rome"}))
            .and_call("slow_job", json!({}))
            .and_raw_call("add", "{\"a\": 1, \"b\": "),
        ScriptedTurn::text("recovered"),
    ]);
    let session = active_session(
        &model,
        ToolShed::new().tool(GetWeather).tool(Add).tool(SlowJob),
    );
    let run = session.run("go").await.unwrap();
    assert_eq!(run.text, "recovered");
    let requests = model.requests();

    // 5: one of three fails; the others' results are kept and sent.
    let first = results_of(&requests[1]);
    assert_eq!(first[0].1, "Sunny in Rome");
    assert!(
        first[1].1.contains("no weather station in Atlantis"),
        "{}",
        first[1].1
    );
    assert_eq!(first[2].1, "3");
    assert!(
        requests[1].messages.last().unwrap().results()[1]
            .result
            .is_error()
    );

    // 6: invalid arguments (the tool does not run), unknown tool with a suggestion, a
    // timeout, unreadable arguments: each an error result, in call order.
    let second = results_of(&requests[2]);
    assert_eq!(second.len(), 4);
    assert!(second[0].1.contains("/a"), "{}", second[0].1);
    assert!(
        second[1].1.contains("get_weather"),
        "did you mean: {}",
        second[1].1
    );
    // The model learns which limit it ran into (`#[tool_fn(timeout = "50ms")]`).
    assert_eq!(
        second[2].1,
        "Tool 'slow_job' timed out after 50 ms (the call's timeout); what it did before it was stopped may have taken effect: check before calling it again"
    );
    assert!(second[3].1.contains("not valid JSON"), "{}", second[3].1);
    let records: Vec<u32> = run.tool_calls.iter().map(|c| c.attempts).collect();
    assert_eq!(records, [1, 1, 1, 0, 0, 1, 0]);
    model.assert_complete();
}

/// A session without tools offers nothing, `shed` included: a call to `shed` (or to any
/// name) is unknown, and the error lists no tool to call instead. It listed `shed`, which
/// the model had just been told was unknown.
#[tokio::test]
async fn a_session_without_tools_lists_no_tool_to_call() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("shed", json!({"description": "add"})).and_call("add", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("scripted")
        .build()
        .unwrap();
    session.run("go").await.unwrap();
    let requests = model.requests();
    assert!(requests[0].tool_names().is_empty());
    let results = results_of(&requests[1]);
    assert_eq!(results[0].1, "Unknown tool 'shed'.");
    assert_eq!(results[1].1, "Unknown tool 'add'.");
    model.assert_complete();
}

/// A session that declares every tool offers no `shed`, so an unknown tool's error lists
/// the declared tools alone. It listed `shed` too, a tool the model had no declaration of;
/// so did the manager's `render_results`.
#[tokio::test]
async fn every_tool_declared_lists_no_shed_in_errors() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("ad", json!({"a": 1, "b": 2})),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("scripted")
        .with_toolshed(ToolShed::new().tool(Add))
        .with_every_tool_declared(true)
        .build()
        .unwrap();
    session.run("go").await.unwrap();
    let results = results_of(&model.requests()[1]);
    assert_eq!(
        results[0].1,
        "Unknown tool 'ad': did you mean 'add'? The tools you can call are: add."
    );
    model.assert_complete();

    let manager = session.tool_manager();
    let unknown = Err(ToolError::UnknownTool("ad".into()));
    let rendered = manager.render_results(
        toolsmith_core::provider::Provider::OpenAiChat,
        [("call-1", "ad", &unknown)],
    );
    assert_eq!(
        rendered[0]["content"],
        "Error: Unknown tool 'ad': did you mean 'add'? The tools you can call are: add."
    );
    // With `shed` offered, it is listed: the model can call it to find the others.
    manager.set_every_tool_declared(false);
    let rendered = manager.render_results(
        toolsmith_core::provider::Provider::OpenAiChat,
        [("call-1", "ad", &unknown)],
    );
    assert_eq!(
        rendered[0]["content"],
        "Error: Unknown tool 'ad': did you mean 'add'? The tools you can call are: add, shed."
    );
}

// 7.
#[tokio::test]
async fn max_turns_stops_an_endless_script_and_keeps_the_transcript() {
    let endless: Vec<ScriptedTurn> = (0..10)
        .map(|_| ScriptedTurn::call("add", json!({"a": 1, "b": 1})).with_usage(Usage::new(5, 1)))
        .collect();
    let model = ScriptedModel::new(endless.clone());
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Add))
        .with_max_turns(3)
        .build()
        .unwrap();
    session.tool_manager().activate(&["add".into()]);
    let err = session.run("loop").await.unwrap_err();
    let AgenticError::MaxTurns { max_turns, run } = &err else {
        panic!("expected MaxTurns, got {err}");
    };
    assert_eq!(*max_turns, 3);
    assert_eq!(model.requests().len(), 3);
    assert_eq!(run.model_calls, 3);
    assert_eq!(run.usage, Usage::new(15, 3));
    // user + 3 × (calls, results)
    assert_eq!(run.transcript.len(), 7);
    assert_eq!(run.tool_calls.len(), 3);

    // With the final-answer policy: one more call with tools disabled.
    let model = ScriptedModel::new(
        endless[..2]
            .iter()
            .cloned()
            .chain([ScriptedTurn::text("gave up")]),
    );
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Add))
        .with_max_turns(2)
        .with_final_answer_on_limit(true)
        .build()
        .unwrap();
    session.tool_manager().activate(&["add".into()]);
    let run = session.run("loop").await.unwrap();
    assert_eq!(run.text, "gave up");
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[2].options.tool_choice,
        toolsmith_harness::model::ToolChoice::None
    );
    // The answer is kept as any answer is, its stop reason with it.
    assert!(
        matches!(
            run.transcript.last(),
            Some(Message::Assistant {
                text: Some(text),
                stop_reason: Some(toolsmith_harness::model::StopReason::EndTurn),
                ..
            }) if text == "gave up"
        ),
        "{:?}",
        run.transcript.last()
    );
}

/// Records whether the call's context was cancelled when its future was dropped.
struct DropProbe(Arc<Mutex<Option<bool>>>);

impl Drop for DropProbe {
    fn drop(&mut self) {
        let cancelled = ToolCallContext::current().map(|c| c.is_cancelled());
        *self.0.lock().unwrap() = Some(cancelled.unwrap_or(false));
    }
}

// 8.
#[tokio::test(start_paused = true)]
async fn cancellation_stops_a_slow_tool_and_the_model_is_not_called_again() {
    let seen = Arc::new(Mutex::new(None));
    let probe = Arc::clone(&seen);
    let slow = FnTool::new(
        "crawl",
        "Crawls for a long time.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            let probe = DropProbe(Arc::clone(&probe));
            async move {
                let context = ToolCallContext::current().expect("a context");
                context.cancellation().cancelled().await;
                drop(probe);
                std::future::pending::<()>().await;
                Ok(ToolCallResult::text("never"))
            }
        },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::call("crawl", json!({})),
        ScriptedTurn::text("should not be asked"),
    ]);
    let session = active_session(&model, ToolShed::new().tool(slow));
    let token = session.cancellation_token().child_token();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        cancel.cancel();
    });
    let started = tokio::time::Instant::now();
    let err = session
        .run_with_cancellation("crawl", token)
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
    let AgenticError::Cancelled { run } = &err else {
        panic!("expected Cancelled, got {err}");
    };
    assert_eq!(
        *seen.lock().unwrap(),
        Some(true),
        "the tool saw the cancellation"
    );
    assert_eq!(model.requests().len(), 1);
    assert_eq!(model.remaining(), 1);
    assert!(run.tool_calls[0].result.is_error());
    assert!(
        run.transcript.last().unwrap().results()[0]
            .result
            .content
            .to_text()
            .contains("Cancelled")
            || run.tool_calls[0]
                .result
                .content
                .to_text()
                .contains("cancel"),
        "{:?}",
        run.tool_calls[0].result
    );
}

/// Denies `get_weather` for Atlantis, rewrites `add` to add 100, stops on `shutdown`.
struct Policy {
    seen_after: Arc<AtomicUsize>,
}

#[async_trait]
impl ToolHook for Policy {
    async fn before_tool(&self, call: &ToolCallRequest) -> HookDecision {
        match call.name.as_str() {
            "get_weather" if call.arguments.get("city") == Some(&json!("Atlantis")) => {
                HookDecision::Deny("Atlantis is off limits".into())
            }
            "add" => {
                let mut arguments: Value = call.arguments.as_value().clone();
                arguments["b"] = json!(100);
                HookDecision::Rewrite(ToolArguments::try_from(arguments).unwrap())
            }
            "shutdown" => HookDecision::Stop("shutdown requested".into()),
            _ => HookDecision::Allow,
        }
    }

    async fn after_tool(&self, _call: &ToolCallRequest, result: &mut ToolCallResult) {
        self.seen_after.fetch_add(1, Ordering::SeqCst);
        if !result.is_error() {
            *result = ToolCallResult::text(format!("{} (checked)", result.content.to_text()));
        }
    }
}

/// Approves nothing, counting what it was asked.
struct Refuse(Arc<Mutex<Vec<String>>>);

#[async_trait]
impl ToolApproval for Refuse {
    async fn approve(&self, call: &ToolCallRequest) -> ApprovalDecision {
        self.0.lock().unwrap().push(call.name.clone());
        ApprovalDecision::Deny("not today".into())
    }
}

// 9.
#[tokio::test]
async fn hooks_deny_rewrite_and_stop_and_approval_is_asked_for_destructive_tools_only() {
    let deletes = Arc::new(AtomicUsize::new(0));
    let delete =
        tool_saying_it_ran("delete_all", Arc::clone(&deletes)).with_annotations(ToolAnnotations {
            destructive: Some(true),
            ..ToolAnnotations::default()
        });
    let shutdown = tool_saying_it_ran("shutdown", Arc::new(AtomicUsize::new(0)));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let after = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::call("get_weather", json!({"city": "Atlantis"}))
            .and_call("add", json!({"a": 1, "b": 2}))
            .and_call("delete_all", json!({}))
            .and_call("get_weather", json!({"city": "Oslo"})),
        ScriptedTurn::call("shutdown", json!({})).and_call("add", json!({"a": 0, "b": 0})),
        ScriptedTurn::text("unreachable"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(
            ToolShed::new()
                .tool(GetWeather)
                .tool(Add)
                .tool(delete)
                .tool(shutdown),
        )
        .with_hook(Policy {
            seen_after: Arc::clone(&after),
        })
        .with_approval(Refuse(Arc::clone(&asked)))
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let err = session.run("go").await.unwrap_err();
    let AgenticError::Stopped { reason, run } = &err else {
        panic!("expected Stopped, got {err}");
    };
    assert_eq!(reason, "shutdown requested");
    let first = &run.tool_calls[..4];
    assert_eq!(first[0].denied.as_deref(), Some("Atlantis is off limits"));
    assert!(
        first[0]
            .result
            .content
            .to_text()
            .contains("Atlantis is off limits")
    );
    assert!(first[1].rewritten);
    assert_eq!(first[1].arguments.as_value(), &json!({"a": 1, "b": 100}));
    assert_eq!(first[1].result.content.to_text(), "101 (checked)");
    assert_eq!(first[2].denied.as_deref(), Some("not today"));
    assert_eq!(deletes.load(Ordering::SeqCst), 0);
    assert_eq!(first[3].result.content.to_text(), "Sunny in Oslo (checked)");
    // Approval was asked once: for the destructive tool only.
    assert_eq!(*asked.lock().unwrap(), ["delete_all"]);
    assert_eq!(after.load(Ordering::SeqCst), 2);
    // The stopped turn ran nothing; its calls' results say why, so the transcript is whole.
    let last = run.transcript.last().unwrap().results();
    assert_eq!(last.len(), 2);
    assert!(
        last.iter()
            .all(|r| r.result.content.to_text().contains("stopped"))
    );
    assert_eq!(model.requests().len(), 2);

    // A closure approves too.
    let model = ScriptedModel::new([
        ScriptedTurn::call("delete_all", json!({})),
        ScriptedTurn::text("deleted"),
    ]);
    let deletes = Arc::new(AtomicUsize::new(0));
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(
            tool_saying_it_ran("delete_all", Arc::clone(&deletes)).with_annotations(
                ToolAnnotations {
                    destructive: Some(true),
                    ..ToolAnnotations::default()
                },
            ),
        ))
        .with_approval(|call: &ToolCallRequest| call.name == "delete_all")
        .build()
        .unwrap();
    session.tool_manager().activate(&["delete_all".into()]);
    session.run("delete").await.unwrap();
    assert_eq!(deletes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_denied_call_is_reported_once_by_who_denied_it_and_an_allowed_one_is_not() {
    let deletes = Arc::new(AtomicUsize::new(0));
    let delete =
        tool_saying_it_ran("delete_all", Arc::clone(&deletes)).with_annotations(ToolAnnotations {
            destructive: Some(true),
            ..ToolAnnotations::default()
        });
    let asked = Arc::new(Mutex::new(Vec::new()));
    let after = Arc::new(AtomicUsize::new(0));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let model = ScriptedModel::new([
        ScriptedTurn::call("get_weather", json!({"city": "Oslo"}))
            .and_call("get_weather", json!({"city": "Atlantis"}))
            .and_call("delete_all", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(GetWeather).tool(delete))
        .with_hook(Policy {
            seen_after: Arc::clone(&after),
        })
        .with_approval(Refuse(Arc::clone(&asked)))
        .with_event_handler(move |event: &AgentEvent| sink.lock().unwrap().push(event.clone()))
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("go").await.unwrap();
    let [oslo, atlantis, delete_call] = &run.tool_calls[..] else {
        panic!("three calls expected: {:?}", run.tool_calls);
    };
    assert_eq!(deletes.load(Ordering::SeqCst), 0);
    // Only the call that ran saw `after_tool`.
    assert_eq!(after.load(Ordering::SeqCst), 1);

    let events = events.lock().unwrap();
    let denials: Vec<&AgentEvent> = events
        .iter()
        .filter(|event| matches!(event, AgentEvent::ToolCallDenied { .. }))
        .collect();
    assert_eq!(
        denials,
        [
            &AgentEvent::ToolCallDenied {
                call_id: atlantis.call_id.clone(),
                name: "get_weather".into(),
                by: DeniedBy::Hook,
                reason: "Atlantis is off limits".into(),
            },
            &AgentEvent::ToolCallDenied {
                call_id: delete_call.call_id.clone(),
                name: "delete_all".into(),
                by: DeniedBy::Approval,
                reason: "not today".into(),
            },
        ]
    );
    // The reason is the one the record keeps and the model reads.
    assert_eq!(atlantis.denied.as_deref(), Some("Atlantis is off limits"));
    assert!(delete_call.result.content.to_text().contains("not today"));
    // The allowed call is started and finished, never denied; a denied one never starts.
    let started: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCallStarted { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, [oslo.call_id.as_str()]);
    // Denials come where a started call would: after the answer, before the turn ends.
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| match event {
            AgentEvent::ModelRequest { .. } => "request",
            AgentEvent::ModelResponse { .. } => "response",
            AgentEvent::ToolCallDenied { .. } => "denied",
            AgentEvent::ToolCallStarted { .. } => "started",
            AgentEvent::ToolCallFinished { .. } => "finished",
            AgentEvent::TurnFinished { .. } => "turn",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "request", "response", "denied", "denied", "started", "finished", "turn", "request",
            "response"
        ]
    );
}

#[tokio::test]
async fn events_report_progress_in_order() {
    let reporting = FnTool::new(
        "index",
        "Indexes files.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async {
            let context = ToolCallContext::current().expect("a context");
            context.progress(1.0, Some(2.0), "half way");
            Ok(ToolCallResult::text("indexed"))
        },
    );
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let model = ScriptedModel::new([
        ScriptedTurn::call("index", json!({})).with_usage(Usage::new(3, 1)),
        ScriptedTurn::text("ok"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(reporting))
        .with_streaming(true)
        .with_event_handler(move |event: &AgentEvent| sink.lock().unwrap().push(event.clone()))
        .build()
        .unwrap();
    session.tool_manager().activate(&["index".into()]);
    session.run("index").await.unwrap();
    let kinds: Vec<&str> = events
        .lock()
        .unwrap()
        .iter()
        .map(|e| match e {
            AgentEvent::ModelRequest { .. } => "request",
            AgentEvent::TextDelta(_) => "delta",
            AgentEvent::ModelResponse { .. } => "response",
            AgentEvent::ToolCallStarted { .. } => "started",
            AgentEvent::ToolCallProgress(p) if p.message.as_deref() == Some("half way") => {
                "progress"
            }
            AgentEvent::ToolCallFinished {
                is_error: false, ..
            } => "finished",
            AgentEvent::TurnFinished { .. } => "turn",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "request", "response", "started", "progress", "finished", "turn", "request", "delta",
            "response"
        ]
    );
}

/// Opens `gate` once it has seen a result of `opener`.
struct OpenGateAfter {
    opener: &'static str,
    gate: Arc<tokio::sync::Notify>,
}

#[async_trait]
impl ToolHook for OpenGateAfter {
    async fn after_tool(&self, call: &ToolCallRequest, result: &mut ToolCallResult) {
        if call.name == self.opener {
            assert_eq!(result.content.to_text(), "quick ran");
            self.gate.notify_one();
        }
    }
}

#[tokio::test]
async fn each_call_of_a_turn_finishes_as_it_ends_while_the_others_run() {
    // `gated` runs until the `after_tool` hook of `quick`'s call opens its gate: it ends only
    // if a call's hooks and event come as the call ends, while the turn's other calls run.
    let gate = Arc::new(tokio::sync::Notify::new());
    let waits = Arc::clone(&gate);
    let gated = FnTool::new(
        "gated",
        "Waits for its gate.",
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            let gate = Arc::clone(&waits);
            async move {
                gate.notified().await;
                Ok(ToolCallResult::text("gated ran"))
            }
        },
    );
    let quick = tool_saying_it_ran("quick", Arc::new(AtomicUsize::new(0)));
    let model = ScriptedModel::new([
        ScriptedTurn::text("")
            .and_call_with_id("c1", "gated", json!({}))
            .and_call_with_id("c2", "quick", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(gated).tool(quick))
        .with_hook(OpenGateAfter {
            opener: "quick",
            gate,
        })
        .with_event_handler(move |event: &AgentEvent| sink.lock().unwrap().push(event.clone()))
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    // The limit only turns a hang (the old order: hooks after the whole batch) into a failure.
    let run = tokio::time::timeout(Duration::from_secs(60), session.run("go"))
        .await
        .expect("the gated call ended: the quick call's hook ran while it waited")
        .unwrap();
    let calls: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCallStarted { call_id, .. } => Some(format!("started {call_id}")),
            AgentEvent::ToolCallFinished {
                call_id, summary, ..
            } => Some(format!("finished {call_id}: {summary}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            "started c1",
            "started c2",
            "finished c2: quick ran",
            "finished c1: gated ran"
        ]
    );
    // The records and the results the model reads keep the order of its calls.
    let recorded: Vec<&str> = run.tool_calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(recorded, ["c1", "c2"]);
    assert_eq!(
        results_of(&model.requests()[1]),
        [
            ("c1".to_owned(), "gated ran".to_owned()),
            ("c2".to_owned(), "quick ran".to_owned())
        ]
    );
}

/// Counts how the session asked: whole answers, or streamed ones.
#[derive(Default)]
struct CountingModel {
    completed: AtomicUsize,
    streamed: AtomicUsize,
}

#[async_trait]
impl ChatModel for CountingModel {
    fn name(&self) -> &str {
        "counting"
    }

    async fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.completed.fetch_add(1, Ordering::Relaxed);
        Ok(ChatResponse::text("whole"))
    }

    async fn stream(
        &self,
        _: &ChatRequest,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, ModelError> {
        self.streamed.fetch_add(1, Ordering::Relaxed);
        on_delta(StreamDelta::Text("str".into()));
        on_delta(StreamDelta::Text("eamed".into()));
        Ok(ChatResponse::text("streamed"))
    }
}

#[tokio::test]
async fn a_session_streams_only_when_built_to() {
    for streaming in [false, true] {
        let model = Arc::new(CountingModel::default());
        let deltas = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&deltas);
        let session = AgentSession::builder(Arc::clone(&model) as Arc<dyn ChatModel>)
            .with_model("m")
            .with_streaming(streaming)
            .with_event_handler(move |event: &AgentEvent| {
                if let AgentEvent::TextDelta(piece) = event {
                    sink.lock().unwrap().push_str(piece);
                }
            })
            .build()
            .unwrap();
        let run = session.run("hi").await.unwrap();
        if streaming {
            assert_eq!(run.text, "streamed");
            assert_eq!(*deltas.lock().unwrap(), "streamed");
            assert_eq!(model.completed.load(Ordering::Relaxed), 0);
        } else {
            assert_eq!(run.text, "whole");
            assert_eq!(*deltas.lock().unwrap(), "");
            assert_eq!(model.streamed.load(Ordering::Relaxed), 0);
        }
    }
}

#[tokio::test]
async fn a_model_error_ends_the_run_with_what_was_done() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("add", json!({"a": 1, "b": 2})),
        ScriptedTurn::error(ModelError::Api {
            provider: "openai_chat".into(),
            status: 400,
            message: "Invalid 'messages[2]'".into(),
        }),
    ]);
    let session = active_session(&model, ToolShed::new().tool(Add));
    let err = session.run("add").await.unwrap_err();
    assert!(err.to_string().contains("Invalid 'messages[2]'"), "{err}");
    let run = err.run().expect("the run so far");
    assert_eq!(run.model_calls, 2);
    assert_eq!(run.tool_calls[0].result.content.to_text(), "3");
}

#[tokio::test]
async fn send_keeps_the_conversation() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Hi Ada."),
        ScriptedTurn::text("You are Ada."),
    ]);
    let session = session(&model, ToolShed::new());
    session.send("I am Ada.").await.unwrap();
    let run = session.send("Who am I?").await.unwrap();
    assert_eq!(run.text, "You are Ada.");
    assert_eq!(model.requests()[1].messages.len(), 3);
    assert_eq!(session.transcript().await.len(), 4);
    // `run` starts afresh.
    model.push([ScriptedTurn::text("Hello.")]);
    session.run("Hello").await.unwrap();
    assert_eq!(model.requests()[2].messages.len(), 1);
}

#[tokio::test]
async fn a_session_needs_a_model_name_and_runs_on_any_task() {
    let err = AgentSession::builder(ScriptedModel::default())
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("with_model"), "{err}");
    let model = ScriptedModel::new([ScriptedTurn::text("spawned")]);
    let session = Arc::new(session(&model, ToolShed::new()));
    let run = tokio::spawn(async move { session.run("hi").await })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.text, "spawned");
}

/// Index a folder, reporting progress.
#[tool_fn]
async fn index_folder(
    /// The folder.
    folder: String,
    #[ctx] call: ToolCallContext,
) -> String {
    call.progress(1.0, Some(1.0), "indexed");
    format!("{folder} indexed by call {}", call.call_id())
}

/// Tell which call this is.
#[tool_fn]
fn which_call(#[ctx] call: ToolCallContext) -> String {
    format!(
        "{} of {}, cancelled: {}",
        call.call_id(),
        call.tool(),
        call.is_cancelled()
    )
}

#[tokio::test]
async fn tool_fn_functions_take_the_call_context_as_a_ctx_parameter() {
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&progress);
    let model = ScriptedModel::new([
        ScriptedTurn::call("index_folder", json!({"folder": "src"}))
            .and_call("which_call", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(IndexFolder).tool(WhichCall))
        .with_event_handler(move |event: &AgentEvent| {
            if let AgentEvent::ToolCallProgress(p) = event {
                sink.lock()
                    .unwrap()
                    .push((p.call_id.clone(), p.message.clone()));
            }
        })
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("index").await.unwrap();
    assert_eq!(
        run.tool_calls[0].result.content.to_text(),
        "src indexed by call call-1-0"
    );
    assert_eq!(
        run.tool_calls[1].result.content.to_text(),
        "call-1-1 of which_call, cancelled: false"
    );
    assert_eq!(
        *progress.lock().unwrap(),
        [("call-1-0".to_owned(), Some("indexed".to_owned()))]
    );
    // The context parameter is not an argument the model sends.
    let schema = IndexFolder.definition().function_spec().parameters;
    assert_eq!(schema["required"], json!(["folder"]));
    // Outside a runner that sets one, the context is detached.
    let request = ToolCallRequest::new("x", "which_call", ToolArguments::new());
    let manager = toolsmith_core::ToolCallManager::new("s");
    manager.register(Arc::new(WhichCall)).unwrap();
    let result = manager.execute_one(&request).await.unwrap();
    assert_eq!(result.content.to_text(), " of which_call, cancelled: false");
}

// 11.
/// A recorded run replays with identical requests, and those requests match the golden file
/// (`UPDATE_GOLDEN=1` rewrites it): any drift in what the loop sends fails here.
#[tokio::test]
async fn a_replay_cuts_off_an_answer_the_recorded_run_had_cut_off() {
    use toolsmith_harness::model::StopReason;

    let recorded = ScriptedModel::new([
        ScriptedTurn::call("add", json!({"a": 2, "b": 3})).with_stop_reason(StopReason::MaxTokens),
        ScriptedTurn::text("I ran out of room."),
    ]);
    let build = |model: &ScriptedModel| {
        let session = AgentSession::builder(model.clone())
            .with_model("m")
            .with_toolshed(ToolShed::new().tool(Add))
            .build()
            .unwrap();
        session.tool_manager().activate(&["add".into()]);
        session
    };
    let run = build(&recorded).run("2 + 3?").await.unwrap();
    assert!(
        run.tool_calls[0].result.is_error(),
        "the cut call did not run"
    );
    let replay = build(&ScriptedModel::replaying(&run.transcript))
        .run("2 + 3?")
        .await
        .unwrap();
    assert_eq!(replay.transcript, run.transcript);
    assert!(
        replay.tool_calls[0].result.is_error(),
        "nor does its replay"
    );
}

#[tokio::test]
async fn a_recorded_transcript_replays_with_identical_requests() {
    let script = || {
        ScriptedModel::new([
            ScriptedTurn::call(
                "shed",
                json!({"description": "weather in a city", "limit": 1}),
            ),
            ScriptedTurn::call("get_weather", json!({"city": "Paris"}))
                .and_call("get_weather", json!({"town": "Rome"}))
                .with_text("Looking it up."),
            ScriptedTurn::call("get_weather", json!({"city": "Atlantis"})),
            ScriptedTurn::text("Paris is sunny; Atlantis has no station."),
        ])
    };
    let build = |model: &ScriptedModel| {
        AgentSession::builder(model.clone())
            .with_model("golden-model")
            .with_system_prompt("Answer briefly.")
            .with_session_id("golden")
            .with_toolshed(ToolShed::new().tool(GetWeather).tool(Add))
            .build()
            .unwrap()
    };
    let recorded = script();
    let run = build(&recorded)
        .run("Weather in Paris and Rome?")
        .await
        .unwrap();
    let replayed = ScriptedModel::replaying(&run.transcript);
    let replay = build(&replayed)
        .run("Weather in Paris and Rome?")
        .await
        .unwrap();
    replayed.assert_complete();
    assert_eq!(replay.transcript, run.transcript);
    assert_eq!(replayed.requests(), recorded.requests());

    let sent = serde_json::to_value(recorded.requests()).unwrap();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent/requests.json");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, serde_json::to_string_pretty(&sent).unwrap() + "\n").unwrap();
    }
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect(
        "the golden file exists (UPDATE_GOLDEN=1 cargo test -p toolsmith-harness --test integration agent_session writes it)",
    ))
    .unwrap();
    assert_eq!(sent, golden, "the requests drifted from {}", path.display());
}

/// A tool that fails with a network error on its first run and succeeds after.
fn flaky_once(name: &str, runs: Arc<AtomicUsize>) -> FnTool {
    let tool = name.to_owned();
    FnTool::new(
        name,
        format!("A tool named {name} whose first run fails."),
        Args::new(scheme::object().build()),
        move |_: ToolArgs<'_>| {
            let first = runs.fetch_add(1, Ordering::SeqCst) == 0;
            let tool = tool.clone();
            async move {
                if first {
                    Err(ToolError::network(tool, "connection reset"))
                } else {
                    Ok(ToolCallResult::text(format!("{tool} ok")))
                }
            }
        },
    )
}

// 12.
#[tokio::test]
async fn the_retry_policy_covers_tools_registered_after_the_build() {
    let (early_runs, late_runs) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let model = ScriptedModel::new([
        ScriptedTurn::calls([("early", json!({})), ("late", json!({}))]),
        ScriptedTurn::text("both done"),
    ]);
    let policy = ToolRetryConfig::fixed(1, Duration::ZERO);
    let session = AgentSession::builder(model.clone())
        .with_model("test-model")
        .with_toolshed(ToolShed::new().tool(flaky_once("early", Arc::clone(&early_runs))))
        .with_retry_policy(policy.clone())
        .build()
        .unwrap();
    let manager = session.tool_manager();
    manager
        .register(Arc::new(flaky_once("late", Arc::clone(&late_runs))))
        .unwrap();
    manager.activate(&manager.names());
    assert_eq!(manager.retry_config("late"), Some(policy));

    let run = session.run("call both").await.unwrap();
    assert_eq!(run.text, "both done");
    let attempts: Vec<_> = run
        .tool_calls
        .iter()
        .map(|outcome| (outcome.name.as_str(), outcome.attempts))
        .collect();
    assert_eq!(attempts, [("early", 2), ("late", 2)]);
    assert_eq!(
        results_of(&model.requests()[1]),
        [
            ("call-1-0".to_owned(), "early ok".to_owned()),
            ("call-1-1".to_owned(), "late ok".to_owned())
        ]
    );
    assert_eq!(
        (
            early_runs.load(Ordering::SeqCst),
            late_runs.load(Ordering::SeqCst)
        ),
        (2, 2)
    );
    model.assert_complete();
}

/// An approval that waits for a person who never answers.
/// An approval that counts the calls it is asked about, says so on `asked`, and never answers.
struct NeverAnswers {
    count: Arc<AtomicUsize>,
    asked: Arc<tokio::sync::Notify>,
}

#[async_trait]
impl ToolApproval for NeverAnswers {
    async fn approve(&self, _: &ToolCallRequest) -> ApprovalDecision {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.asked.notify_one();
        std::future::pending().await
    }
}

fn destructive(tool: FnTool) -> FnTool {
    tool.with_annotations(ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    })
}

// 13.
#[tokio::test]
async fn cancellation_ends_a_wait_for_approval_and_asks_nothing_for_calls_that_cannot_run() {
    let asked = Arc::new(AtomicUsize::new(0));
    let waiting = Arc::new(tokio::sync::Notify::new());
    let deletes = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        // `hidden` is destructive but not offered: nobody is asked about it.
        ScriptedTurn::call("hidden", json!({})).and_call("delete_all", json!({})),
        ScriptedTurn::text("unreachable"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(
            ToolShed::new()
                .tool(destructive(tool_saying_it_ran(
                    "delete_all",
                    Arc::clone(&deletes),
                )))
                .tool(destructive(tool_saying_it_ran(
                    "hidden",
                    Arc::clone(&deletes),
                ))),
        )
        .with_approval(NeverAnswers {
            count: Arc::clone(&asked),
            asked: Arc::clone(&waiting),
        })
        .build()
        .unwrap();
    session.tool_manager().activate(&["delete_all".into()]);
    let token = CancellationToken::new();
    let cancel = token.clone();
    // Cancelled once the run waits for the approval (not after a sleep, which a slow
    // machine could end before the run had asked).
    tokio::spawn(async move {
        waiting.notified().await;
        cancel.cancel();
    });
    let ended = tokio::time::timeout(
        Duration::from_secs(5),
        session.run_with_cancellation("delete everything", token),
    )
    .await
    .expect("the cancellation ends the wait for approval");
    let AgenticError::Cancelled { run } = ended.unwrap_err() else {
        panic!("expected Cancelled");
    };
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(deletes.load(Ordering::SeqCst), 0);
    let results: Vec<String> = run
        .tool_calls
        .iter()
        .map(|call| call.result.content.to_text())
        .collect();
    assert!(results[0].contains("not active"), "{results:?}");
    assert_eq!(results[1], "not run: the run was cancelled");
    assert_eq!(model.requests().len(), 1);
}

// 14.
#[tokio::test]
async fn the_sessions_token_cancels_runs_under_tokens_of_their_own() {
    let model = ScriptedModel::new([ScriptedTurn::text("ran anyway")]);
    let session = session(&model, ToolShed::new());
    // A token of the caller's, cancelled already.
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let ended = session.run_with_cancellation("x", cancelled).await;
    assert!(matches!(ended, Err(AgenticError::Cancelled { .. })));
    session.cancellation_token().cancel();
    let ended = session
        .run_with_cancellation("x", CancellationToken::new())
        .await;
    assert!(matches!(ended, Err(AgenticError::Cancelled { .. })));
    assert!(model.requests().is_empty());
}

// 15.
#[tokio::test]
async fn a_send_dropped_midway_leaves_the_conversation_as_it_was() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Hello, Ada."),
        ScriptedTurn::text("never heard").with_delay(Duration::from_secs(10)),
        ScriptedTurn::text("You are Ada."),
    ]);
    let session = session(&model, ToolShed::new());
    session.send("I am Ada.").await.unwrap();
    let before = session.transcript().await;
    assert_eq!(before.len(), 2);
    assert!(
        tokio::time::timeout(Duration::from_millis(50), session.send("Who am I?"))
            .await
            .is_err()
    );
    assert_eq!(session.transcript().await, before);
    let run = session.send("Who am I?").await.unwrap();
    assert_eq!(run.text, "You are Ada.");
    assert_eq!(session.transcript().await.len(), 4);
}

// 16.
#[tokio::test]
async fn an_answer_that_comes_with_the_cancellation_still_counts_its_tokens() {
    let token = CancellationToken::new();
    let cancel = token.clone();
    let model = ScriptedModel::new([ScriptedTurn::respond(move |_| {
        cancel.cancel();
        Ok(ChatResponse::text("late").with_usage(Usage::new(100, 50)))
    })]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_cancellation(token)
        .build()
        .unwrap();
    let AgenticError::Cancelled { run } = session.run("x").await.unwrap_err() else {
        panic!("expected Cancelled");
    };
    assert_eq!((run.model_calls, run.usage), (1, Usage::new(100, 50)));
}

// 17.
#[tokio::test]
async fn the_final_answer_on_the_limit_keeps_its_text_even_with_calls() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("add", json!({"a": 1, "b": 2})),
        ScriptedTurn::call("add", json!({"a": 3, "b": 4})).with_text("The sum is 3."),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Add))
        .with_max_turns(1)
        .with_final_answer_on_limit(true)
        .build()
        .unwrap();
    session.tool_manager().activate(&["add".into()]);
    let run = session.run("add").await.unwrap();
    assert_eq!(run.text, "The sum is 3.");
    assert_eq!(run.tool_calls.len(), 1);
    assert_eq!(
        run.transcript.last(),
        Some(&Message::assistant("The sum is 3."))
    );
}

// 18.
#[tokio::test]
async fn a_repeated_call_id_keeps_only_that_call_from_running() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::text("")
            .and_call_with_id("dup", "ping", json!({}))
            .and_call_with_id("dup", "ping", json!({}))
            .and_call_with_id("other", "ping", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let session = active_session(
        &model,
        ToolShed::new().tool(tool_saying_it_ran("ping", Arc::clone(&runs))),
    );
    let run = session.run("ping").await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    let results = results_of(&model.requests()[1]);
    assert_eq!(results[0], ("dup".to_owned(), "ping ran".to_owned()));
    assert!(
        results[1]
            .1
            .contains("an earlier call of this answer has the id 'dup'")
    );
    assert_eq!(results[2], ("other".to_owned(), "ping ran".to_owned()));
    assert_eq!(run.text, "done");
}

// 19.
#[tokio::test]
async fn a_computed_scripted_answer_reports_the_usage_it_is_given() {
    let model = ScriptedModel::new([
        ScriptedTurn::respond(|_| Ok(ChatResponse::text("hi"))).with_usage(Usage::new(9, 9))
    ]);
    let run = session(&model, ToolShed::new()).run("x").await.unwrap();
    assert_eq!(run.usage, Usage::new(9, 9));
}

// 20.
#[tokio::test]
async fn calls_of_an_answer_cut_off_at_the_token_limit_do_not_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::respond(|_| {
            let mut response = ChatResponse::calls(vec![Ok(ToolCallRequest::new(
                "c1",
                "ping",
                ToolArguments::new(),
            ))]);
            response.stop_reason = toolsmith_harness::model::StopReason::MaxTokens;
            Ok(response)
        }),
        ScriptedTurn::call("ping", json!({})),
        ScriptedTurn::respond(|_| {
            let mut response = ChatResponse::text("");
            response.stop_reason = toolsmith_harness::model::StopReason::ContentFilter;
            Ok(response)
        }),
    ]);
    let session = active_session(
        &model,
        ToolShed::new().tool(tool_saying_it_ran("ping", Arc::clone(&runs))),
    );
    let run = session.run("ping").await.unwrap();
    // The cut-off answer's call was answered, not run; the next answer's call ran.
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let first = &results_of(&model.requests()[1])[0];
    assert_eq!(first.0, "c1");
    assert!(
        first.1.contains("cut off at the output token limit"),
        "{}",
        first.1
    );
    // An empty final text says why it is empty.
    assert_eq!(run.text, "");
    assert_eq!(
        run.stop_reason,
        Some(toolsmith_harness::model::StopReason::ContentFilter)
    );
}

// 21.
#[tokio::test]
async fn a_tool_found_by_shed_runs_in_the_same_answer_and_is_still_approved() {
    let deletes = Arc::new(AtomicUsize::new(0));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        // The tool is called before `shed` in the answer: the search still runs first.
        ScriptedTurn::call("get_weather", json!({"city": "Paris"}))
            .and_call("delete_all", json!({}))
            .and_call(
                "shed",
                json!({"description": "select:get_weather,delete_all"}),
            ),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(
            ToolShed::new()
                .tool(GetWeather)
                .tool(destructive(tool_saying_it_ran(
                    "delete_all",
                    Arc::clone(&deletes),
                ))),
        )
        .with_approval(Refuse(Arc::clone(&asked)))
        .build()
        .unwrap();
    let run = session.run("weather, then clean up").await.unwrap();
    let results = results_of(&model.requests()[1]);
    assert_eq!(results[0].1, "Sunny in Paris");
    // Found in the same answer, the destructive tool was still put to the approval.
    assert_eq!(*asked.lock().unwrap(), ["delete_all"]);
    assert!(results[1].1.contains("not today"), "{}", results[1].1);
    assert_eq!(deletes.load(Ordering::SeqCst), 0);
    assert!(results[2].1.contains("get_weather"), "{}", results[2].1);
    assert_eq!(run.text, "done");
}

/// An embedder that takes 120 ms an embedding (the `shed`'s search by meaning is slow).
struct SlowEmbedder;

#[async_trait]
impl toolsmith_core::Embedder for SlowEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, toolsmith_core::ServiceError> {
        tokio::time::sleep(Duration::from_millis(120)).await;
        Ok(texts.iter().map(|_| vec![1.0, 0.5]).collect())
    }

    fn dimensions(&self) -> usize {
        2
    }
}

#[tokio::test(start_paused = true)]
async fn the_turn_deadline_covers_an_answer_that_searches_and_calls_together() {
    let nap = FnTool::new(
        "nap",
        "Sleeps 300 ms.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(ToolCallResult::text("slept"))
        },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::call("shed", json!({"description": "sleep"})).and_call("nap", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_embedder(Arc::new(SlowEmbedder))
        .with_toolshed(ToolShed::new().tool(nap))
        .with_turn_deadline(Duration::from_millis(400))
        .build()
        .unwrap();
    let started = tokio::time::Instant::now();
    let run = session.run("nap").await.unwrap();
    // The search (two embeddings, 240 ms) found `nap`; `nap` then had the 160 ms left of the
    // answer's 400, not 400 of its own.
    assert!(!run.tool_calls[0].result.is_error(), "{run:?}");
    let nap = run.tool_calls[1].result.content.to_text();
    assert_eq!(
        nap,
        "Tool 'nap' timed out after 400 ms (the turn's deadline); what it did before it was stopped may have taken effect: check before calling it again"
    );
    assert!(started.elapsed() < Duration::from_millis(500));
}

/// A destructive tool that sleeps 300 ms: such calls run one at a time.
fn slow_delete(name: &str) -> FnTool {
    FnTool::new(
        name,
        "Deletes something slowly.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(ToolCallResult::text("deleted"))
        },
    )
    .with_annotations(ToolAnnotations {
        destructive: Some(true),
        ..ToolAnnotations::default()
    })
}

#[tokio::test(start_paused = true)]
async fn a_call_the_turn_deadline_stops_or_keeps_from_running_is_told_the_deadline() {
    let model = ScriptedModel::new([
        ScriptedTurn::calls([
            ("first", json!({})),
            ("second", json!({})),
            ("third", json!({})),
        ]),
        ScriptedTurn::text("done"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(
            ToolShed::new()
                .tool(slow_delete("first"))
                .tool(slow_delete("second"))
                .tool(slow_delete("third")),
        )
        .with_turn_deadline(Duration::from_millis(400))
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("clean up").await.unwrap();
    let texts: Vec<String> = run
        .tool_calls
        .iter()
        .map(|call| call.result.content.to_text())
        .collect();
    // One at a time: the first ends at 300 ms, the second is stopped at 400 ms, the third
    // never starts.
    assert_eq!(
        texts,
        [
            "deleted",
            "Tool 'second' timed out after 400 ms (the turn's deadline); what it did before it was stopped may have taken effect: check before calling it again",
            "not run: the turn's deadline of 400 ms passed",
        ]
    );
    assert_eq!(results_of(&model.requests()[1])[2].1, texts[2]);
}

/// An `after_tool` hook that takes 500 ms over `first`'s result.
struct SlowAfterFirst;

#[async_trait]
impl ToolHook for SlowAfterFirst {
    async fn after_tool(&self, call: &ToolCallRequest, _: &mut ToolCallResult) {
        if call.name == "first" {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_that_gives_up_before_the_turn_deadline_is_not_said_to_have_met_it() {
    let first = tool_saying_it_ran("first", Arc::new(AtomicUsize::new(0)));
    // Gives up on its own at 100 ms, well before the deadline.
    let quits = FnTool::new(
        "quits",
        "Gives up.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Err(ToolError::Cancelled("the service hung up".into()))
        },
    );
    let model = ScriptedModel::new([
        ScriptedTurn::calls([("first", json!({})), ("quits", json!({}))]),
        ScriptedTurn::text("done"),
    ]);
    // The hook over `first`'s result holds the turn past the 400 ms deadline, while
    // `quits`'s outcome waits its turn to be written.
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(first).tool(quits))
        .with_hook(SlowAfterFirst)
        .with_turn_deadline(Duration::from_millis(400))
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    session.run("go").await.unwrap();
    let results = results_of(&model.requests()[1]);
    assert_eq!(results[0].1, "first ran");
    assert_eq!(results[1].1, "Cancelled: the service hung up");
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_is_told_its_own_limit_and_only_when_that_expired() {
    // Read-only, so retried: each of its attempts has the 50 ms limit.
    let lookup = FnTool::new(
        "lookup",
        "Looks something up.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok(ToolCallResult::text("found"))
        },
    )
    .with_annotations(ToolAnnotations::read_only())
    .with_timeout(Duration::from_millis(50));
    // Reports a timeout of its own at once: its 10 s limit never expired.
    let gauge = FnTool::new(
        "gauge",
        "Reads a gauge.",
        Args::new(scheme::object().build()),
        |_: ToolArgs<'_>| async { Err(ToolError::timeout("gauge")) },
    )
    .with_timeout(Duration::from_secs(10));
    let model = ScriptedModel::new([
        ScriptedTurn::calls([("lookup", json!({})), ("gauge", json!({}))]),
        ScriptedTurn::text("done"),
    ]);
    let session = active_session(&model, ToolShed::new().tool(lookup).tool(gauge));
    let run = session.run("look it up").await.unwrap();
    assert!(run.tool_calls[0].attempts > 1, "{:?}", run.tool_calls[0]);
    let results = results_of(&model.requests()[1]);
    assert_eq!(
        results[0].1,
        "Tool 'lookup' timed out after 50 ms (the call's timeout)"
    );
    assert_eq!(results[1].1, "Tool 'gauge' timed out");
}

#[tokio::test]
async fn no_approval_is_asked_for_a_tool_only_a_denied_search_could_give() {
    let asked = Arc::new(AtomicUsize::new(0));
    let deletes = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new([
        ScriptedTurn::call("shed", json!({"description": "delete everything"}))
            .and_call("delete_all", json!({})),
        ScriptedTurn::text("done"),
    ]);
    let counter = Arc::clone(&asked);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(destructive(tool_saying_it_ran(
            "delete_all",
            Arc::clone(&deletes),
        ))))
        .with_hook(DecideFor {
            tool: "shed",
            decision: HookDecision::Deny("no searching".into()),
        })
        .with_approval(move |_: &ToolCallRequest| {
            counter.fetch_add(1, Ordering::SeqCst);
            true
        })
        .build()
        .unwrap();
    let run = session.run("go").await.unwrap();
    let results: Vec<String> = run
        .tool_calls
        .iter()
        .map(|c| c.result.content.to_text())
        .collect();
    assert!(results[0].contains("no searching"), "{results:?}");
    assert!(results[1].contains("not active"), "{results:?}");
    assert_eq!(deletes.load(Ordering::SeqCst), 0);
    assert_eq!(asked.load(Ordering::SeqCst), 0, "{results:?}");
}

/// A token cancelled while the run goes on without waiting (a tool that ends at once, a
/// model that answers at once) stops the run before the next model call.
#[tokio::test]
async fn a_token_cancelled_during_a_turn_stops_the_run_before_the_next_model_call() {
    let script = || {
        ScriptedModel::new([
            ScriptedTurn::call("quit", json!({})),
            ScriptedTurn::text("asked again"),
        ])
    };
    let quitting = |token: CancellationToken| {
        FnTool::new(
            "quit",
            "Ends the run.",
            Args::new(scheme::object().build()),
            move |_: ToolArgs<'_>| {
                token.cancel();
                async { Ok(ToolCallResult::text("bye")) }
            },
        )
    };
    let assert_stopped = |ended: Result<_, AgenticError>, model: &ScriptedModel| {
        let Err(AgenticError::Cancelled { run }) = ended else {
            panic!("expected a cancelled run, got {ended:?}");
        };
        assert_eq!(model.requests().len(), 1, "the model was called again");
        assert_eq!(run.model_calls, 1);
        assert_eq!(
            run.transcript.last().unwrap().results()[0].call_id,
            "call-1-0"
        );
    };

    // The caller's token, cancelled by a tool.
    let token = CancellationToken::new();
    let model = script();
    let session = active_session(&model, ToolShed::new().tool(quitting(token.clone())));
    assert_stopped(session.run_with_cancellation("go", token).await, &model);

    // A session whose event handler cancels `token` at the turn's end (the session's own
    // token when `own` is set).
    let cancelling_at_turn_end = |model: &ScriptedModel, token: &CancellationToken, own: bool| {
        let cancel = token.clone();
        let mut builder = AgentSession::builder(model.clone())
            .with_model("m")
            .with_toolshed(ToolShed::new().tool(quitting(CancellationToken::new())))
            .with_event_handler(move |event: &AgentEvent| {
                if matches!(event, AgentEvent::TurnFinished { .. }) {
                    cancel.cancel();
                }
            });
        if own {
            builder = builder.with_cancellation(token.clone());
        }
        let session = builder.build().unwrap();
        session.tool_manager().activate(&["quit".into()]);
        session
    };

    // The caller's token, cancelled by an event handler at the turn's end.
    let token = CancellationToken::new();
    let model = script();
    let session = cancelling_at_turn_end(&model, &token, false);
    assert_stopped(session.run_with_cancellation("go", token).await, &model);

    // The session's token, cancelled by an event handler at the turn's end.
    let token = CancellationToken::new();
    let model = script();
    let session = cancelling_at_turn_end(&model, &token, true);
    assert_stopped(session.run("go").await, &model);
}

/// A chat's "stop" button: `send_with_cancellation` ends the turn, keeps the conversation
/// as the run left it (the ended call answered), and leaves the session for the next
/// `send`, which continues from there.
#[tokio::test(start_paused = true)]
async fn a_stopped_send_keeps_the_conversation_and_the_next_send_continues_it() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("Hello."),
        ScriptedTurn::call("slow_job", json!({})),
        ScriptedTurn::text("I stopped the job."),
    ]);
    let session = active_session(&model, ToolShed::new().tool(SlowJob));
    assert_eq!(session.send("Hi").await.unwrap().text, "Hello.");

    let stop = CancellationToken::new();
    let pressed = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        pressed.cancel();
    });
    let err = session
        .send_with_cancellation("Run the job", stop)
        .await
        .unwrap_err();
    let AgenticError::Cancelled { run } = &err else {
        panic!("expected Cancelled, got {err}");
    };
    assert_eq!(run.tool_calls.len(), 1);
    assert!(run.tool_calls[0].result.is_error());
    // The kept conversation is the run's: both sends, the call and its (cancelled) result.
    let kept = session.transcript().await;
    assert_eq!(kept, run.transcript);
    assert_eq!(kept.len(), 5, "{kept:#?}");
    assert_eq!(kept.last().unwrap().results().len(), 1);
    assert!(!session.cancellation_token().is_cancelled());

    let run = session.send("Did it finish?").await.unwrap();
    assert_eq!(run.text, "I stopped the job.");
    let last_request = model.requests().pop().unwrap();
    assert_eq!(last_request.messages[..5], kept[..]);
    assert_eq!(last_request.messages.len(), 6);
    model.assert_complete();
}

/// A token cancelled before the send: the model is not asked, the user's message is kept
/// (answered by nothing yet), and a token the session's cancels stops it as well.
#[tokio::test]
async fn a_send_stopped_before_it_starts_asks_nothing_and_the_session_token_stops_it_too() {
    let model = ScriptedModel::new([ScriptedTurn::text("Late answer.")]);
    let session = session(&model, ToolShed::new());
    let stop = CancellationToken::new();
    stop.cancel();
    let err = session
        .send_with_cancellation("First", stop)
        .await
        .unwrap_err();
    assert!(matches!(err, AgenticError::Cancelled { .. }), "{err}");
    assert!(model.requests().is_empty());
    assert_eq!(session.transcript().await, [Message::user("First")]);

    session.cancellation_token().cancel();
    let err = session
        .send_with_cancellation("Second", CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, AgenticError::Cancelled { .. }), "{err}");
    assert!(model.requests().is_empty());
}

/// `with_max_turns(0)` is raised to 1, as its doc says: a run makes one model call, and the
/// error names the limit it ran under.
#[tokio::test]
async fn a_turn_limit_of_0_allows_one_model_call() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("add", json!({"a": 1, "b": 1})),
        ScriptedTurn::text("never asked"),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(Add))
        .with_max_turns(0)
        .build()
        .unwrap();
    session.tool_manager().activate(&["add".into()]);
    let error = session.run("add").await.unwrap_err();
    let AgenticError::MaxTurns { max_turns, run } = &error else {
        panic!("expected MaxTurns, got {error:?}");
    };
    assert_eq!((*max_turns, run.model_calls), (1, 1));
    assert_eq!(model.remaining(), 1);
}

/// The final answer asked for at the limit ends the run with its text only when it has one:
/// an answer of calls alone, or of blank text, ends it with the limit's error, the answer
/// not kept, as without `with_final_answer_on_limit`.
#[tokio::test]
async fn a_final_answer_without_text_at_the_limit_ends_with_the_limit() {
    for last in [
        ScriptedTurn::call("add", json!({"a": 3, "b": 4})),
        ScriptedTurn::text(" \n"),
    ] {
        let model = ScriptedModel::new([ScriptedTurn::call("add", json!({"a": 1, "b": 2})), last]);
        let session = AgentSession::builder(model.clone())
            .with_model("m")
            .with_toolshed(ToolShed::new().tool(Add))
            .with_max_turns(1)
            .with_final_answer_on_limit(true)
            .build()
            .unwrap();
        session.tool_manager().activate(&["add".into()]);
        let error = session.run("add").await.unwrap_err();
        let AgenticError::MaxTurns { max_turns, run } = &error else {
            panic!("expected MaxTurns, got {error:?}");
        };
        assert_eq!((*max_turns, run.model_calls), (1, 2));
        assert_eq!(run.text, "");
        assert_eq!(run.tool_calls.len(), 1);
        assert!(matches!(
            run.transcript.last(),
            Some(Message::ToolResults { .. })
        ));
        model.assert_complete();
    }
}

/// A session built without `with_session_id` is named `session-<n>`, as the builder's doc
/// says, each its own `n`; `with_session_id` names it as given.
#[test]
fn a_session_without_an_id_is_numbered() {
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let session = AgentSession::builder(ScriptedModel::default())
                .with_model("m")
                .build()
                .unwrap();
            session.session_id().to_owned()
        })
        .collect();
    for id in &ids {
        let number = id
            .strip_prefix("session-")
            .unwrap_or_else(|| panic!("{id}"));
        assert!(number.parse::<u64>().is_ok(), "{id}");
    }
    assert_ne!(ids[0], ids[1]);
    let named = AgentSession::builder(ScriptedModel::default())
        .with_model("m")
        .with_session_id("chat-7")
        .build()
        .unwrap();
    assert_eq!(named.session_id(), "chat-7");
}

/// Read the vault.
#[tool_fn]
fn read_vault() -> String {
    "the password is hunter2".to_owned()
}

/// An `after_tool` hook that stops the run (the user pressing "stop") and then waits, as an
/// audit hook waiting on a remote log would.
struct StopsAndWaits(CancellationToken);

#[async_trait]
impl ToolHook for StopsAndWaits {
    async fn after_tool(&self, _call: &ToolCallRequest, _result: &mut ToolCallResult) {
        self.0.cancel();
        std::future::pending::<()>().await;
    }
}

/// An `after_tool` hook that takes the password out of every result.
struct Redacts;

#[async_trait]
impl ToolHook for Redacts {
    async fn after_tool(&self, _call: &ToolCallRequest, result: &mut ToolCallResult) {
        let text = result.content.to_text().replace("hunter2", "[redacted]");
        *result = ToolCallResult::text(text);
    }
}

#[tokio::test]
async fn a_run_stopped_while_an_after_tool_hook_waits_still_has_the_next_hooks_redact_the_result() {
    let model = ScriptedModel::new([
        ScriptedTurn::call("read_vault", json!({})),
        ScriptedTurn::text("unreachable"),
    ]);
    let stop = CancellationToken::new();
    let session = AgentSession::builder(model.clone())
        .with_model("m")
        .with_toolshed(ToolShed::new().tool(ReadVault))
        .with_hook(StopsAndWaits(stop.clone()))
        .with_hook(Redacts)
        .build()
        .unwrap();
    session.tool_manager().activate(&["read_vault".into()]);
    let ended = tokio::time::timeout(
        Duration::from_secs(10),
        session.send_with_cancellation("Read the vault.", stop),
    )
    .await
    .expect("the waiting hook is not waited for past the cancellation");
    let Err(AgenticError::Cancelled { run }) = ended else {
        panic!("expected Cancelled, got {ended:?}");
    };
    assert_eq!(
        run.tool_calls[0].result.content.to_text(),
        "the password is [redacted]"
    );
    // The conversation kept for the next `send` holds the redacted result, not the password.
    let kept = session.transcript().await;
    let results = kept.last().unwrap().results();
    assert_eq!(
        results[0].result.content.to_text(),
        "the password is [redacted]"
    );
}

/// What `greet_in_house_style` needs from the session.
struct HouseStyle(&'static str);

/// Greet someone in the house style.
#[tool_fn]
async fn greet_in_house_style(
    #[ctx] style: toolsmith_core::State<HouseStyle>,
    /// Who to greet.
    name: String,
) -> String {
    format!("{} {name}", style.0.0)
}

/// A tool that could not be built for its session (its `State` not added) still leaves the
/// session built, as documented, but says so when the session is built: before, the first
/// sign was a model's failed call.
#[tokio::test]
async fn a_tool_the_session_cannot_build_is_logged_when_the_session_is_built() {
    let warnings = crate::common::warnings::Warnings::default();
    let built = {
        let _guard = tracing::subscriber::set_default(warnings.clone());
        session(
            &ScriptedModel::new([]),
            ToolShed::new().tool(GreetInHouseStyle),
        )
    };
    assert!(built.tool_manager().contains("greet_in_house_style"));
    let lines = warnings.lines();
    assert!(
        lines.iter().any(|line| line.contains("could not be built")
            && line.contains("tool=\"greet_in_house_style\"")
            && line.contains("HouseStyle")),
        "{lines:?}"
    );

    // Given the state, it builds quietly.
    let warnings = crate::common::warnings::Warnings::default();
    let _guard = tracing::subscriber::set_default(warnings.clone());
    let _session = session(
        &ScriptedModel::new([]),
        ToolShed::new()
            .tool(GreetInHouseStyle)
            .with_state(HouseStyle("Hello,")),
    );
    assert_eq!(warnings.lines(), Vec::<String>::new());
}
