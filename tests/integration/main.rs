//! The facade crate's integration tests, one module per subject.
//!
//! They are modules of one test binary, not a binary each: every test binary links all of
//! the dependencies again, and thirteen of them took ~1.6 GB of disk and a link step each.
//! Run one subject with `cargo test --test integration manager::`.

mod support;

mod accepted_is_read;
#[cfg(all(feature = "mcp", feature = "http-models"))]
mod auto_traits;
mod batch;
#[cfg(all(feature = "cli", target_os = "linux"))]
mod binary_signals;
mod bound_tools;
mod command_enum_args;
#[cfg(all(feature = "mcp", feature = "http-models"))]
mod debug_output;
mod deep_nesting;
mod dispatch_properties;
#[cfg(feature = "harness")]
mod examples;
mod integer_bounds;
mod macro_properties;
mod macro_retries;
mod macro_shapes;
mod macros;
mod manager;
#[cfg(feature = "cli")]
mod mcp_binary;
#[cfg(feature = "cli")]
mod mcp_interop;
mod provider_golden;
mod provider_mutations;
mod provider_round_trip;
mod retry;
#[cfg(feature = "cli")]
mod run_binary;
mod schema_agreement;
mod serde_attributes;
mod shed;
mod strict_mode;
mod strict_nulls;
mod whole_args;
mod workflow_properties;
