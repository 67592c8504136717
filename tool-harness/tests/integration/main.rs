//! The harness's integration tests, one module per subject, in one test binary (each test
//! binary links every dependency again). Run one subject with
//! `cargo test -p toolsmith-harness --test integration shell_tool::`.

mod common;

mod agent_events;
mod agent_images;
mod agent_panics;
mod agent_properties;
mod agent_session;
mod atomic_write;
mod child_usage;
mod compaction;
mod context_overflow;
mod context_window;
mod deep_values;
mod edit_conflicts;
mod escape_suite;
mod fallback;
mod file_tools;
mod guarded_paths;
mod images_over_limits;
#[cfg(feature = "mcp")]
mod mcp;
mod memory_and_context;
#[cfg(feature = "http-models")]
mod model_http;
mod observability;
mod panic_payloads;
mod paths_and_globs;
mod presets;
mod read_images;
mod retrieval;
mod run_events;
mod runtime_shutdown;
mod search_file_tool;
mod session_concurrency;
mod shell_tool;
mod subagent_endings;
mod subagent_events;
mod subagents;
mod token_budget;
mod typed_answer_edges;
mod typed_answers;
mod unreadable_images;
