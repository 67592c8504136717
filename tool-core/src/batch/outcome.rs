//! [`ToolCallOutcome`]: how one call of a batch ended.

use std::time::Duration;

use crate::{ToolCallResult, ToolError};

/// How one call ended: its result or error, how many times the tool ran, and how long the
/// call took from its start (retries and backoff included).
///
/// Batches return one outcome per request, in request order, whatever happened: a call that
/// never ran (dependency failed, batch cancelled, tool not offered) has an error, zero
/// attempts and zero elapsed time.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallOutcome {
    /// The request's id.
    pub id: String,
    /// The tool the request called.
    pub name: String,
    /// The tool's result, or why there is none.
    pub result: Result<ToolCallResult, ToolError>,
    /// How many times the tool was run (0 when it never was; more than 1 after retries).
    pub attempts: u32,
    /// How long the call took, from its first attempt to its end.
    pub elapsed: Duration,
}

impl ToolCallOutcome {
    /// Whether the call failed: it ended in an error, or the tool returned a result that
    /// reports an error ([`ToolCallResult::error`]). Calls that depend on a failed call do not
    /// run, and a failure stops a sequential stage.
    pub fn failed(&self) -> bool {
        match &self.result {
            Ok(result) => result.is_error(),
            Err(_) => true,
        }
    }

    /// An outcome for a call that never ran.
    pub(crate) fn not_run(id: &str, name: &str, error: ToolError) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            result: Err(error),
            attempts: 0,
            elapsed: Duration::ZERO,
        }
    }
}
