//! The `toolsmith` binary: `serve` as a child process through our own `McpClient`, stdout
//! carrying only JSON-RPC, garbage answered while serving goes on, a clean exit when stdin
//! closes, no process left behind a dropped client; `call`, `tools` and `mcp list`.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::binary::{BIN, toolsmith};
use serde_json::{Value, json};
use toolsmith::harness::mcp::{McpClient, McpClientOptions, McpCommand, McpNames, McpTransport};
use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest, ToolImpl};

fn serve_command(root: &std::path::Path, extra: &[&str]) -> McpCommand {
    // An empty `RUST_LOG` is none: the server's stderr as without one.
    McpCommand::new(BIN)
        .env("RUST_LOG", "")
        .args(["serve", "--root"])
        .arg(root)
        .args(extra.iter().copied())
}

fn request(name: &str, arguments: Value) -> ToolCallRequest {
    ToolCallRequest::new("1", name, ToolArguments::try_from(arguments).unwrap())
}

#[tokio::test]
async fn serve_round_trips_through_our_client() {
    let root = tempfile::tempdir().unwrap();
    let client = McpClient::connect_with(
        McpTransport::child(serve_command(root.path(), &["--preset", "minimal"])),
        McpClientOptions::default().with_names(McpNames::new()),
    )
    .await
    .unwrap();
    let names: Vec<String> = client.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["read", "write", "edit", "bash"]);

    let manager = ToolCallManager::new("consumer");
    let mut definitions = Vec::new();
    for tool in client.tools() {
        let definition = tool.shared_definition();
        assert_eq!(*definition, tool.definition());
        definitions.push(definition);
        manager.register(Arc::new(tool)).unwrap();
    }
    // The manager keeps each bridge's own definition rather than a copy: held by the
    // client's list, the registered bridge (a clone of the list's), this list and the manager.
    for definition in &definitions {
        assert_eq!(
            Arc::strong_count(definition),
            4,
            "{} was copied",
            definition.name()
        );
        assert_eq!(
            manager.get_def(definition.name()).as_ref(),
            Some(&**definition)
        );
    }
    manager
        .execute_one(&request(
            "write",
            json!({"path": "notes/a.txt", "content": "over MCP\n"}),
        ))
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.path().join("notes/a.txt")).unwrap(),
        "over MCP\n"
    );
    let read = manager
        .execute_one(&request("read", json!({"path": "notes/a.txt"})))
        .await
        .unwrap();
    assert_eq!(read.content.to_text(), "     1\tover MCP");
    // The sandbox holds over MCP too, as a tool error.
    let refused = manager
        .execute_one(&request("read", json!({"path": "../../etc/passwd"})))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("outside the root"),
        "{refused}"
    );
    client.close().await;
}

#[tokio::test]
async fn dropping_the_client_ends_the_server_process() {
    let root = tempfile::tempdir().unwrap();
    let client = McpClient::connect_with(
        McpTransport::child(serve_command(root.path(), &["--preset", "files"])),
        McpClientOptions::default().with_names(McpNames::new()),
    )
    .await
    .unwrap();
    let pid = client.child_id().expect("a running child");
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    drop(client);
    // Reaped, not a zombie: /proc has no entry left.
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            Instant::now() < deadline,
            "the server process {pid} outlived its client"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `toolsmith serve` with raw pipes.
struct RawServe {
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl RawServe {
    fn start(root: &std::path::Path, extra: &[&str]) -> Self {
        let mut child = toolsmith()
            .args(["serve", "--preset", "minimal", "--root"])
            .arg(root)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self { child, stdout }
    }

    /// A server started in `root`, past the handshake (initialize, then `initialized`).
    fn initialized(root: &std::path::Path) -> Self {
        Self::initialized_with(root, &[])
    }

    /// The same, `serve` given the arguments `extra` too.
    fn initialized_with(root: &std::path::Path, extra: &[&str]) -> Self {
        let mut serve = Self::start(root, extra);
        let init = serve.ask(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "toolsmith");
        serve.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        serve
    }

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line of stdout, which must be a JSON-RPC message.
    fn next(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried something else than JSON ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    fn ask(&mut self, message: Value) -> Value {
        self.send(&message.to_string());
        self.next()
    }
}

#[test]
fn stdout_carries_only_json_rpc_and_garbage_does_not_stop_the_server() {
    let root = tempfile::tempdir().unwrap();
    let mut serve = RawServe::initialized(root.path());

    // A command that prints: its output comes back inside the result, never on stdout.
    let ran = serve.ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "echo printed; echo warned >&2"}}}));
    let text = ran["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("printed") && text.contains("warned"), "{ran}");

    serve.send("this is not JSON-RPC");
    let answer = serve.next();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer["id"], Value::Null);

    let listed = serve.ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    assert_eq!(listed["id"], 3);
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 4);

    // Closing stdin ends the server with status 0.
    drop(serve.child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = serve.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut serve.stdout, &mut rest).unwrap();
    assert_eq!(rest, "", "stdout carried more after the last answer");
}

/// `serve` on stdio bounds a client's messages as a server does (`JsonLimits::for_server`):
/// one of more values than that is refused with the limit named, before rmcp reads it, and
/// the server goes on serving; one just within it runs the tool.
#[test]
fn serve_on_stdio_refuses_a_message_of_more_values_than_a_server_reads() {
    use toolsmith::harness::mcp::DEFAULT_SERVER_MAX_VALUES;
    let root = tempfile::tempdir().unwrap();
    let mut serve = RawServe::initialized(root.path());
    // `bash`'s command as an array of zeros: the tool refuses it, but only after the message
    // was read. The message holds its envelope's values besides the array's.
    let call = |id: u32, zeros: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"bash","arguments":{{"command":[{}0]}}}}}}"#,
            "0,".repeat(zeros - 1)
        )
    };
    serve.send(&call(2, DEFAULT_SERVER_MAX_VALUES));
    let refused = serve.next();
    assert_eq!(refused["id"], 2, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("more than {DEFAULT_SERVER_MAX_VALUES} values")),
        "{message}"
    );

    serve.send(&call(3, DEFAULT_SERVER_MAX_VALUES - 10));
    let read = serve.next();
    assert_eq!(read["id"], 3, "{read}");
    // Read, then refused by the tool's own schema (a string is wanted), naming the argument.
    let text = read["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(read["result"]["isError"], true, "{read}");
    assert!(text.contains("command"), "{text}");
}

/// `--max-message-bytes` and `--max-values` set the limits a client's messages are read
/// within: past either, a message is refused with the limit named, and a message within
/// both runs its tool.
#[test]
fn serve_reads_within_the_limits_its_flags_set() {
    let root = tempfile::tempdir().unwrap();
    let mut serve = RawServe::initialized_with(
        root.path(),
        &["--max-message-bytes", "2048", "--max-values", "100"],
    );
    let call = |id: u32, command: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "bash", "arguments": {"command": command}}})
        .to_string()
    };
    serve.send(&call(2, json!("x".repeat(3000))));
    let large = serve.next();
    assert_eq!(large["id"], 2, "{large}");
    let message = large["error"]["message"].as_str().unwrap();
    assert!(message.contains("2048 bytes"), "{message}");

    serve.send(&call(3, json!(vec![0; 150])));
    let many = serve.next();
    assert_eq!(many["id"], 3, "{many}");
    let message = many["error"]["message"].as_str().unwrap();
    assert!(message.contains("more than 100 values"), "{message}");

    serve.send(&call(4, json!("echo within")));
    let ran = serve.next();
    assert_eq!(ran["id"], 4, "{ran}");
    let text = ran["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("within"), "{text}");

    // Refused by clap, as any value out of range.
    let zero = run(&["serve", "--max-message-bytes", "0"]);
    assert!(!zero.status.success());
    assert!(
        String::from_utf8_lossy(&zero.stderr).contains("--max-message-bytes"),
        "{zero:?}"
    );
}

/// A client that closes stdin without reading the answers it asked for (more than a pipe
/// holds): the server's write waits for ever, yet the process exits, within rmcp's drain and
/// the transport's bound on closing.
#[test]
fn a_client_that_never_reads_cannot_keep_the_server_from_exiting() {
    let root = tempfile::tempdir().unwrap();
    let mut serve = RawServe::initialized(root.path());
    // Some 3 KB an answer: far more than the 64 KiB a pipe holds.
    for id in 2..200 {
        serve.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string());
    }
    drop(serve.child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(30);
    while serve.child.try_wait().unwrap().is_none() {
        if Instant::now() >= deadline {
            serve.child.kill().unwrap();
            panic!("the server did not exit: a write nobody reads held it");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn closing_stdin_before_the_handshake_exits_cleanly() {
    let root = tempfile::tempdir().unwrap();
    let mut serve = RawServe::start(root.path(), &[]);
    drop(serve.child.stdin.take());
    let status = serve.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// Flags that only `--http` reads, given on stdio, get a note naming each of them; a token
/// exported for HTTP use (`TOOLSMITH_MCP_TOKEN`) and the defaults do not.
#[test]
fn serve_on_stdio_notes_the_http_flags_given_but_not_an_exported_token() {
    let root = tempfile::tempdir().unwrap();
    let serve = |flags: &[&str], exported_token: bool| {
        let mut command = toolsmith();
        command
            .args(["serve", "--root"])
            .arg(root.path())
            .args(flags);
        if exported_token {
            command.env("TOOLSMITH_MCP_TOKEN", "secret");
        } else {
            command.env_remove("TOOLSMITH_MCP_TOKEN");
        }
        let output = command.stdin(Stdio::null()).output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stderr).unwrap()
    };
    let given = serve(&["--token", "secret"], false);
    assert!(
        given.contains("toolsmith: --token applies to --http only; ignored on stdio"),
        "{given}"
    );
    let all = serve(
        &[
            "--session-idle-timeout",
            "5",
            "--token",
            "secret",
            "--max-sessions",
            "3",
            "--allow-host",
            "tools.lan",
        ],
        false,
    );
    assert!(
        all.contains(
            "toolsmith: --token, --allow-host, --max-sessions and --session-idle-timeout \
             apply to --http only; ignored on stdio"
        ),
        "{all}"
    );
    let sessions = serve(&["--max-sessions", "3"], false);
    assert!(
        sessions.contains("toolsmith: --max-sessions applies to --http only"),
        "{sessions}"
    );
    for quiet in [serve(&[], true), serve(&[], false)] {
        assert!(!quiet.contains("--http only"), "{quiet}");
    }
}

fn run(args: &[&str]) -> std::process::Output {
    toolsmith().args(args).output().unwrap()
}

#[test]
fn call_prints_the_result_and_fails_on_a_tool_error() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "hello\n").unwrap();
    let root_arg = root.path().to_str().unwrap();
    let ok = run(&["call", "--root", root_arg, "read", r#"{"path": "a.txt"}"#]);
    assert!(ok.status.success());
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "     1\thello\n");

    let refused = run(&["call", "--root", root_arg, "read", r#"{"path": "../x"}"#]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(refused.stdout.is_empty());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("outside the root"));

    let invalid = run(&["call", "--root", root_arg, "read", r#"{"path": 5}"#]);
    assert_eq!(invalid.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&invalid.stderr).contains("Invalid arguments for tool 'read'"));

    // Arguments that cannot be read, and a tool the preset does not have, are the command
    // line's fault: usage errors (exit code 2), naming the tool and where the JSON is wrong.
    for (json, says) in [
        (
            "{path",
            "the arguments of 'read' are not JSON: key must be a string at line 1 column 2",
        ),
        (
            "[1]",
            "the arguments of 'read' are not usable: tool arguments must be a JSON object",
        ),
    ] {
        let wrong = run(&["call", "--root", root_arg, "read", json]);
        let stderr = String::from_utf8_lossy(&wrong.stderr);
        assert_eq!(wrong.status.code(), Some(2), "{json}: {stderr}");
        assert!(stderr.contains(says), "{json}: {stderr}");
    }

    // A mistyped name is told the closest and every name of the preset.
    let unknown = run(&[
        "call", "--root", root_arg, "--preset", "files", "reed", "{}",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&unknown.stderr),
        "toolsmith: Unknown tool 'reed': did you mean 'read'? \
         The tools you can call are: read, write, edit, search_file.\n"
    );
}

/// `toolsmith call` with `args`, `input` written to its stdin (from a thread of its own: a
/// command that stops reading must not block the test).
fn call_with_stdin(args: &[&str], input: Vec<u8>) -> std::process::Output {
    let mut child = toolsmith()
        .arg("call")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A command that refuses early closes its end: the write then fails, as it should.
    let writer = std::thread::spawn(move || _ = stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

#[test]
fn call_reads_its_arguments_from_stdin_with_dash() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "hello\n").unwrap();
    let root_arg = root.path().to_str().unwrap();
    let ok = call_with_stdin(
        &["--root", root_arg, "read", "-"],
        b"{\"path\": \"a.txt\"}\n".to_vec(),
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&ok.stdout), "     1\thello\n");

    // Stdin's JSON is checked as an argument's is.
    let wrong = call_with_stdin(&["--root", root_arg, "read", "-"], b"[1]".to_vec());
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "the arguments of 'read' are not usable: tool arguments must be a JSON object"
        ),
        "{stderr}"
    );
}

#[test]
fn call_refuses_stdin_over_16_mib_or_not_utf8_and_runs_no_tool() {
    let root = tempfile::tempdir().unwrap();
    let root_arg = root.path().to_str().unwrap();
    let limit = 16 * 1024 * 1024;
    // A write of big.txt whose JSON is one byte over the limit.
    let mut json = br#"{"path": "big.txt", "content": ""#.to_vec();
    let end = br#""}"#;
    json.resize(limit + 1 - end.len(), b'x');
    json.extend_from_slice(end);
    assert_eq!(json.len(), limit + 1);
    let over = call_with_stdin(&["--root", root_arg, "write", "-"], json);
    let stderr = String::from_utf8_lossy(&over.stderr);
    assert_eq!(over.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "toolsmith: the arguments of 'write' on stdin: more than 16777216 bytes, \
         the most `-` reads\n"
    );
    assert!(!root.path().join("big.txt").exists());

    let mut invalid = br#"{"path": "bad.txt", "content": "caf"#.to_vec();
    invalid.extend_from_slice(b"\xe9\"}");
    let invalid = call_with_stdin(&["--root", root_arg, "write", "-"], invalid);
    let stderr = String::from_utf8_lossy(&invalid.stderr);
    assert_eq!(invalid.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the arguments of 'write' on stdin: not UTF-8 at byte 35"),
        "{stderr}"
    );
    assert!(!root.path().join("bad.txt").exists());
}

/// Arguments on stdin within the byte limit but of more JSON values than a model's may hold
/// (short values take some 40 times their text once read) are refused unread, as a model's.
#[test]
fn call_refuses_stdin_arguments_of_too_many_values() {
    let root = tempfile::tempdir().unwrap();
    let root_arg = root.path().to_str().unwrap();
    let json = format!(
        "{{\"path\": \"a.txt\", \"n\": [{}0]}}",
        "0,".repeat(3_000_000)
    );
    let out = call_with_stdin(&["--root", root_arg, "read", "-"], json.into_bytes());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "the arguments of 'read' are not JSON: the JSON holds more than 2097152 values"
        ),
        "{stderr}"
    );
}

/// What a tool read reaches the terminal without the control characters that would drive
/// it; its lines and tabs are kept.
#[test]
fn call_prints_a_result_without_terminal_controls() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "x\u{1b}]0;owned\u{7}y\n").unwrap();
    let root_arg = root.path().to_str().unwrap();
    let out = run(&["call", "--root", root_arg, "read", r#"{"path": "a.txt"}"#]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "     1\tx\\u{1b}]0;owned\\u{7}y\n"
    );
}

#[test]
fn a_reader_that_stops_early_ends_the_command_quietly() {
    let root = tempfile::tempdir().unwrap();
    let mut child = toolsmith()
        .args(["tools", "--root", root.path().to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // As `| head -0` does: the reader is gone before the first line.
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}: {stderr}", output.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A stderr that cannot be written (`2>/dev/full`, a reader gone) leaves a failure's exit
/// code as it is: `eprintln!` panicked there, and the command exited with 101.
#[cfg(target_os = "linux")]
#[test]
fn a_stderr_that_cannot_be_written_keeps_the_exit_code() {
    let root = tempfile::tempdir().unwrap();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let refused = toolsmith()
        .args(["call", "--root", root.path().to_str().unwrap()])
        .args(["read", r#"{"path": "../x"}"#])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1), "{}", refused.status);
    assert!(refused.stdout.is_empty());
}

#[test]
fn tools_prints_what_each_provider_receives() {
    let root = tempfile::tempdir().unwrap();
    let root_arg = root.path().to_str().unwrap();
    for (provider, name_at) in [
        ("openai-chat", "/function/name"),
        ("openai-responses", "/name"),
        ("anthropic", "/name"),
        ("text", "/name"),
    ] {
        let out = run(&[
            "tools",
            "--root",
            root_arg,
            "--preset",
            "files",
            "--provider",
            provider,
        ]);
        assert!(
            out.status.success(),
            "{provider}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
        let names: Vec<&str> = tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.pointer(name_at).and_then(Value::as_str).unwrap())
            .collect();
        assert_eq!(
            names,
            ["read", "write", "edit", "search_file"],
            "{provider}"
        );
    }
    let strict = run(&["tools", "--root", root_arg, "--preset", "shell", "--strict"]);
    let tools: Value = serde_json::from_slice(&strict.stdout).unwrap();
    assert_eq!(tools[0]["function"]["strict"], true);
    let gemini = run(&["tools", "--root", root_arg, "--provider", "gemini"]);
    let tools: Value = serde_json::from_slice(&gemini.stdout).unwrap();
    assert!(tools[0]["functionDeclarations"].as_array().unwrap().len() >= 5);
}

#[test]
fn mcp_list_shows_a_servers_tools_through_the_bridge() {
    let root = tempfile::tempdir().unwrap();
    let root_arg = root.path().to_str().unwrap();
    let out = run(&[
        "mcp", "list", "--", BIN, "serve", "--preset", "shell", "--root", root_arg,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    assert!(
        lines.next().unwrap().starts_with("# toolsmith "),
        "{stdout}"
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("bash\tRun a shell command"),
        "{stdout}"
    );
}

#[test]
fn mcp_list_refuses_a_url_that_is_not_http() {
    for url in ["localhost:8080/mcp", "ftp://host/mcp", ""] {
        let out = run(&["mcp", "list", "--url", url]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // A usage error, as clap's own are.
        assert_eq!(out.status.code(), Some(2), "{url}: {stderr}");
        // It said "builder error", after the name of the transport's worker type.
        assert_eq!(
            stderr,
            format!("toolsmith: --url {url:?} does not start with http:// or https://\n")
        );
    }
}

#[test]
fn mcp_list_quotes_a_url_with_a_multi_byte_character_before_its_scheme() {
    // Redacting it for the refusal panicked (a slice inside `é`).
    let out = run(&["mcp", "list", "--url", "éhttp://me:sk-secret@host/mcp"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "toolsmith: --url \"éhttp://host/mcp\" does not start with http:// or https://\n"
    );
}

#[tokio::test]
async fn serve_over_http_keeps_to_its_session_cap() {
    let root = tempfile::tempdir().unwrap();
    let serve = crate::mcp_interop::HttpServe::start(root.path(), &["--max-sessions", "1"]);
    let first = McpClient::connect(McpTransport::http(&serve.1))
        .await
        .expect("the first client connects");
    let Err(refused) = McpClient::connect(McpTransport::http(&serve.1)).await else {
        panic!("a second session is past the cap");
    };
    assert!(
        refused
            .to_string()
            .contains("too many open sessions (its limit is 1)"),
        "{refused}"
    );
    first.close().await;
    let next = McpClient::connect(McpTransport::http(&serve.1))
        .await
        .expect("a place is free once the first session ended");
    next.close().await;
}

/// The status of a `GET /mcp` to the server at `url` with `Host: host`.
fn status_with_host(url: &str, host: &str) -> String {
    use std::io::Read as _;
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /mcp HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.get(9..12).unwrap_or_default().to_owned()
}

#[test]
fn serve_over_http_takes_the_hosts_it_is_given_and_refuses_an_empty_token() {
    let root = tempfile::tempdir().unwrap();
    let serve =
        crate::mcp_interop::HttpServe::start(root.path(), &["--allow-host", "tools.example"]);
    assert_ne!(status_with_host(&serve.1, "tools.example"), "403");
    assert_eq!(status_with_host(&serve.1, "other.example"), "403");

    let refused = toolsmith()
        .args(["serve", "--http", "127.0.0.1:0", "--token", "", "--root"])
        .arg(root.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--token: the bearer token is empty"),
        "{stderr}"
    );
}

#[test]
fn serve_refuses_a_host_or_token_no_request_could_meet_as_a_usage_error() {
    // They were taken, and every request refused (403, 401) for ever after.
    for (flag, value, says) in [
        (
            "--allow-host",
            "a b",
            "--allow-host: the allowed host \"a b\" is not a host name",
        ),
        (
            "--allow-host",
            "http://x",
            "--allow-host: the allowed host \"http://x\" is a URL",
        ),
        (
            "--allow-host",
            "*.tools.lan",
            "--allow-host: the allowed host \"*.tools.lan\" holds a `*`: hosts are compared \
             exactly, with no wildcards",
        ),
        (
            "--token",
            "sec\nret",
            "--token: the bearer token holds a control character (\\n)",
        ),
        (
            "--token",
            "sécret",
            "--token: the bearer token holds a character that is not ASCII",
        ),
    ] {
        let (code, stderr) = serve_bounded(&["--http", "127.0.0.1:0", flag, value]);
        assert_eq!(code, Some(2), "{value:?}: {stderr}");
        assert!(stderr.contains(says), "{value:?}: {stderr}");
        assert!(!stderr.contains("serving MCP"), "{stderr}");
        if flag == "--token" {
            assert!(!stderr.contains("ret"), "the token is quoted: {stderr}");
        }
    }
    // From the environment, the variable is named.
    let (code, stderr) = serve_bounded_with(
        &["--http", "127.0.0.1:0"],
        &[("TOOLSMITH_MCP_TOKEN", "a\u{7}b")],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("TOOLSMITH_MCP_TOKEN: the bearer token holds"),
        "{stderr}"
    );
}

#[test]
fn mcp_list_never_prints_the_key_of_a_url() {
    // Refused before any connection, and refused by a server that is down: both quote the
    // URL, neither its user and key.
    for (url, code) in [
        // A usage error.
        ("ftp://me:sk-secret@host/mcp", 2),
        ("http://me:sk-secret@127.0.0.1:1/mcp", 1),
        // A `/` in the password: the URL does not parse, and was quoted whole.
        ("http://me:sk-secret/1@127.0.0.1:1/mcp", 1),
    ] {
        let out = run(&["mcp", "list", "--url", url]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{url}: {stderr}");
        assert!(!stderr.contains("sk-secret"), "{url}: {stderr}");
        assert!(stderr.contains("://host/mcp") || stderr.contains("://127.0.0.1:1/mcp"));
    }
}

#[test]
fn mcp_list_with_no_server_names_both_ways_to_give_one() {
    // clap's error named only the command ("required arguments were not provided:
    // <COMMAND>..."), as if --url were no answer.
    for args in [&["mcp", "list"][..], &["mcp", "list", "--"]] {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("give a server command"), "{stderr}");
        assert!(stderr.contains("or --url URL"), "{stderr}");
    }
    let help = String::from_utf8_lossy(&run(&["mcp", "list", "--help"]).stdout).into_owned();
    assert!(
        help.contains("toolsmith mcp list [OPTIONS] --url <URL>"),
        "{help}"
    );
    assert!(
        help.contains("toolsmith mcp list [OPTIONS] -- <COMMAND>..."),
        "{help}"
    );
    // Both at once are still refused by clap.
    let both = run(&[
        "mcp",
        "list",
        "--url",
        "http://127.0.0.1:1/mcp",
        "--",
        "server",
    ]);
    assert_eq!(both.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));
}

/// What `toolsmith serve --http ARGS` says on stderr up to and with its "serving MCP at"
/// line, with `RUST_LOG` unset; the server is then ended.
fn serve_http_announcement(args: &[&str]) -> String {
    serve_http_announcement_logging(args, None)
}

/// As [`serve_http_announcement`], with `RUST_LOG` set to `filter` (unset for `None`).
fn serve_http_announcement_logging(args: &[&str], filter: Option<&str>) -> String {
    let root = tempfile::tempdir().unwrap();
    let mut command = toolsmith();
    if let Some(filter) = filter {
        command.env("RUST_LOG", filter);
    }
    let mut child = command
        .args(["serve", "--preset", "shell", "--root"])
        .arg(root.path())
        .arg("--http")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("serving MCP at") {
        if stderr.read_line(&mut said).unwrap() == 0 {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    said
}

#[test]
fn serve_warns_on_stderr_when_its_tools_are_open_to_the_network() {
    // The library's warnings had no subscriber to show them: `bash` was served to every
    // address without a token, and nothing said so.
    let open = serve_http_announcement(&["0.0.0.0:0"]);
    assert!(
        open.contains("toolsmith: warning: serving MCP beyond this machine without a bearer token"),
        "{open}"
    );
    assert!(open.contains("(toolsmith serve --allow-host)"), "{open}");
    assert!(open.contains("serving MCP at http://0.0.0.0:"), "{open}");
    // With a token and the hosts clients use, nothing to warn of.
    let guarded = serve_http_announcement(&[
        "0.0.0.0:0",
        "--token",
        "s3cret",
        "--allow-host",
        "tools.lan",
    ]);
    assert!(
        guarded.starts_with("toolsmith: serving MCP at "),
        "{guarded}"
    );
}

#[test]
fn rust_log_chooses_what_of_the_library_log_is_shown() {
    // RUST_LOG chooses the filter, as it does for other Rust commands: `off`, a level for
    // every target, silences the warning of a server open to the network.
    let silenced = serve_http_announcement_logging(&["0.0.0.0:0"], Some("off"));
    assert!(
        silenced.starts_with("toolsmith: serving MCP at http://0.0.0.0:"),
        "{silenced}"
    );
    let kept = serve_http_announcement_logging(&["0.0.0.0:0"], Some("toolsmith=warn,rmcp=off"));
    assert!(
        kept.contains("toolsmith: warning: serving MCP beyond this machine"),
        "{kept}"
    );
    // One naming other crates alone keeps the toolsmith crates' warnings: the default
    // applied only to an empty filter, and `hyper=debug` hid this one.
    for filter in ["hyper=debug", "rmcp=off"] {
        let other = serve_http_announcement_logging(&["0.0.0.0:0"], Some(filter));
        assert!(
            other.contains("toolsmith: warning: serving MCP beyond this machine"),
            "{filter}: {other}"
        );
    }
    // A filter that cannot be read is said to be so, and the default one is used.
    let unread = serve_http_announcement_logging(&["0.0.0.0:0"], Some("toolsmith=loud"));
    assert!(
        unread.starts_with("toolsmith: warning: RUST_LOG is not a filter ("),
        "{unread}"
    );
    assert!(
        unread.contains("toolsmith: warning: serving MCP beyond this machine"),
        "{unread}"
    );
}

/// `toolsmith serve ARGS` with stdin closed, ended after 10 s if it has not exited.
fn serve_bounded(args: &[&str]) -> (Option<i32>, String) {
    serve_bounded_with(args, &[])
}

/// As [`serve_bounded`], with the variables `env` set.
fn serve_bounded_with(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let root = tempfile::tempdir().unwrap();
    let mut child = toolsmith()
        .envs(env.iter().copied())
        .args(["serve", "--root"])
        .arg(root.path())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn serve_refuses_an_unusable_http_setting_as_a_usage_error() {
    // A cap of 0 sessions would serve nothing but 503s; an address that is not one is a
    // mistyped value: both are usage errors (exit code 2), said before anything starts.
    for (args, says) in [
        (
            &["--http", "0", "--max-sessions", "0"][..],
            "--max-sessions",
        ),
        (&["--http", "99999"][..], "--http"),
        (&["--http", "localhost:8080"][..], "--http"),
        (&["--http", ""][..], "--http"),
    ] {
        let (code, stderr) = serve_bounded(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    // A port in use is no usage error: the command failed.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let (code, stderr) = serve_bounded(&["--http", &port]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("Address already in use"), "{stderr}");
}

#[test]
fn the_commands_help_says_what_the_command_does() {
    // It showed the library's description ("Turn annotated async Rust functions into …").
    let help = run(&["--help"]);
    assert!(help.status.success());
    let shown = String::from_utf8_lossy(&help.stdout);
    assert!(
        shown.starts_with("Toolsmith's tools from the command line: serve them over MCP"),
        "{shown}"
    );
}
