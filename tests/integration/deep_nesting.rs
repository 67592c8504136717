//! Deeply nested JSON never aborts the process: every path that parses, repairs, clones,
//! validates, reads or renders a value refuses nesting deeper than [`MAX_JSON_DEPTH`] with an
//! error that says so, and values Toolsmith owns are freed without recursion.
//!
//! Each test runs on a thread with a Tokio worker's 2 MiB stack, at 10,000 and 100,000
//! levels: before the limit existed, a stack overflow aborted the whole test binary. Deep
//! values are built and freed by `support::deep` without recursion (see there).

use toolsmith::{MAX_JSON_DEPTH, ToolArguments};

use crate::support::deep::{self, LEVELS, free, on_small_stack};

/// What every refusal says.
fn too_deep() -> String {
    format!("nested deeper than {MAX_JSON_DEPTH} levels")
}

#[test]
fn deep_tool_arguments_are_copied_shown_and_freed_without_recursion() {
    on_small_stack(|| {
        for levels in LEVELS {
            let arguments = ToolArguments::from_iter([("x", deep::array(levels))]);
            let shared = arguments.clone();
            assert!(arguments == shared);
            // A write to shared arguments copies them.
            let mut written = shared.clone();
            written.insert("y", 1);
            assert!(written != arguments);
            // The copy is a real one.
            assert_eq!(written.len(), 2);
            // Shown and serialised without following the nesting down.
            assert!(arguments.to_string().contains(&too_deep()));
            assert!(format!("{arguments:?}").contains(&too_deep()));
            let err = serde_json::to_string(&arguments).unwrap_err();
            assert!(err.to_string().contains(&too_deep()), "{err}");
            // Taken out while shared: a copy, which the test now owns.
            free(shared.into_value());
            drop((arguments, written));
        }
    });
}
