//! A model's answer read whole: its calls, its text and why it stopped, from one reading of
//! the response ([`Provider::parse_answer`]).

use serde_json::Value;

use super::calls::{ParsedCall, distinct_generated_ids};
use super::turns::StopReason;
use super::{Provider, ResponseError};

/// What [`Provider::parse_answer`] reads of a response: what
/// [`parse_calls`](Provider::parse_calls), [`parse_text`](Provider::parse_text) and
/// [`parse_stop_reason`](Provider::parse_stop_reason) each read of it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ParsedAnswer {
    /// The tool calls, as [`parse_calls`](Provider::parse_calls) reads them.
    pub calls: Vec<ParsedCall>,
    /// The text, as [`parse_text`](Provider::parse_text) reads it (`None` for none).
    pub text: Option<String>,
    /// Why the model stopped, as [`parse_stop_reason`](Provider::parse_stop_reason) reads it.
    pub stop_reason: StopReason,
}

impl Provider {
    /// Reads a response's calls, text and stop reason at once: the same as
    /// [`parse_calls`](Self::parse_calls), [`parse_text`](Self::parse_text) and
    /// [`parse_stop_reason`](Self::parse_stop_reason), with the first error of the three.
    /// A text model's completion is read once for all three (each of them reads every call
    /// block of it).
    ///
    /// ```
    /// use toolsmith::provider::{Provider, StopReason};
    /// use serde_json::json;
    ///
    /// let completion = json!("Adding.\n<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 2}}</tool_call>");
    /// let answer = Provider::Text.parse_answer(&completion).unwrap();
    /// assert_eq!(answer.calls[0].as_ref().unwrap().name, "add");
    /// assert_eq!(answer.text.as_deref(), Some("Adding."));
    /// assert_eq!(answer.stop_reason, StopReason::ToolCalls);
    /// ```
    pub fn parse_answer(self, response: &Value) -> Result<ParsedAnswer, ResponseError> {
        let Self::Text = self else {
            return Ok(ParsedAnswer {
                calls: self.parse_calls(response)?,
                text: self.parse_text(response)?,
                stop_reason: self.parse_stop_reason(response)?,
            });
        };
        let answer = super::text::parse_answer(response)?;
        Ok(ParsedAnswer {
            calls: finished_calls(answer.calls),
            text: finished_text(answer.text),
            stop_reason: answer.stop_reason,
        })
    }
}

/// The last step of reading a response's calls, whichever way they were read
/// ([`Provider::parse_calls`] or [`Provider::parse_answer`]): a call the response gave no
/// id keeps a generated one no other call of the response has.
pub(super) fn finished_calls(mut calls: Vec<ParsedCall>) -> Vec<ParsedCall> {
    distinct_generated_ids(&mut calls);
    calls
}

/// The last step of reading a response's text, whichever way it was read
/// ([`Provider::parse_text`] or [`Provider::parse_answer`]): an empty text is none.
pub(super) fn finished_text(text: Option<String>) -> Option<String> {
    text.filter(|text| !text.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_read_whole_is_what_each_part_reads() {
        let responses = [
            (
                Provider::OpenAiChat,
                json!({"choices": [{"message": {"role": "assistant", "content": "Adding.",
                    "tool_calls": [{"id": "", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2"}}]},
                    "finish_reason": "stop"}]}),
            ),
            (
                Provider::OpenAiResponses,
                json!({"status": "completed", "output": [
                    {"type": "message", "content": [{"type": "output_text", "text": "Adding."}]},
                    {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"}]}),
            ),
            (
                Provider::Anthropic,
                json!({"content": [{"type": "text", "text": "The"}], "stop_reason": "max_tokens"}),
            ),
            (
                Provider::Gemini,
                json!({"candidates": [{"content": {"role": "model", "parts": [
                    {"text": "Adding."}, {"functionCall": {"name": "add", "args": {}}}]},
                    "finishReason": "STOP"}]}),
            ),
            // Tagged calls (one unclosed, both without ids), fenced and bare ones, prose
            // alone, a cut answer, and calls with no text around them.
            (
                Provider::Text,
                json!(
                    "Sure.\n<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\nThen <tool_call>{\"name\": \"b\""
                ),
            ),
            (
                Provider::Text,
                json!("Let me add.\n```json\n{\"name\": \"add\", \"arguments\": {}}\n```\nDone."),
            ),
            (
                Provider::Text,
                json!({"choices": [{"message": {"content": "The"}, "finish_reason": "length"}]}),
            ),
            (
                Provider::Text,
                json!({"content": "{\"name\": \"add\", \"arguments\": {\"a\": 1}}"}),
            ),
            (
                Provider::Text,
                json!(
                    "<tool_call>{\"id\": \"toolsmith-call-1\", \"name\": \"a\"}</tool_call><tool_call>{\"name\": \"b\"}</tool_call>"
                ),
            ),
        ];
        for (provider, response) in responses {
            let answer = provider.parse_answer(&response).unwrap();
            let apart = ParsedAnswer {
                calls: provider.parse_calls(&response).unwrap(),
                text: provider.parse_text(&response).unwrap(),
                stop_reason: provider.parse_stop_reason(&response).unwrap(),
            };
            assert_eq!(answer, apart, "{provider}: {response}");
        }
        // A text answer of calls alone has no text, and generated ids stay distinct.
        let answer = Provider::Text
            .parse_answer(&json!(
                "<tool_call>{\"id\": \"toolsmith-call-1\", \"name\": \"a\"}</tool_call><tool_call>{\"name\": \"b\"}</tool_call>"
            ))
            .unwrap();
        assert_eq!(answer.text, None);
        let ids: Vec<&str> = answer
            .calls
            .iter()
            .map(|call| call.as_ref().unwrap().id.as_str())
            .collect();
        assert_ne!(ids[0], ids[1]);
    }

    #[test]
    fn a_response_of_the_wrong_shape_is_the_first_part_s_error() {
        for provider in Provider::ALL {
            let response = json!(42);
            assert_eq!(
                provider.parse_answer(&response).unwrap_err(),
                provider.parse_calls(&response).unwrap_err(),
                "{provider}"
            );
        }
    }
}
