//! `toolsmith run PROMPT`: one agent run over a preset's tools, against a model API (`-`
//! for PROMPT: read from stdin).

use std::collections::HashMap;
use std::io::{BufRead, IsTerminal as _, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::json;
use toolsmith::harness::agent::{
    AgentEvent, AgentSession, AgenticError, Compaction, DropOldestExchanges,
};
use toolsmith::harness::model::http::{
    AnthropicModel, GeminiModel, HttpModelBuilder, OpenAiChatModel, OpenAiResponsesModel,
};
use toolsmith::harness::model::{ChatModel, FallbackModel};
use toolsmith::{CancellationToken, ToolCallRequest, ToolShed};

use crate::cli::{ModelApi, RunArgs};
use crate::from_stdin::{self, STDIN};
use crate::{Failure, output, presets};

/// Runs the agent: the model's text streamed to stdout (each turn's on lines of its own),
/// each tool call and the run's usage on stderr. A run that ends without an answer is a
/// failure; a reader of stdout that goes away stops the run. With `--json`, a failure of
/// the command (not of its command line) is also its last line, wherever it happened: a
/// model that cannot be set up fails the run as one that cannot be reached does.
pub async fn run(args: RunArgs) -> Result<(), Failure> {
    let json = args.json;
    match run_agent(args).await {
        Err(failure) if json && !failure.usage && !output::is_closed_stdout(&failure) => {
            Err(error_line(failure)?)
        }
        outcome => outcome,
    }
}

/// [`run`] but for `--json`'s error line.
async fn run_agent(args: RunArgs) -> Result<(), Failure> {
    // Stdin that held the prompt is spent: no question about a call can be read from it.
    let (prompt, can_ask) = if args.prompt == STDIN {
        (from_stdin::read("the prompt".to_owned()).await?, false)
    } else {
        (args.prompt, std::io::stdin().is_terminal())
    };
    if prompt.trim().is_empty() {
        return Err(Failure::usage("the prompt is empty"));
    }
    let preset = presets::preset(&args.preset)?;
    let mut model = model(args.api, args.base_url.as_deref())?;
    if let Some((first, rest)) = args.fallback.split_first() {
        let mut fallback = FallbackModel::new(model).or_as(
            self::model(first.api, first.base_url.as_deref())?,
            &first.model,
        );
        for next in rest {
            fallback = fallback.or_as(
                self::model(next.api, next.base_url.as_deref())?,
                &next.model,
            );
        }
        model = Box::new(fallback);
    }
    let yes = args.yes;
    let cancel = CancellationToken::new();
    let screen = Arc::new(Screen::new(cancel.clone()));
    let shown = Arc::clone(&screen);
    let json = args.json;
    let reader_gone = cancel.clone();
    let mut builder = AgentSession::builder(model)
        .with_model(args.model)
        .with_toolshed(ToolShed::new().tools(preset))
        .with_max_turns(args.max_turns as usize)
        .with_streaming(true)
        .with_every_tool_declared(args.every_tool)
        .with_cancellation(cancel)
        .with_event_handler(move |event: &AgentEvent| {
            if !json {
                shown.show(event);
            } else if output::line(event_line(event)).is_err() {
                reader_gone.cancel();
            }
        })
        .with_approval(move |call: &ToolCallRequest| approve(call, yes, can_ask));
    if let Some(system) = args.system {
        builder = builder.with_system_prompt(system);
    }
    if let Some(window) = args.context_window {
        builder = builder
            .with_context_window(window)
            .with_compaction(Compaction::new())
            .with_context_overflow(DropOldestExchanges::new());
    }
    let session = builder.build()?;
    let run = match session.run(&prompt).await {
        // The reader went away, and the run was stopped for it: nothing more to say.
        Err(AgenticError::Cancelled { .. }) if output::closed() => {
            return Err(output::reader_gone());
        }
        outcome => outcome?,
    };
    if !json {
        screen.end_line()?;
    }
    if run.text.trim().is_empty() {
        // With `--json`, an error line as for any other failure ([`run`]).
        return Err(Failure::new(format!(
            "the model gave no answer (it stopped: {})",
            run.stop_reason
                .as_ref()
                .map_or_else(|| "without a reason".to_owned(), |r| format!("{r:?}"))
        )));
    }
    if json {
        let answer = json!({"type": "answer", "data": {
            "text": run.text,
            "model_calls": run.model_calls,
            "tool_calls": run.tool_calls.len(),
            "usage": run.total_usage(),
        }});
        return output::line(answer);
    }
    let usage = run.total_usage();
    output::note(format_args!(
        "[{} model calls, {} tool calls; tokens: {} in, {} out]",
        run.model_calls,
        run.tool_calls.len(),
        usage.input_tokens,
        usage.output_tokens
    ));
    Ok(())
}

/// `failure` printed as `--json`'s last line, `{"type": "error", "data": "<message>"}`, then
/// given back to be reported on stderr too (or the failure to print it).
pub fn error_line(failure: Failure) -> Result<Failure, Failure> {
    output::line(json!({"type": "error", "data": failure.message}))?;
    Ok(failure)
}

/// `event` as one line of JSON (serde's, which escapes every control character: nothing in
/// it can move a terminal's cursor).
fn event_line(event: &AgentEvent) -> String {
    serde_json::to_string(event).unwrap_or_else(|error| {
        json!({"type": "error", "data": format!("an event could not be written: {error}")})
            .to_string()
    })
}

/// What the run shows as it goes: the model's text on stdout, a turn's text ended by a
/// newline before its tool calls are shown, and on stderr each call as it starts and as it
/// finishes (with the start of its result), both lines numbered with the call's place in
/// the run (`#2`): calls finish in the order they end, so two calls to one tool would
/// otherwise be told apart only by their results. A call that was not run has one line,
/// with the start of why.
struct Screen {
    /// Text was printed on stdout since the last newline.
    line_open: AtomicBool,
    /// The run's token: cancelled when stdout's reader goes away.
    cancel: CancellationToken,
    /// The numbers of the calls that started.
    calls: Mutex<CallNumbers>,
}

/// Each running call's number in the run, by its id.
#[derive(Default)]
struct CallNumbers {
    /// How many calls started.
    started: usize,
    /// The running calls' numbers, by call id: an id is only unique within an answer, so a
    /// call's is forgotten when it finishes.
    running: HashMap<String, usize>,
}

impl Screen {
    fn new(cancel: CancellationToken) -> Self {
        Self {
            line_open: AtomicBool::new(false),
            cancel,
            calls: Mutex::default(),
        }
    }

    fn show(&self, event: &AgentEvent) {
        match event {
            AgentEvent::TextDelta(text) => {
                if output::piece(output::escaped_lines(text)).is_err() {
                    self.cancel.cancel();
                }
                self.line_open
                    .store(!text.ends_with('\n'), Ordering::Relaxed);
            }
            AgentEvent::ModelResponse { calls, .. } if *calls > 0 && self.end_line().is_err() => {
                self.cancel.cancel();
            }
            _ => {
                for line in self
                    .call_line(event)
                    .into_iter()
                    .chain(conversation_lines(event))
                {
                    output::note(line);
                }
            }
        }
    }

    /// The stderr line of a call's event, if it has one.
    fn call_line(&self, event: &AgentEvent) -> Option<String> {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        match event {
            AgentEvent::ToolCallStarted { call_id, name } => {
                calls.started += 1;
                let number = calls.started;
                calls.running.insert(call_id.clone(), number);
                Some(format!("[{}: started]", call_label(Some(number), name)))
            }
            AgentEvent::ToolCallFinished {
                call_id,
                name,
                duration,
                is_error,
                summary,
                ..
            } => {
                let number = calls.running.remove(call_id);
                let outcome = if *is_error { "error" } else { "ok" };
                Some(format!(
                    "[{}: {outcome} in {duration:.1?}] {}",
                    call_label(number, name),
                    preview(summary)
                ))
            }
            // Not run (unreadable arguments, an answer cut off, …): the model is told why,
            // and so is the terminal, else the call would pass unseen. It never started, so
            // it has no number.
            AgentEvent::ToolCallNotRun { name, summary, .. } => Some(format!(
                "[{}: not run] {}",
                call_label(None, name),
                preview(summary)
            )),
            _ => None,
        }
    }

    /// Ends the line of text the model left open, if it did.
    fn end_line(&self) -> Result<(), Failure> {
        if self.line_open.swap(false, Ordering::Relaxed) {
            output::line("")?;
        }
        Ok(())
    }
}

/// The stderr lines of what was taken out of the conversation: images, before a request by
/// the model's limits (each note says why) or after the model refused one it could not
/// read; older messages summarised or dropped to fit the context window. Else a picture the
/// `read` tool showed, or a file read early in the run, would vanish unseen.
fn conversation_lines(event: &AgentEvent) -> Vec<String> {
    match event {
        AgentEvent::ContextCompacted {
            summarized,
            estimate,
            ..
        } => vec![format!(
            "[conversation summarised: {summarized} {} replaced by the model's summary; the \
             request was about {} tokens of a window of {}]",
            plural(*summarized, "message", "messages"),
            estimate.input_tokens,
            estimate.window
        )],
        AgentEvent::ContextShortened {
            dropped, emptied, ..
        } => vec![format!(
            "[conversation shortened to fit the context window: {dropped} {} dropped, \
             {emptied} tool {} emptied]",
            plural(*dropped, "message", "messages"),
            plural(*emptied, "result", "results")
        )],
        AgentEvent::ImagesOverLimits { removed, .. } => {
            removed.iter().map(|note| preview(note)).collect()
        }
        AgentEvent::ImagesRemoved {
            removed, reason, ..
        } => {
            let images = plural(*removed, "image", "images");
            vec![format!(
                "[{removed} {images} removed: the model could not read it] {}",
                preview(reason)
            )]
        }
        _ => Vec::new(),
    }
}

/// `one` for a count of 1, else `many`.
fn plural(count: usize, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 { one } else { many }
}

/// How a call is named on the terminal: its number in the run, when it has one, and its
/// tool's name, escaped (the name is the model's: a call to no tool of the session has any
/// name).
fn call_label(number: Option<usize>, name: &str) -> String {
    match number {
        Some(number) => format!("#{number} {}", output::escaped(name)),
        None => output::escaped(name).into_owned(),
    }
}

/// A client of `api`: configured from its environment variables, at `base_url` when given
/// (the key still from the environment, where set).
fn model(api: ModelApi, base_url: Option<&str>) -> Result<Box<dyn ChatModel>, Failure> {
    fn at<M>(builder: HttpModelBuilder<M>, base_url: Option<&str>) -> HttpModelBuilder<M> {
        match base_url {
            Some(url) => builder.base_url(url),
            None => builder,
        }
    }
    let model: Box<dyn ChatModel> = match api {
        ModelApi::OpenaiChat => Box::new(
            at(OpenAiChatModel::builder(), base_url)
                .env_defaults()
                .build()?,
        ),
        ModelApi::OpenaiResponses => Box::new(
            at(OpenAiResponsesModel::builder(), base_url)
                .env_defaults()
                .build()?,
        ),
        ModelApi::Anthropic => Box::new(
            at(AnthropicModel::builder(), base_url)
                .env_defaults()
                .build()?,
        ),
        ModelApi::Gemini => Box::new(
            at(GeminiModel::builder(), base_url)
                .env_defaults()
                .build()?,
        ),
    };
    Ok(model)
}

/// The start of a call's result, on one line, as the terminal shows it: its first 120
/// characters, line breaks and tabs as spaces, other control characters escaped (a result is
/// what a file or a command held: an escape sequence in it must not drive the terminal).
fn preview(result: &str) -> String {
    let one_line: String = result
        .chars()
        .take(120)
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    output::escaped(&one_line).into_owned()
}

/// Whether a destructive call may run: with `--yes`, always; else as the user answers on
/// the terminal, when stdin is one that `can_ask` (not spent on the prompt); else never.
fn approve(call: &ToolCallRequest, yes: bool, can_ask: bool) -> bool {
    if yes {
        return true;
    }
    if !can_ask {
        output::note(format_args!(
            "[{}: refused; `toolsmith run --yes` lets the model run destructive tools]",
            output::escaped(&call.name)
        ));
        return false;
    }
    // The run waits for the answer: nothing else of it goes on meanwhile.
    tokio::task::block_in_place(|| {
        ask(
            call,
            &mut std::io::stdin().lock(),
            &mut std::io::stderr().lock(),
        )
    })
}

/// Asks on `output` whether `call` may run and reads the answer, a line of `input`: yes is
/// `y` or `yes` in any case; anything else, the end of the input or a failure to read or
/// ask is no.
fn ask(call: &ToolCallRequest, input: &mut impl BufRead, output: &mut impl Write) -> bool {
    // The arguments as JSON text: control characters the model wrote reach the terminal
    // escaped, never as terminal commands.
    let asked = write!(
        output,
        "Allow {} {}? [y/N] ",
        output::escaped(&call.name),
        call.arguments.as_value()
    )
    .and_then(|()| output.flush());
    let mut answer = String::new();
    asked.is_ok()
        && input.read_line(&mut answer).is_ok()
        && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(answer: &[u8]) -> (bool, String) {
        let call = ToolCallRequest::new(
            "c1",
            "write",
            toolsmith::ToolArguments::try_from(serde_json::json!({"path": "a\u{1b}[2J"})).unwrap(),
        );
        let mut shown = Vec::new();
        let allowed = ask(&call, &mut &answer[..], &mut shown);
        (allowed, String::from_utf8(shown).unwrap())
    }

    #[test]
    fn a_result_is_previewed_on_one_line_without_terminal_controls() {
        assert_eq!(preview("a\nb\r\n\tc"), "a b   c");
        assert_eq!(preview("\u{1b}[2Jgone\u{7}"), "\\u{1b}[2Jgone\\u{7}");
        assert_eq!(preview(&"é".repeat(200)), "é".repeat(120));
    }

    #[test]
    fn the_terminal_is_asked_and_only_yes_allows() {
        let (allowed, shown) = asked(b"y\n");
        assert!(allowed);
        // The model's escape character is shown escaped, not sent to the terminal.
        assert_eq!(shown, "Allow write {\"path\":\"a\\u001b[2J\"}? [y/N] ");
        for yes in [&b"Y\r\n"[..], b"yes\n", b" YES ", b"Yes"] {
            assert!(asked(yes).0, "{:?}", String::from_utf8_lossy(yes));
        }
        for no in [
            &b"\n"[..],
            b"n\n",
            b"no\n",
            b"yes please\n",
            b"",
            b"\xff\xfe\n",
        ] {
            assert!(!asked(no).0, "{:?}", String::from_utf8_lossy(no));
        }
    }

    fn started(call_id: &str, name: &str) -> AgentEvent {
        AgentEvent::ToolCallStarted {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
        }
    }

    fn finished(call_id: &str, name: &str, summary: &str) -> AgentEvent {
        AgentEvent::ToolCallFinished {
            call_id: call_id.to_owned(),
            name: name.to_owned(),
            duration: std::time::Duration::from_millis(3),
            is_error: false,
            summary: summary.to_owned(),
        }
    }

    #[test]
    fn a_calls_start_and_finish_lines_carry_one_number_whatever_the_order_they_end_in() {
        let screen = Screen::new(CancellationToken::new());
        let lines: Vec<Option<String>> = [
            started("call_a", "read"),
            started("call_b", "read"),
            // The second call ends first.
            finished("call_b", "read", "b's text"),
            finished("call_a", "read", "a's text"),
        ]
        .iter()
        .map(|event| screen.call_line(event))
        .collect();
        assert_eq!(
            lines,
            [
                Some("[#1 read: started]".to_owned()),
                Some("[#2 read: started]".to_owned()),
                Some("[#2 read: ok in 3.0ms] b's text".to_owned()),
                Some("[#1 read: ok in 3.0ms] a's text".to_owned()),
            ]
        );
        // A later answer may use the same ids again: its calls number on from the run's.
        assert_eq!(
            screen.call_line(&started("call_a", "read")).as_deref(),
            Some("[#3 read: started]")
        );
        assert_eq!(
            screen
                .call_line(&finished("call_a", "read", "again"))
                .as_deref(),
            Some("[#3 read: ok in 3.0ms] again")
        );
        // A call that never started has no number; nor has an event that is not a call's.
        let not_run = AgentEvent::ToolCallNotRun {
            call_id: "call_c".to_owned(),
            name: "read".to_owned(),
            why: toolsmith::harness::agent::NotRunReason::Unreadable,
            summary: "unreadable".to_owned(),
        };
        assert_eq!(
            screen.call_line(&not_run).as_deref(),
            Some("[read: not run] unreadable")
        );
        assert_eq!(
            screen
                .call_line(&finished("call_d", "\u{1b}[2Jx", "?"))
                .as_deref(),
            Some("[\\u{1b}[2Jx: ok in 3.0ms] ?")
        );
        assert_eq!(screen.call_line(&AgentEvent::TextDelta("hi".into())), None);
    }

    #[test]
    fn images_taken_out_of_the_conversation_are_shown() {
        let note = "[image removed: 9000x4000 px, more than the 8000 px a side the model takes]";
        assert_eq!(
            conversation_lines(&AgentEvent::ImagesOverLimits {
                turn: 2,
                removed: vec![note.to_owned(), note.to_owned()],
            }),
            [note, note]
        );
        assert_eq!(
            conversation_lines(&AgentEvent::ImagesRemoved {
                turn: 3,
                removed: 1,
                image: Some(0),
                reason: "messages.0.content.0.image.source.base64.data: Could not\nprocess image"
                    .to_owned(),
            }),
            ["[1 image removed: the model could not read it] \
              messages.0.content.0.image.source.base64.data: Could not process image"]
        );
        assert!(conversation_lines(&AgentEvent::TextDelta("hi".into())).is_empty());
    }

    #[test]
    fn summaries_and_shortenings_are_shown() {
        let estimate = toolsmith::harness::agent::ContextEstimate::new(1_700, 100, 2_000);
        assert_eq!(
            conversation_lines(&AgentEvent::ContextCompacted {
                turn: 4,
                summarized: 5,
                estimate,
            }),
            [
                "[conversation summarised: 5 messages replaced by the model's summary; the \
              request was about 1700 tokens of a window of 2000]"
            ]
        );
        assert_eq!(
            conversation_lines(&AgentEvent::ContextShortened {
                turn: 2,
                attempt: 1,
                dropped: 1,
                emptied: 2,
                estimate: Some(estimate),
            }),
            [
                "[conversation shortened to fit the context window: 1 message dropped, 2 tool \
              results emptied]"
            ]
        );
    }

    #[test]
    fn a_base_url_is_used_and_a_bad_one_refused() {
        assert!(model(ModelApi::Anthropic, Some("http://127.0.0.1:1")).is_ok());
        let error = model(ModelApi::Gemini, Some("localhost:1")).err().unwrap();
        assert!(
            error.message.contains("http:// or https://"),
            "{}",
            error.message
        );
    }
}
