//! Rendering 1,000 tool declarations for a provider: cold (every rendering from the
//! definitions, strict transform included) against cached (`rendered_tools` while the
//! registry and the active set are unchanged).
//!
//! Run with `cargo bench --bench providers -- --warm-up-time 1 --measurement-time 3`; the
//! figures are recorded in `docs/PERFORMANCE.md` under "Provider formats".

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use toolsmith::provider::{Declared, Provider, RenderOptions, StrictMode};
use toolsmith::{FnTool, ToolArgs, ToolCallManager, ToolCallResult};

mod declared_tools;

const TOOLS: usize = 1_000;

/// 1,000 tools of `declared_tools` (one in four declares a `returns` schema, and so is
/// rendered strict).
fn manager() -> ToolCallManager {
    let manager = ToolCallManager::new("bench");
    for i in 0..TOOLS {
        let tool = FnTool::new(
            declared_tools::name(i),
            declared_tools::description(i),
            declared_tools::arguments(),
            |_: ToolArgs<'_>| async { Ok(ToolCallResult::empty()) },
        );
        let tool = match declared_tools::returns(i) {
            Some(returns) => tool.with_returns(returns),
            None => tool,
        };
        manager.register(Arc::new(tool)).expect("registers");
    }
    manager
}

fn render(c: &mut Criterion) {
    let manager = manager();
    let declarations = manager.declarations(Declared::All);
    let mut group = c.benchmark_group("render_1000");
    for provider in [Provider::OpenAiChat, Provider::Anthropic, Provider::Gemini] {
        // Anthropic refuses more than 20 strict tools in one request (and rendering says so),
        // so its 1,000 are rendered without strict mode.
        let options = match provider {
            Provider::Anthropic => RenderOptions {
                strict: StrictMode::Never,
            },
            _ => RenderOptions::default(),
        };
        group.bench_function(format!("cold/{provider}"), |bench| {
            bench.iter(|| {
                black_box(
                    provider
                        .render_tools(&declarations, &options)
                        .expect("renders"),
                )
            });
        });
        group.bench_function(format!("cached/{provider}"), |bench| {
            bench.iter(|| {
                black_box(
                    manager
                        .rendered_tools(provider, Declared::All, &options)
                        .expect("renders"),
                )
            });
        });
    }
    group.finish();
}

criterion_group!(benches, render);
criterion_main!(benches);
