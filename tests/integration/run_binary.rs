//! `toolsmith run`: the binary asks a model (a local server speaking OpenAI's Chat
//! Completions, started here) with a preset's tools: the model finds a tool through `shed`,
//! calls it, and its answer is printed; destructive calls need `--yes`; a refused key fails
//! the command.

use std::collections::VecDeque;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use crate::support::binary::toolsmith;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::{Value, json};

/// The answers a [`ChatServer`] has left, and the requests it saw (each with its
/// `Authorization` header).
type Script = Arc<Mutex<(VecDeque<(u16, Value)>, Vec<(Option<String>, Value)>)>>;

/// An OpenAI Chat Completions server on 127.0.0.1 answering with scripted bodies, in order.
struct ChatServer {
    base: String,
    script: Script,
}

impl ChatServer {
    async fn start(answers: impl IntoIterator<Item = (u16, Value)>) -> Self {
        let script: Script = Arc::new(Mutex::new((answers.into_iter().collect(), Vec::new())));
        let app = axum::Router::new()
            .route(
                "/v1/chat/completions",
                post(
                    |State(script): State<Script>,
                     headers: axum::http::HeaderMap,
                     Json(body): Json<Value>| async move {
                        let authorization = headers
                            .get("authorization")
                            .and_then(|value| value.to_str().ok())
                            .map(str::to_owned);
                        let mut script = script.lock().unwrap();
                        script.1.push((authorization, body));
                        let (status, answer) = script
                            .0
                            .pop_front()
                            .unwrap_or((500, json!({"error": {"message": "no answer left"}})));
                        (StatusCode::from_u16(status).unwrap(), Json(answer))
                    },
                ),
            )
            .with_state(Arc::clone(&script));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { base, script }
    }

    /// The request bodies, in order.
    fn requests(&self) -> Vec<Value> {
        let script = self.script.lock().unwrap();
        script.1.iter().map(|(_, body)| body.clone()).collect()
    }

    /// The requests' `Authorization` headers, in order.
    fn authorizations(&self) -> Vec<Option<String>> {
        let script = self.script.lock().unwrap();
        script.1.iter().map(|(auth, _)| auth.clone()).collect()
    }
}

/// An answer calling `name` with `arguments`.
fn call(id: &str, name: &str, arguments: Value) -> (u16, Value) {
    let call = json!({"id": id, "type": "function",
        "function": {"name": name, "arguments": arguments.to_string()}});
    (
        200,
        json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [call]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10}}),
    )
}

/// An answer calling each `(id, name, arguments)` of `calls`, in one message.
fn calls(calls: &[(&str, &str, Value)]) -> (u16, Value) {
    let (status, mut answer) = call(calls[0].0, calls[0].1, calls[0].2.clone());
    answer["choices"][0]["message"]["tool_calls"] = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    (status, answer)
}

/// An answer of `text`.
fn text(text: &str) -> (u16, Value) {
    (
        200,
        json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 8}}),
    )
}

/// `toolsmith run` over the files preset in `root` against `server`, stdin not a terminal.
fn command(root: &std::path::Path, server: &ChatServer, extra: &[&str], prompt: &str) -> Command {
    let mut command = toolsmith();
    command
        .args([
            "run",
            "--preset",
            "files",
            "--model",
            "test-model",
            "--root",
        ])
        .arg(root)
        .args(["--base-url", &server.base])
        .args(extra)
        .arg(prompt)
        .env_remove("OPENAI_API_KEY")
        .env_remove("TOOLSMITH_MODEL")
        .stdin(Stdio::null());
    command
}

/// The output of [`command`], run to its end.
async fn run(root: &std::path::Path, server: &ChatServer, extra: &[&str], prompt: &str) -> Output {
    let mut command = command(root, server, extra, prompt);
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// The tool results a request sends back, as text.
fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn the_model_finds_a_tool_calls_it_and_its_answer_is_printed() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("note.txt"), "the meeting is at noon\n").unwrap();
    let server = ChatServer::start([
        call("c1", "shed", json!({"description": "select:read"})),
        call("c2", "read", json!({"path": "note.txt"})),
        text("The note says the meeting is at noon."),
    ])
    .await;
    let output = run(root.path(), &server, &[], "What does note.txt say?").await;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "The note says the meeting is at noon.\n");
    // Each call's start and finish lines carry its number in the run.
    for line in [
        "[#1 shed: started]",
        "[#1 shed: ok in",
        "[#2 read: started]",
        "[#2 read: ok in",
    ] {
        assert!(stderr.contains(line), "{line} / {stderr}");
    }
    assert!(
        stderr.contains("[3 model calls, 2 tool calls; tokens: 320 in, 28 out]"),
        "{stderr}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0]["model"], "test-model");
    assert_eq!(requests[0]["stream"], true);
    let declared = |request: &Value| -> Vec<String> {
        request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(declared(&requests[0]), ["shed"]);
    assert_eq!(declared(&requests[1]), ["shed", "read"]);
    assert_eq!(
        requests[2]["messages"][0]["content"],
        "What does note.txt say?"
    );
    let results = tool_results(&requests[2]);
    assert!(results[1].contains("the meeting is at noon"), "{results:?}");
}

/// `--every-tool`: the preset's tools declared from the first request, no `shed`, and a tool
/// called with no search first.
#[tokio::test]
async fn with_every_tool_the_model_calls_a_tool_without_searching() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("note.txt"), "the meeting is at noon\n").unwrap();
    let server = ChatServer::start([
        call("c1", "read", json!({"path": "note.txt"})),
        text("At noon."),
    ])
    .await;
    let output = run(
        root.path(),
        &server,
        &["--every-tool"],
        "When is the meeting?",
    )
    .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "At noon.\n");
    let requests = server.requests();
    let declared: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(declared.contains(&"read"), "{declared:?}");
    assert!(!declared.contains(&"shed"), "{declared:?}");
    let results = tool_results(&requests[1]);
    assert!(results[0].contains("the meeting is at noon"), "{results:?}");
}

#[tokio::test]
async fn two_calls_to_one_tool_are_told_apart_by_their_numbers() {
    // Two reads in one answer run side by side and may end in either order: each call's
    // finish line has the number its start line had (the unit tests beside `Screen` end
    // them in the reverse order).
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(root.path().join("b.txt"), "beta\n").unwrap();
    let server = ChatServer::start([
        call("c1", "shed", json!({"description": "select:read"})),
        calls(&[
            ("c2", "read", json!({"path": "a.txt"})),
            ("c3", "read", json!({"path": "b.txt"})),
        ]),
        text("Read both."),
    ])
    .await;
    let output = run(root.path(), &server, &[], "Read a.txt and b.txt").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    let at = |start: &str| {
        lines
            .iter()
            .position(|line| line.starts_with(start))
            .unwrap_or_else(|| panic!("no line starting {start}: {stderr}"))
    };
    // The calls start in the answer's order: a.txt's is #2, b.txt's #3.
    for (number, content) in [(2, "alpha"), (3, "beta")] {
        let started = at(&format!("[#{number} read: started]"));
        let finished = at(&format!("[#{number} read: ok in"));
        assert!(started < finished, "{stderr}");
        assert!(lines[finished].contains(content), "{stderr}");
    }
    assert!(
        !stderr.contains("[read:"),
        "a call without its number: {stderr}"
    );
}

#[tokio::test]
async fn a_call_that_is_not_run_is_shown_with_why() {
    let root = tempfile::tempdir().unwrap();
    let unreadable = json!({"id": "c1", "type": "function",
        "function": {"name": "read", "arguments": "{\"path\": \"note.txt\" oops"}});
    let server = ChatServer::start([
        (
            200,
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [unreadable]}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10}}),
        ),
        text("I could not read it."),
    ])
    .await;
    let output = run(root.path(), &server, &[], "What does note.txt say?").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // The model was told why; so is the terminal.
    let told = &tool_results(&server.requests()[1])[0];
    let line = stderr
        .lines()
        .find(|line| line.starts_with("[read: not run] "))
        .unwrap_or_else(|| panic!("no line for the call: {stderr}"));
    let shown = line.trim_start_matches("[read: not run] ").trim_end();
    assert!(
        shown.starts_with("Invalid arguments for tool 'read': the arguments are not valid JSON"),
        "{line}"
    );
    assert!(told.contains(shown), "{line} / {told}");
    assert!(!stderr.contains("[read: ok"), "{stderr}");
}

#[tokio::test]
async fn a_tool_name_the_model_wrote_reaches_the_terminal_escaped() {
    // A call to no tool of the session, named with terminal commands (a title change, a
    // screen clear): its line on stderr shows them escaped.
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([
        call("c1", "\u{1b}]0;owned\u{7}\u{1b}[2Jread", json!({})),
        text("Done."),
    ])
    .await;
    let output = run(root.path(), &server, &[], "Hello").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "{stderr:?}"
    );
    assert!(
        stderr.contains("[#1 \\u{1b}]0;owned\\u{7}\\u{1b}[2Jread: error in"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_destructive_call_runs_only_with_yes() {
    let script = || {
        [
            call("c1", "shed", json!({"description": "select:write"})),
            call(
                "c2",
                "write",
                json!({"path": "out.txt", "content": "written\n"}),
            ),
            text("Done."),
        ]
    };
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start(script()).await;
    let refused = run(root.path(), &server, &[], "Write out.txt").await;
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("[write: refused; `toolsmith run --yes`"),
        "{stderr}"
    );
    assert!(!root.path().join("out.txt").exists());
    let results = tool_results(&server.requests()[2]);
    assert!(results[1].contains("did not approve"), "{results:?}");

    let server = ChatServer::start(script()).await;
    let allowed = run(root.path(), &server, &["--yes"], "Write out.txt").await;
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("out.txt")).unwrap(),
        "written\n"
    );
}

/// `toolsmith run -` as [`command`] makes it, `prompt` written to its stdin, run to its end.
async fn run_from_stdin(
    root: &std::path::Path,
    server: &ChatServer,
    extra: &[&str],
    prompt: &'static [u8],
) -> Output {
    let mut command = command(root, server, extra, "-");
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // A command that refuses early closes its end: the write may then fail.
        let writer = std::thread::spawn(move || _ = std::io::Write::write_all(&mut stdin, prompt));
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap();
        output
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_prompt_from_stdin_reaches_the_model_and_no_call_is_asked_about() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([
        call("c1", "shed", json!({"description": "select:write"})),
        call(
            "c2",
            "write",
            json!({"path": "out.txt", "content": "written\n"}),
        ),
        text("Done."),
    ])
    .await;
    let output = run_from_stdin(root.path(), &server, &[], b"Write out.txt\nplease.\n").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let requests = server.requests();
    // All of stdin, its trailing newline trimmed.
    assert_eq!(
        requests[0]["messages"][0]["content"],
        "Write out.txt\nplease."
    );
    // Stdin held the prompt: it cannot answer a question, so the call is refused.
    assert!(
        stderr.contains("[write: refused; `toolsmith run --yes`"),
        "{stderr}"
    );
    assert!(!root.path().join("out.txt").exists());
    assert!(tool_results(&requests[2])[1].contains("did not approve"));

    // An empty prompt, or one that is not UTF-8, is a usage error: no model is asked.
    let server = ChatServer::start([text("Hello.")]).await;
    for (prompt, says) in [
        (&b"\n"[..], "toolsmith: the prompt is empty\n"),
        (
            &b"caf\xe9?"[..],
            "toolsmith: the prompt on stdin: not UTF-8 at byte 3\n",
        ),
    ] {
        let refused = run_from_stdin(root.path(), &server, &[], prompt).await;
        assert_eq!(refused.status.code(), Some(2));
        assert_eq!(String::from_utf8_lossy(&refused.stderr), says);
    }
    // So is an empty prompt given as an argument.
    let empty = run(root.path(), &server, &[], " ").await;
    assert_eq!(empty.status.code(), Some(2));
    assert!(server.requests().is_empty());
}

/// A pseudo-terminal: its controlling end, and the end a command takes as its stdin.
#[cfg(target_os = "linux")]
fn terminal() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd as _;
    let (mut controller, mut terminal) = (0, 0);
    // SAFETY: `openpty` writes two new descriptors to the integers it is given; the null name,
    // settings and size are allowed (none wanted).
    let made = unsafe {
        libc::openpty(
            &mut controller,
            &mut terminal,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(made, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened, and are owned by nothing else.
    unsafe {
        (
            std::fs::File::from_raw_fd(controller),
            std::fs::File::from_raw_fd(terminal),
        )
    }
}

/// A prompt typed on a terminal, ended by Ctrl-D: the terminal is not asked about the
/// destructive call after it (its next read would wait for the user, who has said all).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_prompt_typed_on_the_terminal_leaves_no_question_to_ask() {
    use std::io::Write as _;
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([
        call("c1", "shed", json!({"description": "select:write"})),
        call("c2", "write", json!({"path": "out.txt", "content": "x"})),
        text("Done."),
    ])
    .await;
    let (mut controller, stdin) = terminal();
    let mut command = command(root.path(), &server, &[], "-");
    command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    drop(command);
    // A line, then Ctrl-D at the start of the next: the end of the input.
    controller.write_all(b"Write out.txt\n\x04").unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let ended = loop {
        if child.try_wait().unwrap().is_some() {
            break true;
        }
        if std::time::Instant::now() >= deadline {
            child.kill().unwrap();
            break false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(ended, "the command waited for an answer: {stderr}");
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("Allow write"), "{stderr}");
    assert!(
        stderr.contains("[write: refused; `toolsmith run --yes`"),
        "{stderr}"
    );
    assert_eq!(
        server.requests()[0]["messages"][0]["content"],
        "Write out.txt"
    );
    assert!(!root.path().join("out.txt").exists());
}

#[tokio::test]
async fn the_key_comes_from_the_environment_with_a_base_url_given() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([text("Hello.")]).await;
    let mut command = command(root.path(), &server, &[], "Say hello.");
    command.env("OPENAI_API_KEY", "sk-from-env");
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        server.authorizations(),
        [Some("Bearer sk-from-env".to_owned())]
    );
    // Without it, a local server is asked with no key.
    let server = ChatServer::start([text("Hello.")]).await;
    assert!(
        run(root.path(), &server, &[], "Say hello.")
            .await
            .status
            .success()
    );
    assert_eq!(server.authorizations(), [None]);
}

#[tokio::test]
async fn a_refused_key_fails_the_command_with_the_api_s_message() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([(
        401,
        json!({"error": {"message": "Incorrect API key provided"}}),
    )])
    .await;
    let output = run(root.path(), &server, &[], "Hello").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("toolsmith: model call failed: openai_chat: authentication failed (HTTP 401): Incorrect API key provided"),
        "{stderr}"
    );
}

/// An answer of `said` that also calls `name` with `arguments`.
fn text_and_call(said: &str, id: &str, name: &str, arguments: Value) -> (u16, Value) {
    let (status, mut answer) = call(id, name, arguments);
    answer["choices"][0]["message"]["content"] = json!(said);
    (status, answer)
}

#[tokio::test]
async fn each_turns_text_is_a_line_of_its_own_and_no_answer_is_a_failure() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([
        text_and_call(
            "Let me look.",
            "c1",
            "shed",
            json!({"description": "select:read"}),
        ),
        text("The answer."),
    ])
    .await;
    let output = run(root.path(), &server, &[], "Q?").await;
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Let me look.\nThe answer.\n"
    );

    let server = ChatServer::start([text("  ")]).await;
    let output = run(root.path(), &server, &[], "Q?").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("toolsmith: the model gave no answer (it stopped: EndTurn)"),
        "{stderr}"
    );

    // At least one model call: 0 is refused before anything is asked.
    let server = ChatServer::start([text("Hello.")]).await;
    let output = run(root.path(), &server, &["--max-turns", "0"], "Q?").await;
    assert_eq!(output.status.code(), Some(2));
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn without_max_turns_a_run_has_the_librarys_limit() {
    // A model that calls a tool forever: the command's default limit is the library's
    // (`DEFAULT_MAX_TURNS`), not one of its own.
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "a").unwrap();
    let limit = toolsmith::harness::agent::DEFAULT_MAX_TURNS;
    let server = ChatServer::start(
        (0..limit + 5).map(|i| call(&format!("c{i}"), "read", json!({"path": "a.txt"}))),
    )
    .await;
    let output = run(root.path(), &server, &[], "Q?").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(server.requests().len(), limit, "{stderr}");
}

#[tokio::test]
async fn a_reader_that_goes_away_stops_the_run_and_a_failure_is_still_one() {
    let root = tempfile::tempdir().unwrap();
    let spawn = |server: &ChatServer| {
        let mut command = command(root.path(), server, &[], "Q?");
        tokio::task::spawn_blocking(move || {
            let mut child = command
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // The reader goes away at once.
            drop(child.stdout.take());
            child.wait_with_output().unwrap()
        })
    };
    // Text on the way to a call: its write fails, and the run stops there, quietly.
    let server = ChatServer::start([
        text_and_call(
            "Working.",
            "c1",
            "shed",
            json!({"description": "select:read"}),
        ),
        text("never asked for"),
    ])
    .await;
    let output = spawn(&server).await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("toolsmith:"), "{stderr}");
    assert_eq!(server.requests().len(), 1);

    // Nothing written yet when the model call fails: the failure is reported.
    let server = ChatServer::start([(
        401,
        json!({"error": {"message": "Incorrect API key provided"}}),
    )])
    .await;
    let output = spawn(&server).await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Incorrect API key provided"), "{stderr}");
}

/// What the model and its API wrote reaches the terminal without the control characters
/// that would drive it (a title set, the screen cleared, the clipboard written, a line
/// overwritten): the answer keeps its lines and tabs, the failure is one line.
#[tokio::test]
async fn what_the_model_and_its_api_wrote_reaches_the_terminal_escaped() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([text("Done\u{1b}]52;c;eA==\u{7}\rnothing\r\nto\tsee")]).await;
    let output = run(root.path(), &server, &[], "Q?").await;
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Done\\u{1b}]52;c;eA==\\u{7}\\rnothing\r\nto\tsee\n"
    );

    let server = ChatServer::start([(
        401,
        json!({"error": {"message": "bad key\u{1b}[2J\u{1b}]0;owned\u{7}\ntoolsmith: forged"}}),
    )])
    .await;
    let output = run(root.path(), &server, &[], "Q?").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.ends_with("bad key\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\ntoolsmith: forged\n"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[tokio::test]
async fn a_fallback_answers_when_the_model_is_down_and_not_for_a_bad_request() {
    let root = tempfile::tempdir().unwrap();
    let unavailable = || {
        (
            503,
            json!({"error": {"message": "The server is overloaded", "type": "server_error"}}),
        )
    };
    // The first model's server is down for the request and the client's two retries.
    let down = ChatServer::start([unavailable(), unavailable(), unavailable()]).await;
    let backup = ChatServer::start([text("Hello from the backup.")]).await;
    let fallback = format!("openai-chat:backup-model@{}", backup.base);
    let output = run(root.path(), &down, &["--fallback", &fallback], "Say hello.").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Hello from the backup.\n"
    );
    assert_eq!(down.requests().len(), 3);
    let asked = backup.requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["model"], "backup-model");
    assert_eq!(asked[0]["messages"][0]["content"], "Say hello.");

    // A request the first model's API refuses as bad is not another's to answer.
    let refusing = ChatServer::start([(
        400,
        json!({"error": {"message": "Unknown parameter: 'foo'"}}),
    )])
    .await;
    let backup = ChatServer::start([text("unused")]).await;
    let fallback = format!("openai-chat:backup-model@{}", backup.base);
    let output = run(
        root.path(),
        &refusing,
        &["--fallback", &fallback],
        "Say hello.",
    )
    .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Unknown parameter: 'foo'"), "{stderr}");
    assert!(backup.requests().is_empty());

    // A fallback the command cannot read is a usage error naming it.
    let output = run(root.path(), &down, &["--fallback", "bedrock:claude"], "Hi").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown API \"bedrock\""), "{stderr}");
}

#[tokio::test]
async fn with_a_context_window_a_long_run_is_summarised_and_goes_on() {
    let root = tempfile::tempdir().unwrap();
    // Some 2,000 tokens of file: with the request before it, past 80% of a window of 2,000.
    let line = format!("{}\n", "x".repeat(59));
    std::fs::write(root.path().join("big.txt"), line.repeat(100)).unwrap();
    let server = ChatServer::start([
        call("c1", "shed", json!({"description": "select:read"})),
        call("c2", "read", json!({"path": "big.txt"})),
        text("big.txt holds 100 lines of x."),
        text("The file is all x."),
    ])
    .await;
    let output = run(
        root.path(),
        &server,
        &["--context-window", "2000"],
        "What is in big.txt?",
    )
    .await;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{stderr}");
    // The summary is not the answer: it is not printed.
    assert_eq!(stdout, "The file is all x.\n");
    assert!(
        stderr.contains("[conversation summarised: 5 messages replaced by the model's summary"),
        "{stderr}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The summary request: no tools, not streamed, the transcript with the file.
    let summary = &requests[2];
    assert_eq!(summary.get("tools"), None, "{summary}");
    assert_ne!(summary["stream"], true, "{summary}");
    assert!(summary.to_string().contains(&"x".repeat(59)));
    // The request after it: the summary and the question, the tools again.
    let next = &requests[3];
    let messages = next["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{next}");
    let first = messages[0]["content"].as_str().unwrap();
    assert!(first.contains("big.txt holds 100 lines of x."), "{first}");
    assert!(first.ends_with("What is in big.txt?"), "{first}");
    assert!(
        next["tools"]
            .as_array()
            .is_some_and(|tools| tools.len() == 2)
    );
}

#[tokio::test]
async fn a_context_window_of_zero_is_a_usage_error() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([]).await;
    let output = run(root.path(), &server, &["--context-window", "0"], "Hi").await;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--context-window"), "{stderr}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_blank_model_name_is_a_usage_error_naming_the_flag() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([]).await;
    // From the flag, and from the variable (which `command` removes).
    let blank = |model: Option<&str>| {
        let mut command = toolsmith();
        command
            .args(["run", "--base-url", &server.base, "--root"])
            .arg(root.path())
            .env("TOOLSMITH_MODEL", "")
            .stdin(Stdio::null());
        if let Some(model) = model {
            command.args(["--model", model]);
        }
        command.arg("Hi");
        command
    };
    for mut command in [blank(Some(" ")), blank(None)] {
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        // It failed (1) in the session's builder: "call `.with_model("...")` on the builder".
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("--model") && stderr.contains("the model's name is empty"),
            "{stderr}"
        );
    }
    assert!(server.requests().is_empty());
}

/// A fallback's URL may carry a user and a key (`https://user:key@host/v1`): it is read as
/// the URL (not as part of the model's name, sent to another API and quoted in errors),
/// and the key is never printed, whether the value is taken or refused.
#[tokio::test]
async fn a_fallback_s_url_with_a_key_is_its_url_and_the_key_is_never_printed() {
    const KEY: &str = "sk-SECRET-in-the-url";
    let root = tempfile::tempdir().unwrap();
    let unavailable = || {
        (
            503,
            json!({"error": {"message": "The server is overloaded"}}),
        )
    };
    let down = ChatServer::start([unavailable(), unavailable(), unavailable()]).await;
    let backup = ChatServer::start([text("Hello from the backup.")]).await;
    let with_key = backup
        .base
        .replace("http://", &format!("http://user:{KEY}@"));
    let fallback = format!("openai-chat:backup-model@{with_key}");
    let output = run(root.path(), &down, &["--fallback", &fallback], "Say hello.").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(backup.requests()[0]["model"], "backup-model");
    assert!(!stderr.contains(KEY), "{stderr}");

    // Values the command cannot read: a usage error saying why, the key left out.
    for (value, says) in [
        (
            "bedrock:m@https://user:KEY@host/v1",
            "unknown API \"bedrock\"",
        ),
        (
            "openai-chat:m@ftp://user:KEY@host/v1",
            "http:// or https://",
        ),
        ("openai-chat:m@", "no URL after"),
        ("openai-chat:m@not a url", "no spaces"),
        (":m", "unknown API \"\""),
    ] {
        let value = value.replace("KEY", KEY);
        let output = run(root.path(), &down, &["--fallback", &value], "Hi").await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{value}: {stderr}");
        assert!(stderr.contains(says), "{value}: {stderr}");
        assert!(!stderr.contains(KEY), "{value}: {stderr}");
    }
}

/// A URL whose password holds an unencoded `/` does not parse; the refusal quoted it whole,
/// the user's password with it. Now it is quoted from after its last `@`.
#[test]
fn a_url_whose_password_holds_a_slash_is_never_printed() {
    const URL: &str = "http://user:sk-SECRET/in-the-url@127.0.0.1:1/v1";
    let root = tempfile::tempdir().unwrap();
    let fallback = format!("openai-chat:backup@{URL}");
    // The first model at a server of its own (no key needed), its fallback at the URL.
    let with_fallback = [
        "--base-url",
        "http://127.0.0.1:2/v1",
        "--fallback",
        &fallback,
    ];
    for args in [&["--base-url", URL][..], &with_fallback] {
        let output = toolsmith()
            .args(["run", "--preset", "files", "--model", "m", "--root"])
            .arg(root.path())
            .args(args)
            .arg("Hi")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("http://127.0.0.1:1/v1"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("SECRET"), "{args:?}: {stderr}");
    }
}

/// Each line of `stdout`, read as JSON.
fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[tokio::test]
async fn with_json_the_run_is_printed_as_json_lines_then_its_answer() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("note.txt"), "the meeting is at noon\n").unwrap();
    let server = ChatServer::start([
        call("c1", "shed", json!({"description": "select:read"})),
        call("c2", "read", json!({"path": "note.txt"})),
        text("At noon."),
    ])
    .await;
    let output = run(root.path(), &server, &["--json"], "When is the meeting?").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stderr, "");
    let lines = json_lines(&output.stdout);
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    let started: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "tool_call_started")
        .map(|l| &l["data"]["name"])
        .collect();
    assert_eq!(started, [&json!("shed"), &json!("read")], "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "model_request").count(), 3);
    assert!(kinds.contains(&"text_delta"), "{kinds:?}");
    let finished = lines
        .iter()
        .find(|l| l["type"] == "tool_call_finished" && l["data"]["name"] == "read")
        .unwrap();
    assert!(
        finished["data"]["summary"]
            .as_str()
            .unwrap()
            .contains("the meeting is at noon"),
        "{finished}"
    );
    assert_eq!(
        lines.last().unwrap(),
        &json!({"type": "answer", "data": {
            "text": "At noon.",
            "model_calls": 3,
            "tool_calls": 2,
            "usage": {"input_tokens": 320, "output_tokens": 28, "cached_input_tokens": 0}
        }})
    );
}

#[tokio::test]
async fn with_json_stdout_is_json_lines_and_stderr_what_the_help_says() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([
        call(
            "call_1",
            "write",
            json!({"path": "out.txt", "content": "x"}),
        ),
        text("Not written."),
    ])
    .await;
    let output = run(root.path(), &server, &["--json", "--every-tool"], "Write").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(json_lines(&output.stdout).last().unwrap()["type"], "answer");
    // A refused call is noted on stderr, which the help said nothing but questions reached.
    assert_eq!(
        stderr,
        "[write: refused; `toolsmith run --yes` lets the model run destructive tools]\n"
    );
    let help = toolsmith().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("on stderr, only failures, warnings, and the questions about destructive calls (or, where none can be asked, that one was refused)"),
        "{help}"
    );
}

#[tokio::test]
async fn with_json_a_failed_run_ends_with_an_error_line() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([(
        401,
        json!({"error": {"message": "Incorrect API key provided"}}),
    )])
    .await;
    let output = run(root.path(), &server, &["--json"], "Hello").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let lines = json_lines(&output.stdout);
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "error", "{lines:?}");
    let message = last["data"].as_str().unwrap();
    assert!(message.contains("Incorrect API key provided"), "{message}");
    assert!(stderr.contains(message), "{stderr}");
}

#[tokio::test]
async fn with_json_a_model_that_cannot_be_set_up_ends_with_an_error_line() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([]).await;
    // A fallback with no key for its API's own server: the run fails before it starts.
    let mut command = command(
        root.path(),
        &server,
        &["--json", "--fallback", "gemini:m"],
        "Q?",
    );
    command
        .env_remove("GEMINI_API_KEY")
        .env_remove("GOOGLE_API_KEY");
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    // Its stdout was empty: a program reading the lines saw the command end with no error.
    let lines = json_lines(&output.stdout);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["type"], "error", "{lines:?}");
    let message = lines[0]["data"].as_str().unwrap();
    assert!(message.contains("no API key"), "{message}");
    assert!(stderr.contains(message), "{stderr}");
    assert!(server.requests().is_empty());
    // A usage error is the command line's, not the run's: no line, as without --json.
    let blank = run(root.path(), &server, &["--json"], " ").await;
    assert_eq!(blank.status.code(), Some(2));
    assert!(blank.stdout.is_empty());
}

#[tokio::test]
async fn with_json_no_answer_is_a_failure_and_an_error_line_as_without() {
    let root = tempfile::tempdir().unwrap();
    let server = ChatServer::start([text("  ")]).await;
    let output = run(root.path(), &server, &["--json"], "Q?").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let lines = json_lines(&output.stdout);
    let last = lines.last().unwrap();
    assert_eq!(
        last,
        &json!({"type": "error", "data": "the model gave no answer (it stopped: EndTurn)"}),
        "{lines:?}"
    );
    assert!(
        stderr.contains("toolsmith: the model gave no answer (it stopped: EndTurn)"),
        "{stderr}"
    );
    assert_eq!(lines.iter().filter(|l| l["type"] == "answer").count(), 0);
}
