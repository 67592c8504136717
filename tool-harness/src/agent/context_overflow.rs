//! [`ContextOverflow`]: what a session does when the conversation no longer fits the model's
//! context window (the model says so, [`ModelError::ContextTooLong`], or the session's
//! estimate does), and the built-in [`DropOldestExchanges`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use toolsmith_core::{ToolCallResult, UserModelContent};

use super::compaction::Compaction;
use super::refused_counts::RefusedCounts;
use super::token_estimate::{estimate_message_tokens, results_tokens};
use crate::model::{Message, ModelError};

/// How many times a session asks its [`ContextOverflow`] policy to shorten the
/// conversation for one model call; the call is asked again after each shortening, and
/// after the last the run ends with the model's [`ModelError::ContextTooLong`].
pub const MAX_OVERFLOW_ATTEMPTS: usize = 3;

/// The content a tool result is given when [`DropOldestExchanges`] empties it.
pub const DROPPED_RESULT: &str =
    "[This tool result was dropped to fit the model's context window.]";

/// What a [`ContextOverflow`] policy did to the conversation: how many messages it removed
/// and how many tool results it emptied. Nothing of either means it could not shorten it:
/// after the model's refusal the run ends with the model's error; on the session's estimate
/// the request is sent as it is, and the model decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Shortened {
    /// Messages removed from the conversation.
    pub dropped: usize,
    /// Tool results whose content was replaced by a short placeholder (each call keeps
    /// its result, so that no call goes unanswered).
    pub emptied: usize,
}

impl Shortened {
    /// Nothing was shortened: the run ends with the model's error (on an estimate, the
    /// request is sent as it is).
    pub const NOTHING: Self = Self {
        dropped: 0,
        emptied: 0,
    };

    /// `dropped` messages removed and `emptied` tool results emptied.
    pub fn new(dropped: usize, emptied: usize) -> Self {
        Self { dropped, emptied }
    }

    /// Whether nothing was shortened.
    pub fn is_nothing(&self) -> bool {
        self.dropped == 0 && self.emptied == 0
    }
}

/// Why a [`ContextOverflow`] policy is asked, and how many times the policy has been asked
/// for this model call (1 the first time).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Overflow<'a> {
    /// 1 the first time the policy is asked for a model call, up to
    /// [`MAX_OVERFLOW_ATTEMPTS`] (the estimate's askings and the model's refusals
    /// together).
    pub attempt: usize,
    /// What says the conversation does not fit: the model's refusal, or the session's
    /// estimate before sending.
    pub cause: OverflowCause<'a>,
}

impl<'a> Overflow<'a> {
    /// The `attempt`-th time the policy is asked, for the model's `error` (to test a policy
    /// of one's own).
    pub fn new(attempt: usize, error: &'a ModelError) -> Self {
        Self {
            attempt,
            cause: OverflowCause::Refused(error),
        }
    }

    /// The `attempt`-th time the policy is asked, for the session's `estimate` (to test a
    /// policy of one's own).
    pub fn estimated(attempt: usize, estimate: ContextEstimate) -> Self {
        Self {
            attempt,
            cause: OverflowCause::Estimated(estimate),
        }
    }

    /// The model's error, when the model refused the request.
    pub fn error(&self) -> Option<&'a ModelError> {
        match self.cause {
            OverflowCause::Refused(error) => Some(error),
            OverflowCause::Estimated(_) => None,
        }
    }
}

/// What says the conversation does not fit the model's context window ([`Overflow`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum OverflowCause<'a> {
    /// The model refused the request: its [`ModelError::ContextTooLong`], whose message
    /// often gives the counts ("prompt is too long: 209353 tokens > 199999 maximum";
    /// Anthropic's "input length and `max_tokens` exceed context limit: 199759 + 8192 >
    /// 200000" counts the output the request reserved too).
    Refused(&'a ModelError),
    /// Nothing was sent: the session's estimate of the request, with the output it
    /// reserves, passes the window given
    /// [`with_context_window`](super::AgentSessionBuilder::with_context_window).
    Estimated(ContextEstimate),
}

/// A request's estimate against the model's context window, in tokens: what made the
/// session shorten the conversation before sending it
/// ([`with_context_window`](super::AgentSessionBuilder::with_context_window)).
///
/// The input is the input tokens the provider reported for the previous request (whose
/// messages the request continues: the run's, or, for the first request of a
/// [`send`](super::AgentSession::send), the kept conversation's last), plus the messages
/// and tool declarations added since at one token per 3 bytes of their text and JSON (an
/// image at most 1,600 tokens); with no such report (a conversation's first request, a
/// provider that reports none, a conversation shortened, edited or stripped of images
/// since), the whole request is counted that way. Tokenizers average about 4 characters a token in
/// English, so the estimate errs long: the window is rather kept too well than passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextEstimate {
    /// The request's estimated input tokens.
    pub input_tokens: u64,
    /// The output the model will ask for ([`ChatModel::output_limit`](crate::model::ChatModel::output_limit):
    /// the request's `max_output_tokens`, else the client's own), 0 when neither says.
    pub reserved_output: u64,
    /// The model's context window, as the session was given it.
    pub window: u64,
}

impl ContextEstimate {
    /// `input_tokens` and `reserved_output` against `window`.
    pub fn new(input_tokens: u64, reserved_output: u64, window: u64) -> Self {
        Self {
            input_tokens,
            reserved_output,
            window,
        }
    }

    /// Whether the input and the reserved output together pass the window.
    pub fn exceeds_window(&self) -> bool {
        self.excess() > 0
    }

    /// How many tokens the input and the reserved output together pass the window by: what
    /// a policy sheds, in [`estimate_message_tokens`], to fit it. 0 when they fit.
    pub fn excess(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.reserved_output)
            .saturating_sub(self.window)
    }
}

/// What an [`AgentSession`](super::AgentSession) built
/// [`with_context_overflow`](super::AgentSessionBuilder::with_context_overflow) does when
/// the model answers that the conversation is longer than its context window, or (built
/// [`with_context_window`](super::AgentSessionBuilder::with_context_window) too) when the
/// session estimates, before sending, that it will ([`Overflow::cause`]): shorten the
/// conversation about to be sent, after which the same model call is estimated or asked
/// again (at most [`MAX_OVERFLOW_ATTEMPTS`] times a model call; then, or when the policy
/// shortens nothing, the request is sent as it is and a refusal ends the run with
/// [`AgenticError::Model`](super::AgenticError::Model) carrying the
/// [`ModelError::ContextTooLong`] and the run). The conversation of
/// [`send`](super::AgentSession::send) is kept as shortened, so the next `send` starts
/// from it.
///
/// `conversation` is every message of the request: the kept conversation, the user's new
/// message and the run's messages so far; the system prompt is apart (the session's, sent
/// with every request, never shortened). Every provider refuses a tool call without its
/// result, or a result without its call: keep an assistant message with calls and the
/// tool-results message after it together, and the latest user message: it is the question
/// being answered. For the answer of [`send_as`](super::AgentSession::send_as) and
/// [`run_as`](super::AgentSession::run_as), `conversation` is the run's, up to that
/// exchange's own request (the instruction to call `final_answer`, and answers sent back to
/// mend), which is never shortened; a policy that removes the run's latest user message
/// there has it put back, first. A panic of the policy ends the run with
/// [`AgenticError::Panicked`](super::AgenticError::Panicked), the conversation as the
/// policy left it.
///
/// A closure `Fn(&mut Vec<Message>, &Overflow) -> Shortened` is a policy too (its
/// parameters' types written out: `|messages: &mut Vec<Message>, _: &Overflow<'_>| …`).
///
/// ```
/// use toolsmith::harness::agent::{AgentEvent, AgentSession, DropOldestExchanges};
/// use toolsmith::harness::model::{ChatResponse, Message, ModelError, ScriptedModel, ScriptedTurn};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let too_long = ModelError::ContextTooLong {
///     provider: "anthropic".into(),
///     status: 400,
///     message: "prompt is too long: 209353 tokens > 199999 maximum".into(),
/// };
/// let model = ScriptedModel::new([
///     ScriptedTurn::text("Paris."),
///     // The second question no longer fits with the first exchange in the conversation.
///     ScriptedTurn::error(too_long),
///     ScriptedTurn::respond(|request| {
///         // Asked again without the oldest exchange; the system prompt is kept.
///         assert_eq!(request.messages, [Message::user("And of Italy?")]);
///         assert_eq!(request.system.as_deref(), Some("Answer briefly."));
///         Ok(ChatResponse::text("Rome."))
///     }),
/// ]);
/// let session = AgentSession::builder(model)
///     .with_model("scripted")
///     .with_system_prompt("Answer briefly.")
///     .with_context_overflow(DropOldestExchanges::new())
///     .with_event_handler(|event: &AgentEvent| {
///         if let AgentEvent::ContextShortened { dropped, .. } = event {
///             assert_eq!(*dropped, 2);
///         }
///     })
///     .build()
///     .unwrap();
/// session.send("What is the capital of France?").await.unwrap();
/// let run = session.send("And of Italy?").await.unwrap();
/// assert_eq!(run.text, "Rome.");
/// // The kept conversation is the shortened one: the next `send` does not fail again.
/// assert_eq!(session.transcript().await.len(), 2);
/// # }
/// ```
pub trait ContextOverflow: Send + Sync {
    /// Shortens `conversation`, the request's messages, for the `overflow.attempt`-th time
    /// this model call; says what it did ([`Shortened::NOTHING`]: it could not).
    fn shorten(&self, conversation: &mut Vec<Message>, overflow: &Overflow<'_>) -> Shortened;
}

impl<F> ContextOverflow for F
where
    F: Fn(&mut Vec<Message>, &Overflow<'_>) -> Shortened + Send + Sync,
{
    fn shorten(&self, conversation: &mut Vec<Message>, overflow: &Overflow<'_>) -> Shortened {
        self(conversation, overflow)
    }
}

/// A session's policy, compaction and context window, kept in its
/// [`SessionParts`](toolsmith_core::SessionParts) state for the `agent` group built with the
/// session: its children inherit them.
pub(crate) struct SessionContextOverflow {
    pub(crate) policy: Option<Arc<dyn ContextOverflow>>,
    pub(crate) compaction: Option<Arc<Compaction>>,
    pub(crate) window: Option<u64>,
}

/// A [`ContextOverflow`] policy that drops the oldest exchanges, as few as the overflow
/// calls for. An exchange is a user message and everything after it up to the next user
/// message (messages before the first user message count as one); whole exchanges go, so
/// a call and its result always go together, and the conversation still begins with a user
/// message. The current exchange (from the latest user message on) is never dropped.
///
/// How much to shed, in the guard's per-message estimate ([`estimate_message_tokens`]):
///
/// - asked because of the session's estimate ([`OverflowCause::Estimated`]): as many
///   tokens as the estimate and the reserved output pass the window
///   ([`ContextEstimate::excess`]);
/// - asked because the model refused ([`OverflowCause::Refused`]) with a message that
///   states the request's count and the window (Anthropic's "prompt is too long: 209353
///   tokens > 199999 maximum" or "input length and `max_tokens` exceed context limit:
///   199759 + 8192 > 200000", OpenAI's "maximum context length is 8192 tokens. However,
///   you requested 9000 tokens", Gemini's "The input token count (N) exceeds the maximum
///   number of tokens allowed (M)"): the excess, and half as much again
///   ([`REFUSED_MARGIN_PERCENT`]). The excess is in the provider's tokens, and the estimate
///   counts a token per 3 bytes where tokenizers read about 4 bytes of English a token: a
///   message estimated at 4/3 of its tokens takes 4/3 of the excess to shed it; the margin
///   above that covers text sparser still. Too little comes back as another refusal, sized
///   again; too much loses a little more of the conversation than needed.
///
/// The policy drops the fewest oldest exchanges whose estimate reaches that; when dropping
/// every earlier exchange is not enough, it drops them all and empties the fewest oldest
/// tool results of the current exchange (each keeps its call id, its content replaced by
/// [`DROPPED_RESULT`]; an error result stays one; a result the placeholder would not
/// shorten is left) that make up the rest.
///
/// A refusal without such counts (OpenAI's Responses, Anthropic's 413) is met by halving:
/// the older half (at least one) of the earlier exchanges, or, when the current exchange is
/// all that is left, the older half (at least one) of its tool results not yet emptied.
///
/// When nothing is left to drop or empty, it shortens nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct DropOldestExchanges {
    _private: (),
}

impl DropOldestExchanges {
    /// The policy.
    pub fn new() -> Self {
        Self::default()
    }
}

/// How much more than a refusal's excess [`DropOldestExchanges`] sheds, in percent of the
/// excess: 150 (see there why).
pub const REFUSED_MARGIN_PERCENT: u64 = 150;

impl ContextOverflow for DropOldestExchanges {
    fn shorten(&self, conversation: &mut Vec<Message>, overflow: &Overflow<'_>) -> Shortened {
        let current = conversation
            .iter()
            .rposition(|message| matches!(message, Message::User { .. }))
            .unwrap_or(0);
        // Where each exchange before the current one begins, and the current one.
        let mut starts: Vec<usize> = (0..current)
            .filter(|&at| at == 0 || matches!(conversation[at], Message::User { .. }))
            .collect();
        starts.push(current);
        match tokens_to_shed(overflow) {
            Some(tokens) => shed(conversation, &starts, tokens),
            None => halve(conversation, &starts),
        }
    }
}

/// How many tokens of the per-message estimate `overflow` calls to shed; `None` when it
/// cannot be told (a refusal stating no counts).
fn tokens_to_shed(overflow: &Overflow<'_>) -> Option<u64> {
    match overflow.cause {
        OverflowCause::Estimated(estimate) => Some(estimate.excess()),
        OverflowCause::Refused(ModelError::ContextTooLong { message, .. }) => {
            let excess = RefusedCounts::read(message)?.excess();
            Some(excess.saturating_mul(REFUSED_MARGIN_PERCENT).div_ceil(100))
        }
        OverflowCause::Refused(_) => None,
    }
}

/// Drops the fewest oldest exchanges (each beginning at one of `starts`, the last being the
/// current one's) whose estimate reaches `tokens`; when all of them do not, drops them all
/// and empties the fewest oldest results of the current exchange that make up the rest.
fn shed(conversation: &mut Vec<Message>, starts: &[usize], tokens: u64) -> Shortened {
    if tokens == 0 {
        return Shortened::NOTHING;
    }
    let mut shed = 0_u64;
    let mut end = 0;
    for bounds in starts.windows(2) {
        if shed >= tokens {
            break;
        }
        shed = conversation[bounds[0]..bounds[1]]
            .iter()
            .map(estimate_message_tokens)
            .fold(shed, u64::saturating_add);
        end = bounds[1];
    }
    conversation.drain(..end);
    let emptied = if shed < tokens {
        empty_oldest_results(conversation, ToEmpty::Tokens(tokens - shed))
    } else {
        0
    };
    Shortened::new(end, emptied)
}

/// Drops the older half (at least one) of the exchanges before the current one (each
/// beginning at one of `starts`, the last being the current one's); without any, empties
/// the older half of the current exchange's results.
fn halve(conversation: &mut Vec<Message>, starts: &[usize]) -> Shortened {
    let earlier = starts.len() - 1;
    if earlier == 0 {
        let current = starts[0];
        return Shortened::new(
            0,
            empty_oldest_results(&mut conversation[current..], ToEmpty::Half),
        );
    }
    let end = starts[earlier.div_ceil(2)];
    conversation.drain(..end);
    Shortened::new(end, 0)
}

/// How many tool results [`empty_oldest_results`] empties.
#[derive(Debug, Clone, Copy)]
enum ToEmpty {
    /// The older half (at least one) of those not yet emptied.
    Half,
    /// The fewest oldest whose emptying takes this many tokens off the estimate; results
    /// the placeholder would not shorten are left.
    Tokens(u64),
}

/// Empties the oldest tool results in `messages` not yet emptied, oldest first, as many as
/// `to_empty` says: how many it emptied.
fn empty_oldest_results(messages: &mut [Message], to_empty: ToEmpty) -> usize {
    let is_emptied = |result: &ToolCallResult| matches!(&result.content, UserModelContent::Text(text) if text == DROPPED_RESULT);
    let (mut count_left, mut tokens_left) = match to_empty {
        ToEmpty::Half => {
            let left = messages
                .iter()
                .flat_map(Message::results)
                .filter(|result| !is_emptied(&result.result))
                .count();
            (left.div_ceil(2), u64::MAX)
        }
        ToEmpty::Tokens(tokens) => (usize::MAX, tokens),
    };
    let mut emptied = 0;
    for message in messages.iter_mut() {
        let Message::ToolResults { results } = message else {
            continue;
        };
        // The message's estimate as it stands, so that each result emptied is counted by
        // what it takes off the message's, as the guard counts it.
        let mut tokens = results_tokens(results);
        for at in 0..results.len() {
            if count_left == 0 || tokens_left == 0 {
                return emptied;
            }
            if is_emptied(&results[at].result) {
                continue;
            }
            let error_detail = results[at]
                .result
                .error_detail
                .as_ref()
                .map(|_| DROPPED_RESULT.to_owned());
            let placeholder = ToolCallResult {
                content: UserModelContent::Text(DROPPED_RESULT.to_owned()),
                error_detail,
            };
            let kept = std::mem::replace(&mut results[at].result, placeholder);
            let after = results_tokens(results);
            if matches!(to_empty, ToEmpty::Tokens(_)) && after >= tokens {
                // The placeholder is no shorter: emptying it would shed nothing.
                results[at].result = kept;
                continue;
            }
            tokens_left = tokens_left.saturating_sub(tokens.saturating_sub(after));
            tokens = after;
            count_left -= 1;
            emptied += 1;
        }
    }
    emptied
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolsmith_core::ToolArguments;

    use super::*;
    use crate::model::{ModelCall, ToolResultMessage};

    fn error() -> ModelError {
        ModelError::ContextTooLong {
            provider: "p".into(),
            status: 400,
            message: "m".into(),
        }
    }

    /// A user message, an answer calling `tool` (id `id`), its result, the final answer.
    fn exchange(id: &str, question: &str) -> Vec<Message> {
        let arguments = ToolArguments::try_from(json!({})).unwrap();
        vec![
            Message::user(question),
            Message::assistant_calls(None, vec![ModelCall::new(id, "tool", arguments)]),
            Message::ToolResults {
                results: vec![ToolResultMessage {
                    call_id: id.into(),
                    name: "tool".into(),
                    result: ToolCallResult::text(format!("a long result of {id}")),
                }],
            },
            Message::assistant(format!("the answer to {question}")),
        ]
    }

    /// Shortened for a refusal stating no counts: halved.
    fn shorten(conversation: &mut Vec<Message>) -> Shortened {
        let error = error();
        DropOldestExchanges::new().shorten(conversation, &Overflow::new(1, &error))
    }

    /// Shortened for an estimate passing the window by `excess` tokens.
    fn shorten_by(conversation: &mut Vec<Message>, excess: u64) -> Shortened {
        // 100 reserved for the output, in a window of 1000.
        let estimate = ContextEstimate::new(900 + excess, 100, 1000);
        assert_eq!(estimate.excess(), excess);
        DropOldestExchanges::new().shorten(conversation, &Overflow::estimated(1, estimate))
    }

    /// Shortened for the model's refusal saying `message`.
    fn refused(conversation: &mut Vec<Message>, message: String) -> Shortened {
        let error = ModelError::ContextTooLong {
            provider: "p".into(),
            status: 400,
            message,
        };
        DropOldestExchanges::new().shorten(conversation, &Overflow::new(1, &error))
    }

    /// `ids`' exchanges and then the latest user message, "now".
    fn conversation(ids: &[&str]) -> Vec<Message> {
        let mut conversation: Vec<Message> = ids.iter().flat_map(|id| exchange(id, id)).collect();
        conversation.push(Message::user("now"));
        conversation
    }

    /// The guard's estimate of `messages`.
    fn tokens(messages: &[Message]) -> u64 {
        messages.iter().map(estimate_message_tokens).sum()
    }

    #[test]
    fn asked_by_the_estimate_the_fewest_oldest_exchanges_that_fit_are_dropped() {
        // Each exchange is estimated alike (ids of one byte).
        let one = tokens(&exchange("a", "a"));
        assert_eq!(one, tokens(&exchange("b", "b")));
        // One token over: the oldest exchange is enough.
        let mut shortened = conversation(&["a", "b", "c", "d"]);
        assert_eq!(shorten_by(&mut shortened, 1), Shortened::new(4, 0));
        assert_eq!(shortened, conversation(&["b", "c", "d"]));
        // Exactly one exchange over: still one.
        let mut shortened = conversation(&["a", "b", "c", "d"]);
        assert_eq!(shorten_by(&mut shortened, one), Shortened::new(4, 0));
        assert_eq!(shortened, conversation(&["b", "c", "d"]));
        // A token more than one exchange: two; more than three: all four, and nothing
        // left to empty in the current exchange.
        let mut shortened = conversation(&["a", "b", "c", "d"]);
        assert_eq!(shorten_by(&mut shortened, one + 1), Shortened::new(8, 0));
        assert_eq!(shortened, conversation(&["c", "d"]));
        let mut shortened = conversation(&["a", "b", "c", "d"]);
        assert_eq!(
            shorten_by(&mut shortened, 3 * one + 1),
            Shortened::new(16, 0)
        );
        assert_eq!(shortened, conversation(&[]));
        // Within the window: nothing to shed.
        let mut shortened = conversation(&["a", "b"]);
        assert_eq!(shorten_by(&mut shortened, 0), Shortened::NOTHING);
        assert_eq!(shortened, conversation(&["a", "b"]));
    }

    /// An earlier exchange "e", then the current one: "now", calls of a, b and c with their
    /// results of `size` bytes each.
    fn with_results(size: usize) -> Vec<Message> {
        let mut messages = exchange("e", "e");
        messages.push(Message::user("now"));
        for id in ["a", "b", "c"] {
            let mut call = exchange(id, "unused");
            if let Message::ToolResults { results } = &mut call[2] {
                results[0].result = ToolCallResult::text("r".repeat(size));
            }
            messages.extend(call.into_iter().skip(1).take(2));
        }
        messages
    }

    fn texts(conversation: &[Message]) -> Vec<String> {
        conversation
            .iter()
            .flat_map(Message::results)
            .map(|result| result.result.content.to_text())
            .collect()
    }

    #[test]
    fn when_every_earlier_exchange_is_not_enough_the_fewest_oldest_results_are_emptied() {
        let long = "r".repeat(3000);
        let earlier = tokens(&exchange("e", "e"));
        // Emptying one result of 3000 bytes takes 1000 tokens off, less the placeholder's.
        let mut one_emptied = with_results(3000);
        let before = tokens(&one_emptied);
        assert_eq!(
            empty_oldest_results(&mut one_emptied[4..], ToEmpty::Tokens(1)),
            1
        );
        let per_result = before - tokens(&one_emptied);
        assert!(per_result > 900, "{per_result}");
        // The earlier exchange and one result more than one result's worth: the earlier
        // exchange goes and two results are emptied, the oldest; the third stays whole.
        let mut shortened = with_results(3000);
        assert_eq!(
            shorten_by(&mut shortened, earlier + per_result + 1),
            Shortened::new(4, 2)
        );
        assert_eq!(shortened[0], Message::user("now"));
        assert_eq!(texts(&shortened), [DROPPED_RESULT, DROPPED_RESULT, &long]);
        // Asked again for a token: the last one; then nothing is left.
        assert_eq!(shorten_by(&mut shortened, 1), Shortened::new(0, 1));
        assert_eq!(texts(&shortened), [DROPPED_RESULT; 3]);
        assert_eq!(shorten_by(&mut shortened, 1), Shortened::NOTHING);
        // Results shorter than the placeholder are not "emptied" into longer ones.
        let mut short = with_results(3);
        assert_eq!(shorten_by(&mut short, earlier + 1), Shortened::new(4, 0));
        assert_eq!(texts(&short), ["rrr"; 3]);
    }

    #[test]
    fn a_refusal_s_counts_size_the_cut_with_its_margin_in_each_provider_s_words() {
        let one = tokens(&exchange("a", "a"));
        // Four fifths of an exchange over: the margin (half as much again) makes it more
        // than one exchange, so two go.
        let excess = one * 4 / 5;
        assert!(excess < one && excess * REFUSED_MARGIN_PERCENT / 100 > one);
        let limit = 200_000;
        let requested = limit + excess;
        let messages = [
            format!("prompt is too long: {requested} tokens > {limit} maximum"),
            format!(
                "input length and `max_tokens` exceed context limit: {} + 8192 > {limit}, \
                 decrease input length or `max_tokens` and try again",
                requested - 8192
            ),
            format!(
                "This model's maximum context length is {limit} tokens. However, your messages \
                 resulted in {requested} tokens. Please reduce the length of the messages."
            ),
            format!(
                "This model's maximum context length is {limit} tokens. However, you requested \
                 {requested} tokens ({} in the messages, 512 in the completion). Please reduce \
                 the length of the messages or completion.",
                requested - 512
            ),
            format!(
                "The input token count ({requested}) exceeds the maximum number of tokens \
                 allowed ({limit})."
            ),
        ];
        for message in messages {
            let mut shortened = conversation(&["a", "b", "c", "d"]);
            assert_eq!(
                refused(&mut shortened, message.clone()),
                Shortened::new(8, 0),
                "{message}"
            );
            assert_eq!(shortened, conversation(&["c", "d"]), "{message}");
        }
        // A refusal by a few tokens: the oldest exchange alone.
        let mut shortened = conversation(&["a", "b", "c", "d"]);
        let message = format!("prompt is too long: {} tokens > {limit} maximum", limit + 3);
        assert_eq!(refused(&mut shortened, message), Shortened::new(4, 0));
        assert_eq!(shortened, conversation(&["b", "c", "d"]));
    }

    #[test]
    fn a_refusal_without_counts_halves_as_before() {
        for message in [
            "Your input exceeds the context window of this model. Please adjust your input and \
             try again.",
            "Request exceeds the maximum size",
        ] {
            let mut shortened = conversation(&["a", "b", "c", "d"]);
            assert_eq!(
                refused(&mut shortened, message.to_owned()),
                Shortened::new(8, 0),
                "{message}"
            );
            assert_eq!(shortened, conversation(&["c", "d"]), "{message}");
        }
        // Another error than `ContextTooLong` (a policy of one's own asked by hand): halved.
        let other = ModelError::Api {
            provider: "p".into(),
            status: 400,
            message: "prompt is too long: 200003 tokens > 200000 maximum".into(),
        };
        let mut shortened = conversation(&["a", "b"]);
        let done = DropOldestExchanges::new().shorten(&mut shortened, &Overflow::new(1, &other));
        assert_eq!(done, Shortened::new(4, 0));
    }

    #[test]
    fn drops_the_older_half_of_the_earlier_exchanges_whole() {
        let mut conversation: Vec<Message> = ["a", "b", "c", "d"]
            .into_iter()
            .flat_map(|id| exchange(id, id))
            .collect();
        conversation.push(Message::user("now"));
        // Four earlier exchanges: the two oldest go.
        assert_eq!(shorten(&mut conversation), Shortened::new(8, 0));
        assert_eq!(conversation[0], Message::user("c"));
        assert_eq!(conversation.len(), 9);
        // Two: one goes; one: it goes.
        assert_eq!(shorten(&mut conversation), Shortened::new(4, 0));
        assert_eq!(shorten(&mut conversation), Shortened::new(4, 0));
        assert_eq!(conversation, [Message::user("now")]);
        // Nothing but the latest user message: nothing to shorten.
        assert_eq!(shorten(&mut conversation), Shortened::NOTHING);
        assert_eq!(conversation, [Message::user("now")]);
    }

    #[test]
    fn messages_before_the_first_user_message_are_one_exchange() {
        let mut conversation = vec![Message::assistant("Hello, how can I help?")];
        conversation.extend(exchange("a", "now"));
        assert_eq!(shorten(&mut conversation), Shortened::new(1, 0));
        assert_eq!(conversation[0], Message::user("now"));
    }

    #[test]
    fn in_the_current_exchange_the_oldest_results_are_emptied_calls_kept() {
        let mut conversation = exchange("a", "now");
        conversation.pop();
        conversation.extend(exchange("b", "unused").into_iter().skip(1).take(2));
        conversation.extend(exchange("c", "unused").into_iter().skip(1).take(2));
        let calls_before: Vec<_> = conversation
            .iter()
            .flat_map(Message::calls)
            .cloned()
            .collect();
        // Three results: two are emptied, the oldest first; then the last.
        assert_eq!(shorten(&mut conversation), Shortened::new(0, 2));
        let texts = |conversation: &[Message]| -> Vec<String> {
            conversation
                .iter()
                .flat_map(Message::results)
                .map(|result| result.result.content.to_text())
                .collect()
        };
        assert_eq!(
            texts(&conversation),
            [DROPPED_RESULT, DROPPED_RESULT, "a long result of c"]
        );
        assert_eq!(shorten(&mut conversation), Shortened::new(0, 1));
        assert_eq!(texts(&conversation), [DROPPED_RESULT; 3]);
        assert_eq!(shorten(&mut conversation), Shortened::NOTHING);
        let calls_after: Vec<_> = conversation
            .iter()
            .flat_map(Message::calls)
            .cloned()
            .collect();
        assert_eq!(calls_before, calls_after);
        assert_eq!(conversation.len(), 7);
    }

    #[test]
    fn an_emptied_error_result_stays_an_error() {
        let mut conversation = exchange("a", "now");
        if let Message::ToolResults { results } = &mut conversation[2] {
            results[0].result = ToolCallResult::error("a long error");
        }
        assert_eq!(shorten(&mut conversation), Shortened::new(0, 1));
        let result = &conversation[2].results()[0].result;
        assert!(result.is_error());
        assert_eq!(result.content.to_text(), DROPPED_RESULT);
    }
}
