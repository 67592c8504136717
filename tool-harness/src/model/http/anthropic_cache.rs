//! [`PromptCaching`]: where an [`AnthropicModel`](super::AnthropicModel) marks its requests
//! for Anthropic's prompt cache, and with which lifetime.
//!
//! The facts relied on (Anthropic's prompt-caching and tool-use-with-prompt-caching pages,
//! <https://platform.claude.com/docs/en/build-with-claude/prompt-caching>, and the official
//! SDK's request types):
//!
//! - A prefix is cached up to a block carrying `"cache_control": {"type": "ephemeral"}`, in
//!   the order `tools`, `system`, `messages`; at most 4 blocks of a request may carry one
//!   (more is refused: "A maximum of 4 blocks with cache_control may be provided").
//! - The mark may go on a tool definition (on the last one it caches every tool), on a
//!   `system` text block (so the system prompt is sent as blocks, not a string), and on a
//!   message's content blocks (`text`, `image`, `tool_use`, `tool_result`, …) in user and
//!   assistant turns; not on `thinking` or `redacted_thinking` blocks (their parameter
//!   types have no `cache_control`), nor on an empty text block ("cache_control cannot be
//!   set for empty text blocks").
//! - `ttl` is `"5m"` (the default, written by leaving it out) or `"1h"`; a read refreshes
//!   the entry. Cache writes cost 1.25× the input price (2× for an hour), reads 0.1×.
//! - A prefix shorter than the model's minimum (1024 to 4096 tokens, by model) is simply
//!   not cached: the request succeeds, with no cache figures in its usage.
//! - A string `content` is shorthand for one `text` block: a message sent as a marked block
//!   on one turn and as a string on the next is the same prefix.

use serde_json::{Value, json};

/// The field a marked block carries.
pub(crate) const CACHE_CONTROL: &str = "cache_control";

/// The beta that introduced the one-hour lifetime, named in `anthropic-beta` with
/// [`PromptCaching::OneHour`]: a server that still gates the lifetime behind it refuses the
/// `ttl` without it, or quietly keeps five minutes (as reported by users of the API); one
/// that no longer does ignores the header.
pub const EXTENDED_CACHE_TTL_BETA: &str = "extended-cache-ttl-2025-04-11";

/// Whether and how an [`AnthropicModel`](super::AnthropicModel) asks Anthropic to cache the
/// prefix its requests share, set with
/// [`HttpModelBuilder::prompt_caching`](super::HttpModelBuilder::prompt_caching).
///
/// Anthropic caches a prompt's prefix only up to a block marked for it (OpenAI and Gemini
/// cache prefixes without being asked). With caching on, each request carries at most
/// three marks, each only where there is something to mark: on the last tool declaration
/// (caching every tool), on the system prompt (sent as one text block), and on the last
/// content block of the last message that can carry one (a `thinking` block or an empty
/// text cannot), a breakpoint that moves with the conversation, so that the next turn of
/// an agent loop reads everything before it from the cache.
///
/// The default is [`FiveMinutes`](Self::FiveMinutes): in an agent loop every turn sends
/// the previous turn's whole prompt again within seconds, and a cached read costs a tenth
/// of the input price while a write costs 1.25×, so a prefix read once already more than
/// pays for its write. A prompt below the model's minimum cacheable length (1024 to 4096
/// tokens) is not cached, and costs what it cost unmarked.
///
/// Marks added through [`body_field`](super::HttpModelBuilder::body_field) (a `system`
/// of marked blocks, a top-level `cache_control`) count towards the API's limit of four
/// together with these.
///
/// ```
/// use toolsmith::harness::model::http::{AnthropicModel, PromptCaching};
///
/// // Turns far apart (a person answering): the one-hour lifetime.
/// let model = AnthropicModel::builder()
///     .api_key("sk-ant-test")
///     .prompt_caching(PromptCaching::OneHour)
///     .build()
///     .unwrap();
/// # let _ = model;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PromptCaching {
    /// No mark: every request is read at the full input price.
    Off,
    /// Marks with Anthropic's default lifetime, five minutes from the last read.
    #[default]
    FiveMinutes,
    /// Marks with the one-hour lifetime (`"ttl": "1h"`), for turns more than five minutes
    /// apart; its writes cost twice the input price. Requests also name the
    /// `anthropic-beta` [`EXTENDED_CACHE_TTL_BETA`]; a header of that name set on the
    /// builder replaces it, so name this beta there too.
    OneHour,
}

impl PromptCaching {
    /// The `cache_control` value a marked block carries; `None` when caching is off.
    pub(crate) fn mark(self) -> Option<Value> {
        match self {
            Self::Off => None,
            Self::FiveMinutes => Some(json!({"type": "ephemeral"})),
            Self::OneHour => Some(json!({"type": "ephemeral", "ttl": "1h"})),
        }
    }
}

/// Whether `text` may carry a mark: the API refuses one on empty text.
fn markable_text(text: &str) -> bool {
    !text.trim().is_empty()
}

/// The `system` field for `system`: one text block carrying `mark`, or the string as it is
/// without a mark or when it is empty (a mark there would be refused).
pub(crate) fn system(system: &str, mark: Option<&Value>) -> Value {
    match mark {
        Some(mark) if markable_text(system) => {
            json!([{"type": "text", "text": system, CACHE_CONTROL: mark}])
        }
        _ => Value::String(system.to_owned()),
    }
}

/// Writes `mark` into the last content block of the last message that can carry it (not
/// a thinking block, not empty text), a string content becoming its one text block.
/// Nothing is written when the last message has no such block.
pub(crate) fn mark_last_block(messages: &mut [Value], mark: &Value) {
    let Some(content) = messages.last_mut().and_then(|m| m.get_mut("content")) else {
        return;
    };
    match content {
        Value::String(text) if markable_text(text) => {
            let text = std::mem::take(text);
            *content = json!([{"type": "text", "text": text, CACHE_CONTROL: mark}]);
        }
        Value::Array(blocks) => {
            if let Some(block) = blocks
                .iter_mut()
                .rev()
                .filter_map(Value::as_object_mut)
                .find(|block| markable_block(block))
            {
                block.insert(CACHE_CONTROL.to_owned(), mark.clone());
            }
        }
        _ => {}
    }
}

/// Whether a content block may carry a mark.
fn markable_block(block: &serde_json::Map<String, Value>) -> bool {
    match block.get("type").and_then(Value::as_str) {
        Some("thinking" | "redacted_thinking") | None => false,
        Some("text") => block
            .get("text")
            .and_then(Value::as_str)
            .is_some_and(markable_text),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark() -> Value {
        PromptCaching::default().mark().unwrap()
    }

    #[test]
    fn the_lifetimes_are_written_as_the_api_reads_them() {
        assert_eq!(PromptCaching::Off.mark(), None);
        assert_eq!(
            PromptCaching::FiveMinutes.mark(),
            Some(json!({"type": "ephemeral"}))
        );
        assert_eq!(
            PromptCaching::OneHour.mark(),
            Some(json!({"type": "ephemeral", "ttl": "1h"}))
        );
    }

    #[test]
    fn an_empty_system_prompt_stays_an_unmarked_string() {
        assert_eq!(system("  ", Some(&mark())), json!("  "));
        assert_eq!(system("Be brief.", None), json!("Be brief."));
        assert_eq!(
            system("Be brief.", Some(&mark())),
            json!([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}])
        );
    }

    #[test]
    fn the_last_markable_block_of_the_last_message_is_marked() {
        let mut messages = vec![
            json!({"role": "user", "content": "first"}),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "Sure."},
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "text", "text": " "}]}),
        ];
        mark_last_block(&mut messages, &mark());
        assert_eq!(messages[0], json!({"role": "user", "content": "first"}));
        assert_eq!(
            messages[1]["content"],
            json!([{"type": "text", "text": "Sure.", "cache_control": {"type": "ephemeral"}},
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "text", "text": " "}])
        );
    }

    #[test]
    fn a_last_message_with_nothing_markable_is_left_alone() {
        let unmarkable = [
            json!({"role": "user", "content": ""}),
            json!({"role": "assistant", "content": [
                {"type": "redacted_thinking", "data": "d"}]}),
        ];
        for message in unmarkable {
            let mut messages = vec![message.clone()];
            mark_last_block(&mut messages, &mark());
            assert_eq!(messages, [message]);
        }
        mark_last_block(&mut [], &mark());
    }
}
