//! [`Compaction`]: the older part of a conversation summarised by the model once a request
//! nears the context window, so that a long run goes on from what it learned instead of
//! losing it to a [`ContextOverflow`](super::ContextOverflow) policy's cuts.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

use toolsmith_core::{CancellationToken, Image, ToolDeclarations};

use super::context_overflow::ContextEstimate;
use super::events::AgentEvent;
use super::ledger::{RunLedger, RunOrigin};
use super::session::{RunEnd, is_cancelled};
use super::token_estimate::{BYTES_PER_TOKEN, TokenEstimate, estimate_message_tokens};
use super::{AgentRun, AgentSession, AgenticError};
use crate::char_boundary::{ceil_char_boundary, floor_char_boundary};
use crate::model::{ChatOptions, ChatRequest, Message, ToolChoice};

/// How full the window gets, in percent, before [`Compaction`] summarises
/// ([`Compaction::starting_at_percent`]).
pub const DEFAULT_COMPACTION_START_PERCENT: u8 = 80;

/// How much of the window, in percent, the newest messages kept word for word may take
/// ([`Compaction::keeping_recent_percent`]).
pub const DEFAULT_COMPACTION_KEEP_PERCENT: u8 = 20;

/// What the model is asked to do with the older part of the conversation (its system
/// prompt for the summary): keep what the rest of the work needs, since the summary is all
/// that will be left of it.
pub const DEFAULT_COMPACTION_INSTRUCTIONS: &str = "\
You condense the earlier part of a conversation between a user and an AI assistant that \
uses tools. The conversation will go on from your summary alone, so keep everything the \
rest of the work needs: what the user asked for and every constraint they set; decisions \
made and why; facts found, with the names, paths, numbers, identifiers and error messages \
exactly as they were; what was done, what failed, and what is left to do. Leave out \
greetings, repetition and tool output that no longer matters. Write the summary only, in \
plain prose or short lists.";

/// The line a summary message begins with: how a later compaction (and a reader of the
/// transcript) knows it. A compaction puts its summary first in the conversation; a user's
/// message elsewhere that begins with this line is the user's, repeated whole.
pub const SUMMARY_HEADING: &str = "[Summary of the earlier conversation, written by the model \
                                   when it grew too long for the context window]";

/// The line before the user's latest message where a summary message repeats it word for
/// word.
pub const SUMMARIZED_QUESTION_HEADING: &str = "[The user's latest message, as they wrote it]";

/// Summarising by the model before a request that nears the context window
/// ([`AgentSessionBuilder::with_compaction`](super::AgentSessionBuilder::with_compaction),
/// which needs [`with_context_window`](super::AgentSessionBuilder::with_context_window)).
///
/// Before each model call of a run, when the session's estimate of the request and the
/// output it reserves passes [`starting_at_percent`](Self::starting_at_percent) of the
/// window, the session sends the model the conversation's older messages as a text
/// transcript, asking for a summary ([`DEFAULT_COMPACTION_INSTRUCTIONS`], or
/// [`with_instructions`](Self::with_instructions)), and replaces them by one user message:
/// [`SUMMARY_HEADING`], the summary, then (after [`SUMMARIZED_QUESTION_HEADING`]) the
/// user's latest message word for word, with its images, so that the task is never known
/// only by its summary. The newest messages, up to
/// [`keeping_recent_percent`](Self::keeping_recent_percent) of the window, are kept as they
/// were; a tool call and its result stay together. The summary is a model call of the run
/// (counted in its model calls, usage and budget, not streamed), reported by an
/// [`AgentEvent::ContextCompacted`]; the conversation kept by
/// [`send`](AgentSession::send) is the compacted one.
///
/// The transcript is made to fit the window with the summary request's instructions and
/// reserved output: past it, its longest texts, arguments and tool results are cut in the
/// middle to one length, each cut saying how many bytes went.
///
/// The newest messages kept are fewer, down to none, where keeping that share would leave
/// the request (its system prompt, tools and reserved output counted) past the threshold,
/// due again at the next call. No summary is asked for when even that would not bring it
/// under (the user's latest message, which the summary repeats, or the reserved output
/// takes that much; a `tracing` warning says so): it would cost a model call at every
/// turn. Nor when the call about to be made is the run's last under
/// [`with_max_turns`](super::AgentSessionBuilder::with_max_turns), or one past its limits
/// (its final answer): the summary would take it. After a summary, the run's token budget,
/// cancellation and [`PauseHandle`](super::PauseHandle) are heeded before the next call,
/// as before any.
///
/// A summary that fails (the model's error, or an empty answer) leaves the conversation as
/// it was, with a `tracing` warning: the request still fits the window (the threshold is
/// below it), and past the window the session's
/// [`ContextOverflow`](super::ContextOverflow) policy, if any, still shortens it. The typed
/// answer's exchange ([`send_as`](AgentSession::send_as)) is not compacted: it is short,
/// and under the policy.
///
/// ```
/// use toolsmith::harness::agent::{AgentEvent, AgentSession, Compaction, SUMMARY_HEADING};
/// use toolsmith::harness::model::{ScriptedModel, ScriptedTurn, Usage};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let long_answer = "Paris is the capital of France. ".repeat(50);
/// let model = ScriptedModel::new([
///     ScriptedTurn::text(long_answer).with_usage(Usage::new(900, 500)),
///     // 900 tokens counted, the answer and the new question: past 80% of the window of
///     // 1,000. The older messages go to the model as a transcript, to summarise.
///     ScriptedTurn::text("The user asked for France's capital: Paris."),
///     ScriptedTurn::text("Rome."),
/// ]);
/// let session = AgentSession::builder(model.clone())
///     .with_model("m")
///     .with_context_window(1_000)
///     .with_compaction(Compaction::new())
///     .build()
///     .unwrap();
/// session.send("The capital of France?").await.unwrap();
/// let run = session.send("And of Italy?").await.unwrap();
/// assert_eq!(run.text, "Rome.");
/// let kept = session.transcript().await;
/// assert!(kept[0].text().unwrap().starts_with(SUMMARY_HEADING));
/// assert!(kept[0].text().unwrap().contains("And of Italy?"));
/// assert_eq!(kept[1].text(), Some("Rome."));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    start_percent: u8,
    keep_percent: u8,
    instructions: String,
}

impl Default for Compaction {
    fn default() -> Self {
        Self::new()
    }
}

impl Compaction {
    /// Summarising from [`DEFAULT_COMPACTION_START_PERCENT`] of the window, keeping
    /// [`DEFAULT_COMPACTION_KEEP_PERCENT`] of it word for word, with
    /// [`DEFAULT_COMPACTION_INSTRUCTIONS`].
    #[must_use]
    pub fn new() -> Self {
        Self {
            start_percent: DEFAULT_COMPACTION_START_PERCENT,
            keep_percent: DEFAULT_COMPACTION_KEEP_PERCENT,
            instructions: DEFAULT_COMPACTION_INSTRUCTIONS.to_owned(),
        }
    }

    /// Summarises once a request and its reserved output pass `percent` of the window
    /// (1 to 100; checked when the session is built).
    #[must_use]
    pub fn starting_at_percent(mut self, percent: u8) -> Self {
        self.start_percent = percent;
        self
    }

    /// Keeps the newest messages word for word up to `percent` of the window (below the
    /// starting percent, so that a compaction brings the request under it; 0 summarises
    /// everything but the user's latest message; checked when the session is built).
    #[must_use]
    pub fn keeping_recent_percent(mut self, percent: u8) -> Self {
        self.keep_percent = percent;
        self
    }

    /// What the model is told to do with the older messages, instead of
    /// [`DEFAULT_COMPACTION_INSTRUCTIONS`] (e.g. what a domain's summaries must keep).
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = instructions.into();
        self
    }

    /// Why these settings cannot work, if they cannot: the builder's check.
    pub(crate) fn problem(&self) -> Option<String> {
        if !(1..=100).contains(&self.start_percent) {
            return Some(format!(
                "`Compaction::starting_at_percent({})` must be 1 to 100",
                self.start_percent
            ));
        }
        if self.keep_percent >= self.start_percent {
            return Some(format!(
                "`Compaction::keeping_recent_percent({})` must be below the starting percent \
                 ({}): a compaction would not bring the request under it",
                self.keep_percent, self.start_percent
            ));
        }
        if self.instructions.trim().is_empty() {
            return Some("`Compaction::with_instructions` was given no text".to_owned());
        }
        None
    }

    /// Whether `estimated` passes this compaction's share of its window.
    pub(super) fn is_due(&self, estimated: &ContextEstimate) -> bool {
        let total = estimated
            .input_tokens
            .saturating_add(estimated.reserved_output);
        // u128: a window near u64::MAX times 100 would overflow.
        u128::from(total) * 100 > u128::from(estimated.window) * u128::from(self.start_percent)
    }

    /// The tokens of the newest messages kept word for word in `window`.
    fn kept_tokens(&self, window: u64) -> u64 {
        (u128::from(window) * u128::from(self.keep_percent) / 100) as u64
    }
}

/// Where a conversation is cut for its summary.
#[derive(Debug, PartialEq, Eq)]
struct Cut {
    /// `messages[..at]` are summarised.
    at: usize,
    /// The user's latest message as of the cut, repeated after the summary: the one at `at`
    /// (taken into the summary's message, so that two user messages do not follow each
    /// other), or the latest before it.
    question: Option<usize>,
}

impl Cut {
    /// How many messages the summary's message replaces: the user's message at the cut
    /// goes into it (one user message, not two).
    fn replaced(&self) -> usize {
        if self.question == Some(self.at) {
            self.at + 1
        } else {
            self.at
        }
    }
}

/// Where to cut `messages` so that the newest, up to `keep` tokens (the guard's estimate),
/// and every message from `kept_from` on, stay as they are: never before a tool-results
/// message (its calls would be summarised away), and not at all when nothing but earlier
/// summaries and the user's latest message (which the summary repeats) would be summarised.
fn cut(messages: &[Message], keep: u64, kept_from: usize) -> Option<Cut> {
    let mut at = messages.len();
    let mut kept = 0_u64;
    while at > 0 {
        let tokens = estimate_message_tokens(&messages[at - 1]);
        if kept.saturating_add(tokens) > keep {
            break;
        }
        kept += tokens;
        at -= 1;
    }
    at = at.min(kept_from);
    while matches!(messages.get(at), Some(Message::ToolResults { .. })) {
        at += 1;
    }
    let question = match messages.get(at) {
        Some(Message::User { .. }) => Some(at),
        _ => messages[..at]
            .iter()
            .rposition(|message| matches!(message, Message::User { .. })),
    };
    // Only earlier summaries and the question, which is repeated anyway: nothing to gain.
    let worth_it = (0..at).any(|index| !is_summary(messages, index) && question != Some(index));
    worth_it.then_some(Cut { at, question })
}

/// Whether `messages[index]` is a summary a compaction wrote: a compaction puts its summary
/// first, so a user message elsewhere that begins with [`SUMMARY_HEADING`] (one a user
/// pasted) is the user's.
fn is_summary(messages: &[Message], index: usize) -> bool {
    index == 0
        && matches!(messages.first(), Some(Message::User { text, .. }) if text.starts_with(SUMMARY_HEADING))
}

/// What a summary message puts between the summary and the user's message it repeats.
fn question_separator() -> String {
    format!("\n\n{SUMMARIZED_QUESTION_HEADING}\n\n")
}

/// The user's words in `messages[index]`, a user message: as written, or, for an earlier
/// summary that is summarised now, the message it repeated (after its first separator:
/// the summary before it never holds one, see [`compacted`]).
fn asked_in(messages: &[Message], index: usize, summarised: bool) -> Option<(&str, &[Image])> {
    let Message::User { text, images } = &messages[index] else {
        return None;
    };
    if summarised
        && is_summary(messages, index)
        && let Some((_, asked)) = text.split_once(&question_separator())
    {
        return Some((asked, images));
    }
    Some((text, images))
}

/// `messages` with the cut part replaced by `summary`, with the user's latest message
/// repeated after it (from an earlier summary, the message that one repeated); how many
/// messages were replaced. The summary's own copies of [`SUMMARIZED_QUESTION_HEADING`]
/// (a model that read an earlier summary may echo it) are taken out, so that the first
/// separator of a summary message is always the one before the user's words.
fn compacted(messages: &mut Vec<Message>, cut: &Cut, summary: &str) -> usize {
    let message = summary_message(messages, cut, summary);
    let replaced = cut.replaced();
    messages.splice(..replaced, [message]);
    replaced
}

/// The message that replaces `messages[..cut.replaced()]`: [`SUMMARY_HEADING`], `summary`
/// (without [`SUMMARIZED_QUESTION_HEADING`]), and the user's latest message.
fn summary_message(messages: &[Message], cut: &Cut, summary: &str) -> Message {
    let summary = summary.replace(SUMMARIZED_QUESTION_HEADING, "");
    let mut text = format!("{SUMMARY_HEADING}\n\n{}", summary.trim());
    let mut images = Vec::new();
    // The user's message at the cut is not summarised: all of it is repeated, whatever it
    // begins with.
    let asked = cut
        .question
        .and_then(|index| asked_in(messages, index, index < cut.at));
    if let Some((asked, shown)) = asked {
        let _ = write!(text, "{}{asked}", question_separator());
        images = shown.to_vec();
    }
    Message::User { text, images }
}

/// The estimate of `messages` once compacted at `cut` (with a summary of no words): what a
/// compaction there cannot go below.
fn tokens_after(messages: &[Message], cut: &Cut) -> u64 {
    messages[cut.replaced()..]
        .iter()
        .map(estimate_message_tokens)
        .fold(
            estimate_message_tokens(&summary_message(messages, cut, "")),
            u64::saturating_add,
        )
}

/// The bytes a shortened piece of a transcript gains besides the bytes it keeps: the note
/// of how many bytes were left out (with a 20-digit count, the longest there is).
const LEFT_OUT_NOTE_BYTES: usize = 48;

/// A transcript being written: its framing (roles, call names and ids) kept as it is, and
/// what was said or returned (texts, arguments, results), which may be shortened.
#[derive(Default)]
struct Transcript<'a> {
    /// Framing and said text in turn: `(framing before, said)`.
    pieces: Vec<(String, Cow<'a, str>)>,
    /// Framing after the last said text.
    frame: String,
}

impl<'a> Transcript<'a> {
    /// `said`, then a line break.
    fn said(&mut self, said: impl Into<Cow<'a, str>>) {
        self.pieces
            .push((std::mem::take(&mut self.frame), said.into()));
        self.frame.push('\n');
    }

    /// The transcript, at most `max_bytes` long where its framing allows: the said texts
    /// longer than one length cut to it in the middle (the longest length that fits).
    fn written(self, max_bytes: Option<usize>) -> String {
        let framing = self
            .pieces
            .iter()
            .map(|(frame, _)| frame.len())
            .sum::<usize>()
            + self.frame.len();
        let bytes_at = |most: usize| {
            self.pieces.iter().fold(framing, |bytes, (_, said)| {
                bytes.saturating_add(if said.len() <= most {
                    said.len()
                } else {
                    most + LEFT_OUT_NOTE_BYTES
                })
            })
        };
        let longest = self.pieces.iter().map(|(_, said)| said.len()).max();
        let most = match (max_bytes, longest) {
            (Some(max_bytes), Some(longest)) if bytes_at(longest) > max_bytes => {
                // The longest length that fits, by halving: the bytes grow with it.
                let (mut fits, mut over) = (0, longest);
                while over - fits > 1 {
                    let middle = fits + (over - fits) / 2;
                    if bytes_at(middle) <= max_bytes {
                        fits = middle;
                    } else {
                        over = middle;
                    }
                }
                fits
            }
            _ => usize::MAX,
        };
        let mut text = String::with_capacity(bytes_at(most));
        for (frame, said) in &self.pieces {
            text.push_str(frame);
            if said.len() <= most {
                text.push_str(said);
                continue;
            }
            let head = floor_char_boundary(said, most / 2);
            let tail = ceil_char_boundary(said, said.len() - (most - most / 2));
            let _ = write!(
                text,
                "{}\n[… {} bytes left out …]\n{}",
                &said[..head],
                tail - head,
                &said[tail..]
            );
        }
        text.push_str(&self.frame);
        text
    }
}

/// `messages` as a transcript in text for the model to summarise: each message headed by
/// its role, calls with their arguments, results with their content, images as stand-ins.
/// Longer than `max_bytes`, the longest texts, arguments and results are cut in the middle
/// to one length, the longest that brings it under (each cut says how many bytes went), so
/// that the summary request fits the window.
fn transcript_text(messages: &[Message], max_bytes: Option<usize>) -> String {
    let mut transcript = Transcript::default();
    for message in messages {
        match message {
            Message::User { text: said, images } => {
                transcript.frame.push_str("## User\n");
                for image in images {
                    transcript.frame.push_str(&image.placeholder());
                    transcript.frame.push('\n');
                }
                transcript.said(said.as_str());
            }
            Message::Assistant {
                text: said, calls, ..
            } => {
                transcript.frame.push_str("## Assistant\n");
                if let Some(said) = said.as_deref().filter(|said| !said.is_empty()) {
                    transcript.said(said);
                }
                for call in calls {
                    let _ = write!(
                        transcript.frame,
                        "Called `{}` (call {}) with ",
                        call.name, call.id
                    );
                    match call.as_written.as_deref() {
                        Some(written) => transcript.said(written),
                        None => transcript
                            .said(serde_json::to_string(&call.arguments).unwrap_or_default()),
                    }
                }
            }
            Message::ToolResults { results } => {
                transcript.frame.push_str("## Tool results\n");
                for result in results {
                    let how = if result.result.is_error() {
                        "failed"
                    } else {
                        "returned"
                    };
                    let _ = writeln!(
                        transcript.frame,
                        "`{}` (call {}) {how}:",
                        result.name, result.call_id
                    );
                    transcript.said(result.result.content.to_text());
                }
            }
        }
        transcript.frame.push('\n');
    }
    transcript.written(max_bytes)
}

/// The summary request, with `request`'s model and options: `compaction`'s instructions as
/// its system prompt, the transcript as its one message, no tools (the transcript is text:
/// every API takes it, whatever the calls in it). With the `(window, reserved output)` of
/// the session, the transcript is shortened so that the request's estimate fits the window
/// (see [`transcript_text`]): a summarised part larger than the window would have the
/// summary refused as too long, at every call.
fn summary_request(
    request: &ChatRequest,
    summarized: &[Message],
    compaction: &Compaction,
    fitting: Option<(u64, u64)>,
) -> ChatRequest {
    let asked = |transcript: &str| {
        format!(
            "The conversation so far, to summarise:\n\n<conversation>\n{transcript}</conversation>"
        )
    };
    let mut summary = ChatRequest {
        model: request.model.clone(),
        system: Some(compaction.instructions.clone()),
        messages: vec![Message::user(asked(""))],
        tools: Arc::new(ToolDeclarations::default()),
        options: request.options.clone(),
    };
    let max_bytes = fitting.map(|(window, reserved)| {
        let around = TokenEstimate::default().estimate(&summary);
        let tokens = window.saturating_sub(reserved).saturating_sub(around);
        usize::try_from(tokens.saturating_mul(BYTES_PER_TOKEN)).unwrap_or(usize::MAX)
    });
    summary.messages = vec![Message::user(asked(&transcript_text(
        summarized, max_bytes,
    )))];
    summary
}

impl AgentSession {
    /// `request`'s older messages summarised by the model, `estimated` having passed
    /// `compaction`'s threshold ([`Compaction::is_due`], asked by the caller: see
    /// [`Compaction`]); the estimate forgotten and an [`AgentEvent::ContextCompacted`] sent
    /// when they were. A failed summary leaves the request as it was; a cancellation or a
    /// panic of the model ends the run.
    pub(super) async fn compact(
        &self,
        compaction: &Compaction,
        (request, estimate, estimated): (&mut ChatRequest, &mut TokenEstimate, ContextEstimate),
        cancel: &CancellationToken,
        (caller, provider): (Option<&CancellationToken>, &str),
        (run, ledger): (&mut AgentRun, &RunLedger),
    ) -> Result<(), RunEnd> {
        // The call about to be made is the run's last (or the answer asked for past its
        // limit): a summary would take it, or go past the limit.
        if run.model_calls.saturating_add(1) >= self.max_turns
            || self.budget_spent(run, ledger).is_some()
        {
            return Ok(());
        }
        // What every request carries besides its messages (system prompt, tools), counted
        // as the estimate after a compaction counts it: by its bytes.
        let fixed = TokenEstimate::default().estimate(&ChatRequest {
            model: String::new(),
            system: request.system.clone(),
            messages: Vec::new(),
            tools: Arc::clone(&request.tools),
            options: ChatOptions::default(),
        });
        let messages = &request.messages;
        let under_threshold = |cut: &Cut| {
            let after = ContextEstimate::new(
                fixed.saturating_add(tokens_after(messages, cut)),
                estimated.reserved_output,
                estimated.window,
            );
            !compaction.is_due(&after)
        };
        let keep = compaction.kept_tokens(estimated.window);
        let Some(mut cut) = cut(messages, keep, messages.len()) else {
            return Ok(());
        };
        if !under_threshold(&cut) {
            // Keeping the newest share would leave the request past the threshold, due
            // again at the next call: fewer are kept, down to none.
            match self::cut(messages, 0, messages.len()) {
                Some(fewer) if under_threshold(&fewer) => cut = fewer,
                _ => {
                    tracing::warn!(
                        model = %self.model_name,
                        input_tokens = estimated.input_tokens,
                        reserved_output = estimated.reserved_output,
                        window = estimated.window,
                        "the conversation is not summarised: the user's latest message and \
                         what every request carries pass the compaction's threshold alone"
                    );
                    return Ok(());
                }
            }
        }
        let fitting = Some((estimated.window, estimated.reserved_output));
        let asked = summary_request(request, &request.messages[..cut.at], compaction, fitting);
        let summary = match self
            .summarise(asked, cancel, (caller, provider), (run, ledger))
            .await
        {
            Ok(summary) => summary,
            Err(RunEnd::Model(error)) => {
                tracing::warn!(
                    model = %self.model_name,
                    %error,
                    "the conversation could not be summarised; it goes on as it was"
                );
                return Ok(());
            }
            Err(end) => return Err(end),
        };
        if summary.trim().is_empty() {
            tracing::warn!(
                model = %self.model_name,
                "the model's summary of the conversation was empty; it goes on as it was"
            );
        } else {
            let summarized = compacted(&mut request.messages, &cut, &summary);
            estimate.forget();
            self.emit(
                ledger,
                AgentEvent::ContextCompacted {
                    turn: run.model_calls + 1,
                    summarized,
                    estimate: estimated,
                },
            );
        }
        // The summary was a model call: the run's limits and its pause hold after it as
        // before any other.
        if let Some(spent) = self.budget_spent(run, ledger) {
            return Err(spent);
        }
        if is_cancelled(cancel, caller) {
            return Err(RunEnd::Cancelled);
        }
        self.wait_if_paused(cancel).await
    }

    /// Summarises the conversation kept by [`send`](Self::send) now, as a [`Compaction`]
    /// does before a request that nears the window (a chat's "compact" command): the older
    /// messages replaced by one user message holding the summary and the user's latest
    /// message; kept word for word, the model's last answer (and what follows it), and with
    /// a [context window](super::AgentSessionBuilder::with_context_window) the newest
    /// messages up to the compaction's share of it. With the session's
    /// [`with_compaction`](super::AgentSessionBuilder::with_compaction) settings, else
    /// [`Compaction::new`]'s. Waits for a `send` under way, as a `send` waits for it.
    ///
    /// Gives the summary's run: its `text` the summary, its `transcript` the kept
    /// conversation as it now is, its model call and usage the summary's (no model call when
    /// there was nothing to summarise; an empty summary changes nothing). A model error is
    /// [`AgenticError::Model`], the conversation unchanged.
    ///
    /// ```
    /// use toolsmith::harness::agent::{AgentSession, SUMMARY_HEADING};
    /// use toolsmith::harness::model::{ScriptedModel, ScriptedTurn};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     ScriptedTurn::text("Paris."),
    ///     ScriptedTurn::text("Rome."),
    ///     ScriptedTurn::text("The user asked for two capitals: Paris, then Rome."),
    /// ]);
    /// let session = AgentSession::builder(model).with_model("m").build().unwrap();
    /// session.send("The capital of France?").await.unwrap();
    /// session.send("And of Italy?").await.unwrap();
    /// let summary = session.compact_conversation().await.unwrap();
    /// assert_eq!(summary.model_calls, 1);
    /// let kept = session.transcript().await;
    /// assert_eq!(kept.len(), 2); // the summary (with the latest question), the last answer
    /// assert!(kept[0].text().unwrap().starts_with(SUMMARY_HEADING));
    /// assert!(kept[0].text().unwrap().ends_with("And of Italy?"));
    /// assert_eq!(kept[1].text(), Some("Rome."));
    /// # }
    /// ```
    pub async fn compact_conversation(&self) -> Result<AgentRun, AgenticError> {
        let default = Compaction::new();
        let compaction = self.compaction.as_deref().unwrap_or(&default);
        let keep = self
            .context_window
            .map_or(0, |window| compaction.kept_tokens(window));
        let mut kept = self.conversation.lock().await;
        let mut run = AgentRun::default();
        // The model's last answer stays: the next `send` follows it, as it would have.
        let last_answer = kept
            .messages
            .iter()
            .rposition(|message| matches!(message, Message::Assistant { .. }))
            .unwrap_or(kept.messages.len());
        let Some(cut) = cut(&kept.messages, keep, last_answer) else {
            run.transcript.clone_from(&kept.messages);
            return Ok(run);
        };
        let provider = match self.provider_name() {
            Ok(name) => name,
            Err(panic) => return Err(panic.into_error(Box::new(run))),
        };
        let request = ChatRequest {
            model: self.model_name.clone(),
            system: None,
            messages: Vec::new(),
            tools: Arc::new(ToolDeclarations::default()),
            options: self.options.clone(),
        };
        let fitting = match self.context_window {
            Some(window) => match self.reserved_output(&request, 1) {
                Ok(reserved) => Some((window, reserved)),
                Err(end) => {
                    run.transcript.clone_from(&kept.messages);
                    return Err(end.into_error(run, self.max_turns));
                }
            },
            None => None,
        };
        let asked = summary_request(&request, &kept.messages[..cut.at], compaction, fitting);
        let ledger = RunLedger::from_origin(RunOrigin::here(self));
        let cancel = self.cancellation.child_token();
        let summarised = self
            .summarise(asked, &cancel, (None, provider), (&mut run, &ledger))
            .await;
        let summary = match summarised {
            Ok(summary) => summary,
            Err(end) => {
                run.transcript.clone_from(&kept.messages);
                return Err(end.into_error(run, self.max_turns));
            }
        };
        if !summary.trim().is_empty() {
            compacted(&mut kept.messages, &cut, &summary);
            kept.estimate.forget();
        }
        run.transcript.clone_from(&kept.messages);
        run.text = summary;
        Ok(run)
    }

    /// The model's summary of `asked`'s transcript (empty when it wrote none), a model call
    /// of `run`, not streamed: a summary is not the answer being written.
    async fn summarise(
        &self,
        mut asked: ChatRequest,
        cancel: &CancellationToken,
        (caller, provider): (Option<&CancellationToken>, &str),
        (run, ledger): (&mut AgentRun, &RunLedger),
    ) -> Result<String, RunEnd> {
        let response = self
            .call_model(
                &mut asked,
                ToolChoice::Auto,
                false,
                cancel,
                (caller, provider),
                (run, ledger),
            )
            .await?;
        Ok(response.text.unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolsmith_core::{Image, ToolArguments, ToolCallResult};

    use super::*;
    use crate::model::{ModelCall, ToolResultMessage};

    fn call(id: &str) -> Message {
        let arguments = ToolArguments::try_from(json!({"path": "a.txt"})).unwrap();
        Message::assistant_calls(None, vec![ModelCall::new(id, "read", arguments)])
    }

    fn result(id: &str, text: &str) -> Message {
        Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: id.to_owned(),
                name: "read".to_owned(),
                result: ToolCallResult::text(text),
            }],
        }
    }

    /// An image by its signature alone: the transcript shows its type and size.
    fn chart() -> Image {
        Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\nchart").unwrap()
    }

    fn tokens(messages: &[Message]) -> u64 {
        messages.iter().map(estimate_message_tokens).sum()
    }

    #[test]
    fn the_cut_keeps_the_newest_messages_that_fit_and_never_starts_at_results() {
        let messages = vec![
            Message::user("Read the files."),
            call("c1"),
            result("c1", &"x".repeat(3_000)),
            call("c2"),
            result("c2", "short"),
        ];
        // The last two fit: kept, from the call on.
        let keep = tokens(&messages[3..]);
        assert_eq!(
            cut(&messages, keep, messages.len()),
            Some(Cut {
                at: 3,
                question: Some(0)
            })
        );
        // Only the last result fits: it cannot start the kept part without its call.
        let keep = tokens(&messages[4..]);
        assert_eq!(
            cut(&messages, keep, messages.len()),
            Some(Cut {
                at: 5,
                question: Some(0)
            })
        );
        // Everything fits: nothing to summarise.
        assert_eq!(cut(&messages, tokens(&messages), messages.len()), None);
    }

    #[test]
    fn a_user_message_at_the_cut_is_the_question_and_an_earlier_summary_alone_is_not_cut() {
        let messages = vec![
            Message::user("First."),
            Message::assistant("One."),
            Message::user("Second."),
            Message::assistant("Two."),
        ];
        let keep = tokens(&messages[2..]);
        assert_eq!(
            cut(&messages, keep, messages.len()),
            Some(Cut {
                at: 2,
                question: Some(2)
            })
        );
        let summarized = vec![
            Message::user(format!("{SUMMARY_HEADING}\n\nEarlier.")),
            Message::assistant("y".repeat(3_000)),
        ];
        assert_eq!(
            cut(&summarized, tokens(&summarized[1..]), summarized.len()),
            None
        );
        // The question alone before the model's last answer, which is kept: nothing to gain.
        let answered = [Message::user("Hi?"), Message::assistant("Hello.")];
        assert_eq!(cut(&answered, 0, 1), None);
        // Everything before the last answer, however little is kept by tokens.
        assert_eq!(
            cut(&messages, 0, 3),
            Some(Cut {
                at: 3,
                question: Some(2)
            })
        );
    }

    #[test]
    fn the_summary_replaces_the_cut_part_and_repeats_the_question_with_its_images() {
        let chart = chart();
        let mut messages = vec![
            Message::user_with_images("Explain this chart.", vec![chart.clone()]),
            call("c1"),
            result("c1", "data"),
            call("c2"),
            result("c2", "more"),
        ];
        let cut = Cut {
            at: 3,
            question: Some(0),
        };
        assert_eq!(compacted(&mut messages, &cut, " It shows sales. "), 3);
        assert_eq!(messages.len(), 3);
        assert_eq!(
            messages[0].text(),
            Some(
                format!(
                    "{SUMMARY_HEADING}\n\nIt shows sales.\n\n{SUMMARIZED_QUESTION_HEADING}\n\n\
                     Explain this chart."
                )
                .as_str()
            )
        );
        assert_eq!(messages[0].images(), std::slice::from_ref(&chart));
        assert_eq!(messages[1].calls()[0].id, "c2");

        // Compacted again: the question comes from the summary, not the summary twice.
        let again = Cut {
            at: 1,
            question: Some(0),
        };
        messages.push(Message::assistant("Done."));
        compacted(&mut messages, &again, "Sales, read twice.");
        let text = messages[0].text().unwrap();
        assert_eq!(text.matches(SUMMARY_HEADING).count(), 1, "{text}");
        assert!(text.ends_with("Explain this chart."), "{text}");
        assert!(!text.contains("It shows sales."), "{text}");
        assert_eq!(messages[0].images(), [chart]);
    }

    #[test]
    fn a_user_message_at_the_cut_is_taken_into_the_summary_message() {
        let mut messages = vec![
            Message::user("First."),
            Message::assistant("One."),
            Message::user("Second."),
            Message::assistant("Two."),
        ];
        let cut = Cut {
            at: 2,
            question: Some(2),
        };
        assert_eq!(compacted(&mut messages, &cut, "First was one."), 3);
        assert_eq!(messages.len(), 2);
        assert!(messages[0].text().unwrap().ends_with("\n\nSecond."));
        assert_eq!(messages[1].text(), Some("Two."));
    }

    #[test]
    fn the_transcript_shows_roles_calls_results_errors_and_image_stand_ins() {
        let failed = Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: "c2".to_owned(),
                name: "read".to_owned(),
                result: ToolCallResult::error("no such file"),
            }],
        };
        let text = transcript_text(
            &[
                Message::user_with_images("Look.", vec![chart()]),
                call("c1"),
                result("c1", "contents"),
                failed,
                Message::assistant("It is missing."),
            ],
            None,
        );
        assert!(text.starts_with("## User\n[image: image/png, "), "{text}");
        assert!(
            text.contains("Called `read` (call c1) with {\"path\":\"a.txt\"}\n"),
            "{text}"
        );
        assert!(
            text.contains("`read` (call c1) returned:\ncontents\n"),
            "{text}"
        );
        assert!(
            text.contains("`read` (call c2) failed:\nno such file\n"),
            "{text}"
        );
        assert!(text.contains("## Assistant\nIt is missing.\n"), "{text}");
    }

    #[test]
    fn a_transcript_past_its_bytes_cuts_the_longest_texts_in_the_middle_to_one_length() {
        let messages = [
            Message::user("Read both."),
            call("c1"),
            result("c1", &format!("{}{}", "a".repeat(4_000), "é".repeat(1_000))),
            call("c2"),
            result("c2", &"b".repeat(300)),
        ];
        let whole = transcript_text(&messages, None);
        assert_eq!(transcript_text(&messages, Some(whole.len())), whole);
        let text = transcript_text(&messages, Some(2_000));
        assert!(text.len() <= 2_000, "{}", text.len());
        // The short things said stay whole; the long result keeps both its ends.
        assert!(text.starts_with("## User\nRead both.\n"), "{text}");
        assert!(text.contains(&"b".repeat(300)), "{text}");
        assert!(text.contains("\naaaa") && text.contains("éé\n"), "{text}");
        let note = text.split("[… ").nth(1).unwrap();
        let left_out: usize = note.split(' ').next().unwrap().parse().unwrap();
        assert!(left_out > 5_000 - 2_000, "{note}");
        // Framing alone past the bytes: every text cut to nothing, the framing kept.
        let framing = transcript_text(&messages, Some(10));
        assert!(
            framing.contains("Called `read` (call c2) with "),
            "{framing}"
        );
    }

    #[test]
    fn settings_that_cannot_work_are_named() {
        assert_eq!(Compaction::new().problem(), None);
        let too_high = Compaction::new()
            .starting_at_percent(101)
            .problem()
            .unwrap();
        assert!(too_high.contains("starting_at_percent(101)"), "{too_high}");
        let keep = Compaction::new()
            .starting_at_percent(50)
            .keeping_recent_percent(50)
            .problem()
            .unwrap();
        assert!(keep.contains("keeping_recent_percent(50)"), "{keep}");
        assert!(Compaction::new().with_instructions(" ").problem().is_some());
    }

    #[test]
    fn due_past_the_starting_share_of_the_window() {
        let compaction = Compaction::new();
        assert!(!compaction.is_due(&ContextEstimate::new(700, 100, 1_000)));
        assert!(compaction.is_due(&ContextEstimate::new(701, 100, 1_000)));
        assert!(compaction.is_due(&ContextEstimate::new(u64::MAX, u64::MAX, u64::MAX)));
        assert_eq!(compaction.kept_tokens(1_000), 200);
        assert_eq!(compaction.kept_tokens(u64::MAX), 3_689_348_814_741_910_323);
    }
}
