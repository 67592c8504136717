//! The model's check of the tools a session may declare to it
//! ([`ChatModel::check_declarations`]), asked before a run so that a tool the model cannot
//! be sent fails the configuration, not a request in the middle of the work.

use std::panic::AssertUnwindSafe;

use toolsmith_core::{Tool, ToolCallManager, drop_panic_payload, panic_message};

use super::AgenticError;
use crate::model::ChatModel;

/// Asks `model` whether it can be declared every tool registered in `manager`; a refusal
/// (or a panic of the check, the user's code) is an [`AgenticError::Config`] saying it is
/// `what` that cannot be declared, with the model's reason (which names the tool).
pub(super) fn check_declarations(
    model: &dyn ChatModel,
    manager: &ToolCallManager,
    what: impl FnOnce() -> String,
) -> Result<(), AgenticError> {
    let checked = manager.definitions_in_order(|tools| {
        // Lent, not cloned: a model that checks nothing costs a pointer a tool.
        let tools: Vec<&Tool> = tools.collect();
        std::panic::catch_unwind(AssertUnwindSafe(|| model.check_declarations(&tools)))
    });
    let reason = match checked {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(refused)) => refused.to_string(),
        Err(payload) => {
            let reason = format!(
                "its check_declarations() panicked: {}",
                panic_message(payload.as_ref())
            );
            // The model's value: its `Drop` may panic too, which must not unwind from here.
            drop_panic_payload(payload);
            reason
        }
    };
    Err(AgenticError::Config(format!(
        "{} cannot be declared to the model: {reason}",
        what()
    )))
}
