//! [`DistinctCallIds`]: the ids a conversation's calls and results are sent with, for an
//! API that refuses a call id used twice in one request.

use std::collections::HashSet;

use serde_json::Value;
use toolsmith_core::provider::Provider;

use crate::model::{ModelCall, ToolResultMessage};

/// Whether `provider` refuses a request in which two calls have one id.
///
/// Anthropic does: "`tool_use` ids must be unique", for the whole conversation. OpenAI's
/// Responses API does too ("Duplicate function_call_output for call_id …: each
/// function_call must have exactly one matching function_call_output", as reported from
/// agents whose stored histories repeat an id). A conversation carried over from a provider
/// whose ids restart every turn (an OpenAI-compatible server for Kimi writes
/// `functions.add:0` on each) or from a model that gives none (each turn's first call is
/// `toolsmith-call-0`) has such ids. OpenAI Chat documents no such refusal, and Gemini
/// matches a result to its call by name and order: their ids go as they are.
pub(crate) fn refuses_repeated_ids(provider: Provider) -> bool {
    matches!(provider, Provider::Anthropic | Provider::OpenAiResponses)
}

/// The ids a conversation's calls are sent with, made one by one from its first turn on:
/// each call's own id, unless an earlier call of the conversation (or of its turn) was sent
/// with it, then the id with `-2` appended (or `-3`, …: the first not sent yet). An id
/// depends only on the turns before it, so every request of a conversation sends its turns
/// with the same ids (its cached prefix stays the same). Each result is sent with the id
/// its call was sent with: the call of the turn just before that has its id, the first not
/// answered yet (results come in call order).
#[derive(Debug, Default)]
pub(crate) struct DistinctCallIds {
    /// Every id sent so far.
    sent: HashSet<String>,
    /// The last assistant turn's calls: the id the call has, the id it was sent with, and
    /// whether a result has answered it.
    last_turn: Vec<LastTurnCall>,
}

#[derive(Debug)]
struct LastTurnCall {
    id: String,
    sent_as: String,
    answered: bool,
}

impl DistinctCallIds {
    /// The ids to send the calls of an assistant turn with, in call order.
    pub(crate) fn calls(&mut self, calls: &[ModelCall]) -> Vec<String> {
        self.last_turn.clear();
        calls
            .iter()
            .map(|call| {
                let sent_as = self.unsent(&call.id);
                self.sent.insert(sent_as.clone());
                self.last_turn.push(LastTurnCall {
                    id: call.id.clone(),
                    sent_as: sent_as.clone(),
                    answered: false,
                });
                sent_as
            })
            .collect()
    }

    /// A turn sent as the provider wrote it (its ids kept): the ids of its calls, read as
    /// `provider` reads an answer's, are sent, and answered as they are.
    pub(crate) fn verbatim_turn(&mut self, provider: Provider, entries: &[Value]) {
        self.last_turn.clear();
        if provider == Provider::OpenAiResponses {
            // Its entries are the answer's output items, which `parse_calls` reads only
            // inside the whole answer: the ids are read from the items themselves.
            for item in entries {
                if item.get("type").and_then(Value::as_str) != Some("function_call") {
                    continue;
                }
                let id = item.get("call_id").or_else(|| item.get("id"));
                if let Some(id) = id.and_then(Value::as_str) {
                    self.sent_verbatim(id);
                }
            }
            return;
        }
        for entry in entries {
            let Ok(calls) = provider.parse_calls(entry) else {
                continue;
            };
            for call in &calls {
                let id = match call {
                    Ok(request) => &request.id,
                    Err(rejected) => &rejected.id,
                };
                self.sent_verbatim(id);
            }
        }
    }

    /// A call of a verbatim turn, sent with its own `id`.
    fn sent_verbatim(&mut self, id: &str) {
        self.sent.insert(id.to_owned());
        self.last_turn.push(LastTurnCall {
            id: id.to_owned(),
            sent_as: id.to_owned(),
            answered: false,
        });
    }

    /// The ids to send `results` with, in order: each its call's, or its own where the turn
    /// before has no call of that id (the API will say so).
    pub(crate) fn results(&mut self, results: &[ToolResultMessage]) -> Vec<String> {
        results
            .iter()
            .map(|result| {
                let unanswered = self
                    .last_turn
                    .iter_mut()
                    .find(|call| call.id == result.call_id && !call.answered);
                match unanswered {
                    Some(call) => {
                        call.answered = true;
                        call.sent_as.clone()
                    }
                    // A second result for one call goes with the call's id: both name it.
                    None => self
                        .last_turn
                        .iter()
                        .find(|call| call.id == result.call_id)
                        .map_or_else(|| result.call_id.clone(), |call| call.sent_as.clone()),
                }
            })
            .collect()
    }

    /// `id`, or `id` with the first suffix `-2`, `-3`, … that makes it an id not sent yet.
    fn unsent(&self, id: &str) -> String {
        if !self.sent.contains(id) {
            return id.to_owned();
        }
        let mut n = 2_u64;
        loop {
            let candidate = format!("{id}-{n}");
            if !self.sent.contains(&candidate) {
                return candidate;
            }
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use toolsmith_core::{ToolArguments, ToolCallResult};

    use super::*;

    fn calls(ids: &[&str]) -> Vec<ModelCall> {
        ids.iter()
            .map(|id| ModelCall::new(*id, "add", ToolArguments::new()))
            .collect()
    }

    fn results(ids: &[&str]) -> Vec<ToolResultMessage> {
        ids.iter()
            .map(|id| ToolResultMessage {
                call_id: (*id).to_owned(),
                name: "add".to_owned(),
                result: ToolCallResult::text("5"),
            })
            .collect()
    }

    #[test]
    fn a_repeated_id_gets_the_first_free_suffix_and_its_result_the_same() {
        let mut ids = DistinctCallIds::default();
        assert_eq!(ids.calls(&calls(&["c", "c-2"])), ["c", "c-2"]);
        assert_eq!(ids.results(&results(&["c-2", "c"])), ["c-2", "c"]);
        // `c` and `c-2` are taken: the next `c` is `c-3`, and a repeat in the turn `c-4`.
        assert_eq!(ids.calls(&calls(&["c", "d", "c"])), ["c-3", "d", "c-4"]);
        assert_eq!(ids.results(&results(&["c", "d", "c"])), ["c-3", "d", "c-4"]);
        // A result no call of the turn before has goes as it is; a second for one call
        // with the call's id.
        assert_eq!(ids.results(&results(&["e", "d"])), ["e", "d"]);
    }

    #[test]
    fn a_turn_sent_verbatim_keeps_its_ids_and_takes_them() {
        let mut ids = DistinctCallIds::default();
        let turn = serde_json::json!({"role": "assistant", "content": [
            {"type": "text", "text": "Adding."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}]});
        ids.verbatim_turn(Provider::Anthropic, &[turn]);
        assert_eq!(ids.results(&results(&["toolu_1"])), ["toolu_1"]);
        assert_eq!(ids.calls(&calls(&["toolu_1"])), ["toolu_1-2"]);
    }

    #[test]
    fn a_responses_turn_sent_verbatim_keeps_its_call_ids_and_takes_them() {
        let mut ids = DistinctCallIds::default();
        let items = [
            serde_json::json!({"type": "reasoning", "id": "rs_1", "summary": []}),
            serde_json::json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
                "name": "add", "arguments": "{}"}),
        ];
        ids.verbatim_turn(Provider::OpenAiResponses, &items);
        assert_eq!(ids.results(&results(&["call_1"])), ["call_1"]);
        assert_eq!(ids.calls(&calls(&["call_1", "rs_1"])), ["call_1-2", "rs_1"]);
    }
}
