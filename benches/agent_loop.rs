//! The agent loop's own cost: one turn of an `AgentSession` with a scripted model and one
//! trivial tool call, against `execute_turn` of the same call on the same manager.
//!
//! A "turn" here is what the loop does for one model answer with one call: build the request
//! (conversation and declared tools), ask the model, read its call, run it through
//! `execute_turn`, write the result into the transcript. The session's run measured is one
//! such turn plus the final text answer (a run cannot end otherwise), so the loop's cost per
//! turn is `(run - final answer) / 1`; the bench reports both the whole run and that.
//!
//! Run with `cargo bench --bench agent_loop`; figures in `docs/PERFORMANCE.md` ("Agent loop").

mod session_tools;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use criterion::{Criterion, criterion_group};
use serde_json::json;
use toolsmith::harness::agent::AgentSession;
use toolsmith::harness::model::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn,
};
use toolsmith::{ToolArguments, ToolCallRequest, ToolShed};

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
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--calls") {
        let variant = args.get(at + 1).map(String::as_str).unwrap_or("canned");
        let n: usize = args
            .get(at + 2)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1000);
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
