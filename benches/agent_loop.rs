//! The agent loop's own cost: one turn of an `AgentSession` with a scripted model and one
//! trivial tool call, against `execute_turn` of the same call on the same manager.
//!
//! A "turn" here is what the loop does for one model answer with one call: build the request
//! (conversation and declared tools), ask the model, read its call, run it through
//! `execute_turn`, write the result into the transcript. The session's run measured is one
//! such turn plus the final text answer (a run cannot end otherwise), so the loop's cost per
//! turn is `(run - final answer) / 1`; the bench reports both the whole run and that.
//!
//! Long conversations: the same turn made by a `send` that continues a kept conversation of
//! N messages (N = 10, 100, 1,000: a user message, then calls and their results of about
//! 2 KB of text each), against a `send` answered at once on the same conversation; the
//! difference is what one more turn of a run costs at that length. The kept conversation is
//! cut back to its N messages after each send. Two sessions: a bare one (the canned model,
//! no image limits, no context window) and a "guarded" one configured as a long run against
//! an HTTP provider is (the canned model reporting OpenAI's image limits and input tokens, a
//! context window with compaction and `DropOldestExchanges`, never reached here), and the
//! same with a model that reports no usage (the session counts the request by its bytes).
//!
//! Run with `cargo bench --bench agent_loop`; figures in `docs/PERFORMANCE.md` ("Agent loop").

mod session_tools;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use criterion::{Criterion, criterion_group};
use serde_json::json;
use toolsmith::harness::agent::{AgentSession, Compaction, DropOldestExchanges};
use toolsmith::harness::model::{
    ChatModel, ChatRequest, ChatResponse, ImageLimits, Message, ModelCall, ModelError,
    ScriptedModel, ScriptedTurn, ToolResultMessage, Usage,
};
use toolsmith::{ToolArguments, ToolCallRequest, ToolCallResult, ToolShed};

use session_tools::{Add, build_session_tools, session_shed};

/// The cheapest model: answers a user message with one prepared call, and tool results with
/// text. It isolates the loop's own cost from a model's (`ScriptedModel` also records every
/// request and reads its calls from JSON, as a provider's are read).
struct Canned {
    call: ChatResponse,
    answer: ChatResponse,
}

#[async_trait]
impl ChatModel for Canned {
    fn name(&self) -> &str {
        "canned"
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Ok(match request.messages.last() {
            Some(Message::User { text, .. }) if text.starts_with("add") => self.call.clone(),
            _ => self.answer.clone(),
        })
    }
}

/// [`Canned`] as an HTTP client looks to the loop: it reports image limits (OpenAI's), so
/// that each request is checked against them, and, when `reports_usage`, the input tokens
/// it was sent, so that the context window's estimate continues from the provider's count
/// (a provider that reports none leaves the session to count by bytes).
struct GuardedCanned {
    canned: Canned,
    reports_usage: bool,
}

#[async_trait]
impl ChatModel for GuardedCanned {
    fn name(&self) -> &str {
        "canned"
    }

    fn image_limits(&self) -> ImageLimits {
        ImageLimits::openai()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let mut response = self.canned.complete(request).await?;
        if self.reports_usage {
            response.usage = Usage::new(1_000, 5);
        }
        Ok(response)
    }
}

/// Sessions that continue a kept conversation of `messages` messages (see the module's
/// comment): `send` and cut the conversation back, each time.
struct LongBench {
    runtime: tokio::runtime::Runtime,
    session: AgentSession,
    messages: usize,
}

impl LongBench {
    /// Bytes of text in each tool result of the kept conversation.
    const RESULT_BYTES: usize = 2_048;

    /// `guarded`: `None` for the bare session, else whether its model reports usage.
    fn new(messages: usize, guarded: Option<bool>) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let call = ToolCallRequest::new(
            "call-1",
            "add",
            ToolArguments::try_from(json!({"a": 2, "b": 3})).unwrap(),
        );
        let canned = Canned {
            call: ChatResponse::calls(vec![Ok(call)]),
            answer: ChatResponse::text("5"),
        };
        let builder = if let Some(reports_usage) = guarded {
            AgentSession::builder(GuardedCanned {
                canned,
                reports_usage,
            })
            .with_context_window(100_000_000)
            .with_compaction(Compaction::new())
            .with_context_overflow(DropOldestExchanges::new())
        } else {
            AgentSession::builder(canned)
        };
        let session = builder
            .with_model("bench")
            .with_toolshed(ToolShed::new().tool(Add))
            .build()
            .unwrap();
        session.tool_manager().activate(&["add".into()]);
        let kept = long_conversation(messages);
        runtime.block_on(session.edit_transcript(|transcript| *transcript = kept));
        Self {
            runtime,
            session,
            messages,
        }
    }

    /// A `send` on the kept conversation: one tool turn and the answer, or the answer
    /// alone; then the conversation cut back to its length.
    fn send(&self, with_call: bool) {
        let text = if with_call {
            "add 2 and 3"
        } else {
            "just answer"
        };
        let run = self.runtime.block_on(self.session.send(text));
        black_box(run.unwrap());
        self.runtime.block_on(
            self.session
                .edit_transcript(|transcript| transcript.truncate(self.messages)),
        );
    }
}

/// A conversation of `length` messages: the user's question, then calls of `read` and their
/// results of [`LongBench::RESULT_BYTES`] of text, ending with an answer.
fn long_conversation(length: usize) -> Vec<Message> {
    let result_text = "All work and no play makes Jack a dull boy. ".repeat(47);
    let result_text = &result_text[..LongBench::RESULT_BYTES];
    (0..length)
        .map(|at| match at {
            0 => Message::user("read the files"),
            _ if at == length - 1 => Message::assistant("done"),
            _ if at % 2 == 1 => Message::assistant_calls(
                None,
                vec![ModelCall::new(
                    format!("call-{at}"),
                    "read",
                    ToolArguments::try_from(json!({"path": format!("file-{at}.txt")})).unwrap(),
                )],
            ),
            _ => Message::ToolResults {
                results: vec![ToolResultMessage {
                    call_id: format!("call-{}", at - 1),
                    name: "read".to_owned(),
                    result: ToolCallResult::text(result_text),
                }],
            },
        })
        .collect()
}

/// The lengths of kept conversation the long-run rows use.
const LONG_LENGTHS: [usize; 3] = [10, 100, 1_000];

struct Bench {
    runtime: tokio::runtime::Runtime,
    model: ScriptedModel,
    session: AgentSession,
    canned: AgentSession,
    call: ToolCallRequest,
}

impl Bench {
    fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let model = ScriptedModel::default();
        let session = AgentSession::builder(model.clone())
            .with_model("bench")
            .with_toolshed(ToolShed::new().tool(Add))
            .build()
            .unwrap();
        session.tool_manager().activate(&["add".into()]);
        let call = ToolCallRequest::new(
            "call-1",
            "add",
            ToolArguments::try_from(json!({"a": 2, "b": 3})).unwrap(),
        );
        let canned = AgentSession::builder(Canned {
            call: ChatResponse::calls(vec![Ok(call.clone())]),
            answer: ChatResponse::text("5"),
        })
        .with_model("bench")
        .with_toolshed(ToolShed::new().tool(Add))
        .build()
        .unwrap();
        canned.tool_manager().activate(&["add".into()]);
        Self {
            runtime,
            model,
            session,
            canned,
            call,
        }
    }

    /// The canned model: one tool turn and the answer, or the answer alone.
    fn canned_run(&self, with_call: bool) {
        let text = if with_call {
            "add 2 and 3"
        } else {
            "just answer"
        };
        let run = self.runtime.block_on(self.canned.run(text));
        black_box(run.unwrap());
    }

    /// A run of one tool turn and the final answer.
    fn run_with_call(&self) {
        self.model.push([
            ScriptedTurn::call("add", json!({"a": 2, "b": 3})),
            ScriptedTurn::text("5"),
        ]);
        let run = self.runtime.block_on(self.session.run("add 2 and 3"));
        black_box(run.unwrap());
    }

    /// A run of the final answer alone: what the run above costs beyond its tool turn.
    fn run_answer_only(&self) {
        self.model.push([ScriptedTurn::text("5")]);
        let run = self.runtime.block_on(self.session.run("add 2 and 3"));
        black_box(run.unwrap());
    }

    fn execute_turn(&self) {
        let outcomes = self.runtime.block_on(
            self.session
                .tool_manager()
                .execute_turn(std::slice::from_ref(&self.call)),
        );
        black_box(outcomes);
    }
}

fn criterion_benches(c: &mut Criterion) {
    let bench = Bench::new();
    let mut group = c.benchmark_group("agent_loop");
    group.bench_function("execute_turn (baseline)", |b| {
        b.iter(|| bench.execute_turn())
    });
    group.bench_function("run: one tool turn + answer", |b| {
        b.iter(|| bench.run_with_call())
    });
    group.bench_function("run: answer only", |b| b.iter(|| bench.run_answer_only()));
    group.bench_function("canned model run: one tool turn + answer", |b| {
        b.iter(|| bench.canned_run(true))
    });
    group.bench_function("canned model run: answer only", |b| {
        b.iter(|| bench.canned_run(false))
    });
    group.finish();
    c.bench_function("session_build/four tool_fn tools", |b| {
        b.iter(|| black_box(build_session_tools()))
    });
    paired(&bench);
    let mut long = c.benchmark_group("agent_loop/long");
    long.sample_size(20);
    for guarded in [None, Some(true), Some(false)] {
        let session = match guarded {
            None => "bare",
            Some(true) => "guarded",
            Some(false) => "guarded, no usage reported",
        };
        for length in LONG_LENGTHS {
            let bench = LongBench::new(length, guarded);
            long.bench_function(
                format!("{session}: send with one tool turn + answer, {length} messages kept"),
                |b| b.iter(|| bench.send(true)),
            );
            long.bench_function(
                format!("{session}: send answered at once, {length} messages kept"),
                |b| b.iter(|| bench.send(false)),
            );
        }
    }
    long.finish();
}

/// Paired medians: each round times the three variants back to back (many runs each), so
/// the machine's slow and quiet phases hit them alike; the ratios are per round.
fn paired(bench: &Bench) {
    const ROUNDS: usize = 31;
    const RUNS: u32 = 400;
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        for _ in 0..RUNS {
            f();
        }
        start.elapsed() / RUNS
    };
    let mut turn_ratios = Vec::new();
    let mut run_ratios = Vec::new();
    let mut canned_turn_ratios = Vec::new();
    let mut figures = Vec::new();
    for _ in 0..ROUNDS {
        let base = time(&|| bench.execute_turn());
        let whole = time(&|| bench.run_with_call());
        let answer = time(&|| bench.run_answer_only());
        let canned_whole = time(&|| bench.canned_run(true));
        let canned_answer = time(&|| bench.canned_run(false));
        let turn = whole.saturating_sub(answer);
        let canned_turn = canned_whole.saturating_sub(canned_answer);
        turn_ratios.push(turn.as_secs_f64() / base.as_secs_f64());
        run_ratios.push(whole.as_secs_f64() / base.as_secs_f64());
        canned_turn_ratios.push(canned_turn.as_secs_f64() / base.as_secs_f64());
        figures.push((base, whole, answer, turn, canned_turn));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    figures.sort_by_key(|f| f.0);
    let (base, whole, answer, turn, canned_turn): (
        Duration,
        Duration,
        Duration,
        Duration,
        Duration,
    ) = figures[figures.len() / 2];
    println!(
        "\nagent loop, paired over {ROUNDS} rounds of {RUNS} runs (median round by baseline): \
         execute_turn {base:?}; ScriptedModel: run with one tool turn {whole:?}, answer-only \
         run {answer:?}, tool turn {turn:?}; canned model: tool turn {canned_turn:?}"
    );
    println!(
        "median ratios over execute_turn: tool turn with ScriptedModel {:.2}x, with the canned \
         model {:.2}x; whole ScriptedModel run {:.2}x",
        median(&mut turn_ratios),
        median(&mut canned_turn_ratios),
        median(&mut run_ratios)
    );
}

criterion_group!(benches, criterion_benches);

/// An `AgentSession` of `model` and the four tools of `session-build`, built as each new
/// conversation builds one: the tools' manager, then the model's check of every tool
/// (`ChatModel::check_declarations`).
fn build_agent_session(model: &Arc<dyn ChatModel>) -> AgentSession {
    AgentSession::builder(Arc::clone(model))
        .with_model("bench")
        .with_toolshed(session_shed(|tool| tool))
        .build()
        .expect("the model takes the four tools")
}

/// The model whose session `agent-session-build` builds: `ScriptedModel` (which checks
/// nothing), or with `gemini` a Gemini client (built once, never asked anything), whose check
/// converts each tool's schema as its requests would.
fn session_model(gemini: bool) -> Arc<dyn ChatModel> {
    if gemini {
        #[cfg(feature = "http-models")]
        return Arc::new(
            toolsmith::harness::model::http::GeminiModel::builder()
                .base_url("http://127.0.0.1:9")
                .build()
                .expect("a Gemini client for a local base URL"),
        );
    }
    Arc::new(ScriptedModel::default())
}

/// `cargo bench --bench agent_loop -- --calls canned|canned-answer|scripted|scripted-answer|turn|session-build|agent-session-build|agent-session-build-gemini N` runs one variant N times
/// and exits, for callgrind (`valgrind --tool=callgrind target/release/deps/agent_loop-* --calls canned 1000`).
///
/// The long conversations: `--calls long-M N` (a send with one tool turn and the answer on a
/// kept conversation of M messages), `long-answer-M` (the send answered at once), and
/// `guarded-M`, `guarded-answer-M` for the guarded session, `unmeasured-M`,
/// `unmeasured-answer-M` for the guarded session whose model reports no usage; e.g.
/// `--calls long-1000 200`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--calls") {
        let variant = args.get(at + 1).map(String::as_str).unwrap_or("canned");
        let n: usize = args
            .get(at + 2)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1000);
        if let Some((kind, length)) = variant.rsplit_once('-')
            && let Ok(length) = length.parse::<usize>()
        {
            let (guarded, with_call) = match kind {
                "long" => (None, true),
                "long-answer" => (None, false),
                "guarded" => (Some(true), true),
                "guarded-answer" => (Some(true), false),
                "unmeasured" => (Some(false), true),
                "unmeasured-answer" => (Some(false), false),
                _ => panic!("unknown variant {variant}"),
            };
            let bench = LongBench::new(length, guarded);
            for _ in 0..n {
                bench.send(with_call);
            }
            return;
        }
        let bench = Bench::new();
        let model = session_model(variant == "agent-session-build-gemini");
        for _ in 0..n {
            match variant {
                "scripted" => bench.run_with_call(),
                "scripted-answer" => bench.run_answer_only(),
                "canned-answer" => bench.canned_run(false),
                "turn" => bench.execute_turn(),
                "session-build" => drop(black_box(build_session_tools())),
                "agent-session-build" | "agent-session-build-gemini" => {
                    drop(black_box(build_agent_session(&model)));
                }
                _ => bench.canned_run(true),
            }
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
