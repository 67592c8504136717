//! [`DistinctCallIds`]: the ids a conversation's calls and results are sent with, for an
//! API that refuses a call id used twice in one request.

use std::collections::{HashMap, HashSet};

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
/// each call's own id as the provider is sent it ([`Provider::call_id_as_sent`]), unless
/// an earlier call of the conversation (or of its turn) was sent with it, then that id with
/// `-2` appended (or `-3`, …: the first not sent yet). Turns sent as the provider wrote them
/// are held to it too, their repeated ids renamed in their entries. An id depends only on
/// the turns before it, so every request of a conversation sends its turns with the same ids
/// (its cached prefix stays the same). Each result is sent with the id its call was sent
/// with: the call of the turn just before that has its id, the first not answered yet
/// (results come in call order). Ids are compared as sent: two ids the provider would be
/// sent alike are one.
#[derive(Debug)]
pub(crate) struct DistinctCallIds {
    provider: Provider,
    /// Every id sent so far.
    sent: HashSet<String>,
    /// For each id repeated so far, the suffix to try first on its next repeat: those below
    /// it are taken, so a long conversation repeating one id does not count up from `-2`
    /// at each repeat.
    next_suffix: HashMap<String, u64>,
    /// The last assistant turn's calls: the id the call has (as sent), the id it was sent
    /// with, and whether a result has answered it.
    last_turn: Vec<LastTurnCall>,
}

#[derive(Debug)]
struct LastTurnCall {
    id: String,
    sent_as: String,
    answered: bool,
}

impl DistinctCallIds {
    /// The ids of a conversation sent to `provider`.
    pub(crate) fn new(provider: Provider) -> Self {
        Self {
            provider,
            sent: HashSet::new(),
            next_suffix: HashMap::new(),
            last_turn: Vec::new(),
        }
    }

    /// The ids to send the calls of an assistant turn with, in call order.
    pub(crate) fn calls(&mut self, calls: &[ModelCall]) -> Vec<String> {
        self.last_turn.clear();
        calls.iter().map(|call| self.send(&call.id)).collect()
    }

    /// A turn the provider wrote (`entries`, in its format), as it is sent: an id of its
    /// calls that an earlier call was sent with renamed in a copy of its entries, as
    /// [`calls`](Self::calls) renames a rebuilt turn's. The entries are Anthropic assistant
    /// messages (`tool_use` blocks' `id`) or Responses output items (`function_call` items'
    /// `call_id`).
    pub(crate) fn verbatim_turn(&mut self, entries: &[Value]) -> Vec<Value> {
        self.last_turn.clear();
        let mut entries = entries.to_vec();
        for entry in &mut entries {
            match self.provider {
                Provider::Anthropic => {
                    let blocks = entry.get_mut("content").and_then(Value::as_array_mut);
                    for block in blocks.into_iter().flatten() {
                        if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                            self.send_in(block, "id");
                        }
                    }
                }
                Provider::OpenAiResponses
                    if entry.get("type").and_then(Value::as_str) == Some("function_call") =>
                {
                    self.send_in(entry, "call_id");
                }
                _ => {}
            }
        }
        entries
    }

    /// The ids to send `results` with, in order: each its call's, or its own (as sent) where
    /// the turn before has no call of that id (the API will say so).
    pub(crate) fn results(&mut self, results: &[ToolResultMessage]) -> Vec<String> {
        results
            .iter()
            .map(|result| {
                let id = self.provider.call_id_as_sent(&result.call_id);
                let unanswered = self
                    .last_turn
                    .iter_mut()
                    .find(|call| call.id == id && !call.answered);
                match unanswered {
                    Some(call) => {
                        call.answered = true;
                        call.sent_as.clone()
                    }
                    // A second result for one call goes with the call's id: both name it.
                    None => self
                        .last_turn
                        .iter()
                        .find(|call| call.id == id)
                        .map_or_else(|| id.into_owned(), |call| call.sent_as.clone()),
                }
            })
            .collect()
    }

    /// The id a call whose own id is `id` is sent with (see the type's rules), taken.
    fn send(&mut self, id: &str) -> String {
        let id = self.provider.call_id_as_sent(id).into_owned();
        let sent_as = self.unsent(&id);
        self.sent.insert(sent_as.clone());
        self.last_turn.push(LastTurnCall {
            id,
            sent_as: sent_as.clone(),
            answered: false,
        });
        sent_as
    }

    /// The call whose id is `item`'s string `key` (a missing one counts as empty), sent:
    /// `item` renamed when its id must be.
    fn send_in(&mut self, item: &mut Value, key: &str) {
        let id = item
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let sent_as = self.send(&id);
        if sent_as != id {
            item[key] = Value::String(sent_as);
        }
    }

    /// `id`, or `id` with the first suffix `-2`, `-3`, … that makes it an id not sent yet.
    fn unsent(&mut self, id: &str) -> String {
        if !self.sent.contains(id) {
            return id.to_owned();
        }
        let next = self.next_suffix.entry(id.to_owned()).or_insert(2);
        loop {
            let candidate = format!("{id}-{next}");
            *next += 1;
            if !self.sent.contains(&candidate) {
                return candidate;
            }
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
        let mut ids = DistinctCallIds::new(Provider::OpenAiResponses);
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
    fn anthropic_ids_are_compared_as_anthropic_is_sent_them() {
        let mut ids = DistinctCallIds::new(Provider::Anthropic);
        let sent = Provider::Anthropic
            .call_id_as_sent("functions.add:0")
            .into_owned();
        assert_eq!(ids.calls(&calls(&["functions.add:0"])), [sent.as_str()]);
        assert_eq!(ids.results(&results(&["functions.add:0"])), [sent.as_str()]);
        // The same id in its sent form is the same id: renamed.
        let again = format!("{sent}-2");
        assert_eq!(ids.calls(&calls(&[&sent])), [again.as_str()]);
        assert_eq!(ids.results(&results(&[&sent])), [again]);
    }

    #[test]
    fn a_turn_sent_verbatim_keeps_its_ids_and_takes_them() {
        let mut ids = DistinctCallIds::new(Provider::Anthropic);
        let turn = serde_json::json!({"role": "assistant", "content": [
            {"type": "text", "text": "Adding."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}]});
        assert_eq!(ids.verbatim_turn(std::slice::from_ref(&turn)), [turn]);
        assert_eq!(ids.results(&results(&["toolu_1"])), ["toolu_1"]);
        assert_eq!(ids.calls(&calls(&["toolu_1"])), ["toolu_1-2"]);
    }

    #[test]
    fn a_verbatim_turn_repeating_an_id_is_sent_renamed_and_so_are_its_results() {
        // An Anthropic-compatible server numbering each turn's calls from 0, or leaving the
        // ids empty: its turns go back as it wrote them (ids as sent), each repeating ids.
        let mut ids = DistinctCallIds::new(Provider::Anthropic);
        let sent = Provider::Anthropic
            .call_id_as_sent("functions.add:0")
            .into_owned();
        let empty = Provider::Anthropic.call_id_as_sent("").into_owned();
        let turn = serde_json::json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": sent, "name": "add", "input": {}},
            {"type": "tool_use", "id": empty, "name": "add", "input": {}},
            {"type": "tool_use", "id": empty, "name": "add", "input": {}}]});
        let first = ids.verbatim_turn(std::slice::from_ref(&turn));
        let sent_ids = |entries: &[Value]| -> Vec<String> {
            entries[0]["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|block| block["id"].as_str().unwrap().to_owned())
                .collect()
        };
        let (again, empty_again) = (format!("{sent}-2"), format!("{empty}-2"));
        assert_eq!(
            sent_ids(&first),
            [sent.clone(), empty.clone(), empty_again.clone()]
        );
        // Results name the calls by the ids the model gave them.
        assert_eq!(
            ids.results(&results(&["functions.add:0", "", ""])),
            [sent.clone(), empty.clone(), empty_again]
        );
        let second = ids.verbatim_turn(std::slice::from_ref(&turn));
        assert_eq!(sent_ids(&second)[0], again);
        assert_eq!(ids.results(&results(&["functions.add:0"])), [again]);
    }

    #[test]
    fn a_responses_turn_sent_verbatim_keeps_its_call_ids_and_takes_them() {
        let mut ids = DistinctCallIds::new(Provider::OpenAiResponses);
        let items = [
            serde_json::json!({"type": "reasoning", "id": "rs_1", "summary": []}),
            serde_json::json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
                "name": "add", "arguments": "{}"}),
        ];
        assert_eq!(ids.verbatim_turn(&items), items);
        assert_eq!(ids.results(&results(&["call_1"])), ["call_1"]);
        assert_eq!(ids.calls(&calls(&["call_1", "rs_1"])), ["call_1-2", "rs_1"]);
        // Its repeat, verbatim too, is renamed in the item.
        let renamed = ids.verbatim_turn(&items);
        assert_eq!(renamed[1]["call_id"], "call_1-3");
        assert_eq!(renamed[1]["id"], "fc_1");
    }
}
