//! The tool declarations the provider benches render (`benches/providers.rs` through a
//! manager, `benches/request_tools.rs` through the HTTP clients): a realistic argument
//! schema, and a `returns` schema on one tool in four, which so is rendered strict where
//! the format has a strict mode.

use toolsmith::{Args, scheme};

/// The name of tool `i`.
pub fn name(i: usize) -> String {
    format!("tool_{i}")
}

/// The description of tool `i`.
pub fn description(i: usize) -> String {
    format!("Tool number {i}: does one thing well.")
}

/// Every tool's arguments: a string, bounded numbers, an array and a nested object.
pub fn arguments() -> Args {
    Args::new(
        scheme::object()
            .required(
                "query",
                scheme::string().min_len(1).describe("What to look for."),
            )
            .optional("limit", scheme::integer().minimum(1).maximum(100))
            .optional("tags", scheme::array(scheme::string()).max_items(10))
            .optional(
                "scope",
                scheme::object()
                    .required("root", scheme::string())
                    .optional("depth", scheme::integer()),
            )
            .build(),
    )
}

/// The result schema of tool `i`: one tool in four declares one.
pub fn returns(i: usize) -> Option<Args> {
    i.is_multiple_of(4).then(|| {
        Args::new(
            scheme::object()
                .required("hits", scheme::array(scheme::string()))
                .build(),
        )
    })
}
