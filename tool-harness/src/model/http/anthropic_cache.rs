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
//! - A marked block finds an entry an earlier request wrote only within a lookback of 20
//!   blocks: "the system automatically checks for cache hits at all previous content block
//!   boundaries (up to approximately 20 blocks before your explicit breakpoint)"; the
//!   current wording, it "walks backward one block at a time through a lookback window of
//!   20 blocks". Content more than 20 blocks before a mark is not checked unless another
//!   mark is there.

use serde_json::{Map, Value, json};

/// The field a marked block carries.
pub(crate) const CACHE_CONTROL: &str = "cache_control";

/// The most marks a request may carry: the API refuses a fifth.
pub(crate) const MAX_MARKS: usize = 4;

/// How many content blocks a mark looks through for an entry an earlier request wrote,
/// itself included ([`PromptCaching`]).
pub(crate) const LOOKBACK_BLOCKS: usize = 20;

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
/// four marks, each only where there is something to mark: on the last tool declaration
/// (caching every tool), on the system prompt (sent as one text block), and on the last
/// content block of the last message that can carry one (a `thinking` block or an empty
/// text cannot), a breakpoint that moves with the conversation, so that the next turn of
/// an agent loop reads everything before it from the cache.
///
/// A mark finds the entry the previous request wrote only if it lies within Anthropic's
/// lookback of 20 content blocks: the marked block and the 19 before it. A turn that adds
/// more (a model making ten calls at once adds eleven blocks, and their results ten) would
/// miss it and write the whole prompt again. So a fourth mark goes on the previous
/// request's end, the last markable block of the message before the last assistant message
/// (the one that request's moving mark was on), when 20 or more blocks follow it up to the
/// moving mark. Blocks are counted as the API sends them: each content block (a thinking
/// block too), and each block inside a `tool_result`'s content (an image a tool returned),
/// a string content as one: counted rather long than short, as a mark that was not needed
/// costs nothing (the entry it finds is read at the same price). It is left out when the
/// request already carries four marks, counting those of
/// [`body_field`](super::HttpModelBuilder::body_field)s.
///
/// The default is [`FiveMinutes`](Self::FiveMinutes): in an agent loop every turn sends
/// the previous turn's whole prompt again within seconds, and a cached read costs a tenth
/// of the input price while a write costs 1.25×, so a prefix read once already more than
/// pays for its write. A prompt below the model's minimum cacheable length (1024 to 4096
/// tokens) is not cached, and costs what it cost unmarked.
///
/// Marks added through [`body_field`](super::HttpModelBuilder::body_field) (a `system`
/// of marked blocks, a top-level `cache_control`) count towards the API's limit of four
/// together with these: the fourth is then left out, the other three are not.
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

/// Marks `messages` with at most `marks` marks: the last markable block (not a thinking
/// block, not empty text) of the last message, a string content becoming its one text
/// block; and, with a mark to spare, the previous request's end when the lookback from
/// that mark would not reach it ([`PromptCaching`]). Nothing is marked in a message that
/// has no markable block.
pub(crate) fn mark_conversation(messages: &mut [Value], mark: &Value, marks: usize) {
    let Some(last) = messages.len().checked_sub(1) else {
        return;
    };
    if marks == 0 {
        return;
    }
    let Some(last_at) = last_markable(&messages[last]) else {
        return;
    };
    mark_block(&mut messages[last], last_at, mark);
    if marks < 2 {
        return;
    }
    // The previous request ended with the message the model answered: the one before the
    // last assistant message.
    let Some(previous) = messages[..last]
        .iter()
        .rposition(|message| message.get("role").and_then(Value::as_str) == Some("assistant"))
        .and_then(|answer| answer.checked_sub(1))
    else {
        return;
    };
    let Some(previous_at) = last_markable(&messages[previous]) else {
        return;
    };
    let after: usize = block_weights(&messages[previous])
        .skip(previous_at + 1)
        .chain(messages[previous + 1..last].iter().flat_map(block_weights))
        .chain(block_weights(&messages[last]).take(last_at + 1))
        .sum();
    if after >= LOOKBACK_BLOCKS {
        mark_block(&mut messages[previous], previous_at, mark);
    }
}

/// The index of the last block of `message`'s content that may carry a mark (0 for a
/// string content that may).
fn last_markable(message: &Value) -> Option<usize> {
    match message.get("content")? {
        Value::String(text) => markable_text(text).then_some(0),
        Value::Array(blocks) => blocks
            .iter()
            .rposition(|block| block.as_object().is_some_and(markable_block)),
        _ => None,
    }
}

/// Writes `mark` on the `at`-th block of `message`'s content, a string content becoming
/// its one text block.
fn mark_block(message: &mut Value, at: usize, mark: &Value) {
    let Some(content) = message.get_mut("content") else {
        return;
    };
    match content {
        Value::String(text) => {
            let text = std::mem::take(text);
            *content = json!([{"type": "text", "text": text, CACHE_CONTROL: mark}]);
        }
        Value::Array(blocks) => {
            if let Some(block) = blocks.get_mut(at).and_then(Value::as_object_mut) {
                block.insert(CACHE_CONTROL.to_owned(), mark.clone());
            }
        }
        _ => {}
    }
}

/// How many blocks each block of `message`'s content counts for the lookback: one, and one
/// more for each block inside a `tool_result`'s content; a string content is one block.
fn block_weights(message: &Value) -> impl Iterator<Item = usize> + '_ {
    let blocks = match message.get("content") {
        Some(Value::Array(blocks)) => blocks.as_slice(),
        _ => &[],
    };
    let string = usize::from(matches!(message.get("content"), Some(Value::String(_))));
    std::iter::repeat_n(1, string).chain(blocks.iter().map(|block| {
        1 + block
            .get("content")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    }))
}

/// How many marks the body `fields` carry, at any depth: a top-level `cache_control`
/// (Anthropic's automatic caching) and those of the blocks in them.
pub(crate) fn marks_in_fields(fields: &Map<String, Value>) -> usize {
    fields
        .iter()
        .map(|(key, value)| usize::from(key == CACHE_CONTROL) + marks_in(value))
        .sum()
}

/// How many marks `value` carries, at any depth.
fn marks_in(value: &Value) -> usize {
    match value {
        Value::Object(map) => marks_in_fields(map),
        Value::Array(items) => items.iter().map(marks_in).sum(),
        _ => 0,
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
        mark_conversation(&mut messages, &mark(), 1);
        assert_eq!(messages[0], json!({"role": "user", "content": "first"}));
        assert_eq!(
            messages[1]["content"],
            json!([{"type": "text", "text": "Sure.", "cache_control": {"type": "ephemeral"}},
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "text", "text": " "}])
        );
    }

    /// A question, an answer of `calls` calls (after `text` when given), and their results,
    /// as the API takes them.
    fn turn(text: Option<&str>, calls: usize) -> Vec<Value> {
        let mut answer: Vec<Value> = text
            .map(|text| json!({"type": "text", "text": text}))
            .into_iter()
            .collect();
        answer.extend((0..calls).map(
            |n| json!({"type": "tool_use", "id": format!("toolu_{n}"), "name": "add", "input": {}}),
        ));
        let results = (0..calls)
            .map(|n| {
                json!({"type": "tool_result", "tool_use_id": format!("toolu_{n}"),
                    "content": "5"})
            })
            .collect::<Vec<_>>();
        vec![
            json!({"role": "user", "content": "What is 2 + 3?"}),
            json!({"role": "assistant", "content": answer}),
            json!({"role": "user", "content": results}),
        ]
    }

    /// The marks of `messages` as (message, block) pairs.
    fn marked(messages: &[Value]) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        for (at, message) in messages.iter().enumerate() {
            if let Some(blocks) = message["content"].as_array() {
                for (block, value) in blocks.iter().enumerate() {
                    if value.get(CACHE_CONTROL).is_some() {
                        found.push((at, block));
                    }
                }
            }
        }
        found
    }

    #[test]
    fn the_previous_end_is_marked_when_the_lookback_would_not_reach_it() {
        // 10 calls and their results: 20 blocks after the question, the last of them
        // marked; the question is the 21st block back from it: outside the lookback.
        let mut messages = turn(None, 10);
        mark_conversation(&mut messages, &mark(), 2);
        assert_eq!(marked(&messages), [(0, 0), (2, 9)]);
        assert_eq!(
            messages[0]["content"],
            json!([{"type": "text", "text": "What is 2 + 3?", "cache_control": mark()}])
        );
        // 19 blocks: the question is the 20th back, within it.
        let mut messages = turn(Some("Adding."), 9);
        mark_conversation(&mut messages, &mark(), 2);
        assert_eq!(marked(&messages), [(2, 8)]);
        assert_eq!(messages[0]["content"], "What is 2 + 3?");
        // A mark to spare is needed.
        let mut messages = turn(None, 10);
        mark_conversation(&mut messages, &mark(), 1);
        assert_eq!(marked(&messages), [(2, 9)]);
        let mut messages = turn(None, 10);
        mark_conversation(&mut messages, &mark(), 0);
        assert_eq!(marked(&messages), []);
    }

    #[test]
    fn blocks_inside_a_result_count_and_the_previous_end_is_its_last_markable_block() {
        // After the previous end: an empty text, 5 calls, and 5 results each holding 3
        // blocks (a text and two images): 1 + 5 + 5 × 4 = 26 (11 without the blocks
        // inside the results).
        let mut messages = turn(None, 5);
        for result in messages[2]["content"].as_array_mut().unwrap() {
            result["content"] = json!([{"type": "text", "text": "5"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]);
        }
        // The previous request ended with a result and an empty text: its last markable
        // block is the result.
        messages[0] = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_x", "content": "1"},
            {"type": "text", "text": ""}]});
        mark_conversation(&mut messages, &mark(), 2);
        assert_eq!(marked(&messages), [(0, 0), (2, 4)]);
    }

    #[test]
    fn without_an_answer_or_a_markable_previous_end_only_the_last_block_is_marked() {
        let mut alone = vec![json!({"role": "user", "content": "q"})];
        mark_conversation(&mut alone, &mark(), MAX_MARKS);
        assert_eq!(marked(&alone), [(0, 0)]);
        let mut messages = turn(None, 12);
        messages[0]["content"] = json!([{"type": "text", "text": " "}]);
        mark_conversation(&mut messages, &mark(), MAX_MARKS);
        assert_eq!(marked(&messages), [(2, 11)]);
    }

    #[test]
    fn marks_are_counted_at_any_depth() {
        let fields = |value: Value| value.as_object().unwrap().clone();
        assert_eq!(
            marks_in_fields(&fields(json!({"cache_control": {"type": "ephemeral"}}))),
            1
        );
        assert_eq!(
            marks_in_fields(&fields(json!({"system": [{"type": "text", "text": "a",
                "cache_control": {"type": "ephemeral"}}], "metadata": {}}))),
            1
        );
        assert_eq!(marks_in(&json!({"type": "ephemeral"})), 0);
        assert_eq!(
            marks_in(&json!([{"type": "text", "text": "a", "cache_control": {}},
                {"nested": {"cache_control": {}}}])),
            2
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
            mark_conversation(&mut messages, &mark(), 1);
            assert_eq!(messages, [message]);
        }
        mark_conversation(&mut [], &mark(), MAX_MARKS);
    }
}
