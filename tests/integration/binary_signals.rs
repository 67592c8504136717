//! The `toolsmith` binary stopped by SIGINT (Ctrl-C) or SIGTERM while a child runs: a `bash`
//! command of `call` or of a `serve` client, the server of `mcp list`. The child leads a
//! process group (or session) of its own, so the signal does not reach it: the command must
//! end it before it exits, and exit with 128 + the signal's number.

use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::support::binary::{BIN, toolsmith};
use serde_json::json;

/// How long a step may take before the test gives up: far longer than any of them needs.
const PATIENCE: Duration = Duration::from_secs(20);

/// The pid the child wrote to `file`, once it has (the child's own signal that it runs).
fn pid_written(file: &Path) -> u32 {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Some(line) = text.strip_suffix('\n')
        {
            return line.parse().unwrap();
        }
        assert!(Instant::now() < deadline, "the child never wrote {file:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether process `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// Sends `signal` (`TERM`, `INT`, `KILL`) to `pid`.
fn send(signal: &str, pid: u32) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

/// The command's exit status, killed (and the test failed) if it does not exit in time.
fn exit_of(command: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = command.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = command.kill();
            let _ = command.wait();
            panic!("the command did not exit after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Asserts that `pid` ends soon (the command ended it), killing it if it does not.
fn assert_ended(pid: u32, what: &str) {
    let deadline = Instant::now() + PATIENCE / 4;
    while alive(pid) {
        if Instant::now() >= deadline {
            send("KILL", pid);
            panic!("{what} ({pid}) was left running");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A command line that writes the shell's pid to `pid` in its directory, then sleeps as
/// that process.
const SLEEPER: &str = "echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 300";

#[test]
fn a_signal_during_call_ends_its_bash_command_and_the_command() {
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let root = tempfile::tempdir().unwrap();
        let mut command = toolsmith()
            .args(["call", "--preset", "shell", "--root"])
            .arg(root.path())
            .args(["bash", &json!({ "command": SLEEPER }).to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let sleeper = pid_written(&root.path().join("pid"));
        send(signal, command.id());
        let status = exit_of(&mut command);
        assert_ended(sleeper, "the bash command");
        assert_eq!(status.code(), Some(code), "SIG{signal}: {status}");
    }
}

#[test]
fn a_signal_during_serve_ends_a_clients_running_call() {
    let root = tempfile::tempdir().unwrap();
    let mut serve = toolsmith()
        .args(["serve", "--preset", "shell", "--root"])
        .arg(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": SLEEPER}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let sleeper = pid_written(&root.path().join("pid"));
    send("TERM", serve.id());
    let status = exit_of(&mut serve);
    assert_ended(sleeper, "the client's bash command");
    assert_eq!(status.code(), Some(143), "{status}");
}

#[test]
fn a_signal_during_mcp_list_ends_the_server_it_started() {
    let root = tempfile::tempdir().unwrap();
    let mut list = toolsmith()
        .args(["mcp", "list", "--", "sh", "-c"])
        .arg(format!("cd '{}' && {SLEEPER}", root.path().display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = pid_written(&root.path().join("pid"));
    send("TERM", list.id());
    let status = exit_of(&mut list);
    assert_ended(server, "the MCP server");
    assert_eq!(status.code(), Some(143), "{status}");
}

/// Started with SIGINT ignored, as a shell starts a background job, the command stays deaf
/// to it (a terminal's Ctrl-C is for the foreground work) and still ends on SIGTERM.
#[test]
fn a_signal_ignored_at_start_stays_ignored() {
    use std::io::{BufRead as _, BufReader};
    let root = tempfile::tempdir().unwrap();
    // `trap '' INT` sets the action to "ignore", which `exec` keeps.
    let mut serve = Command::new("sh")
        .args([
            "-c",
            r#"trap '' INT && exec "$0" serve --preset minimal --root "$1""#,
            BIN,
        ])
        .arg(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = serve.stdin.take().unwrap();
    let mut stdout = BufReader::new(serve.stdout.take().unwrap());
    let mut ask = |message: serde_json::Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        line
    };
    let init = ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    assert!(init.contains("toolsmith"), "{init}");
    send("INT", serve.id());
    // Answered after the signal: a handler would have ended the process by now (exit 130).
    let pong = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert!(pong.contains(r#""id":2"#), "{pong}");
    send("TERM", serve.id());
    let status = exit_of(&mut serve);
    assert_eq!(status.code(), Some(143), "{status}");
}

/// `run --json` stopped by a signal ends, as any other failure, with its error line: a
/// program reading the lines could not tell an interrupted run from a cut pipe.
#[test]
fn a_signal_during_run_json_ends_with_an_error_line() {
    use std::io::Read as _;
    use std::net::TcpListener;
    for (signal, code, says) in [
        ("INT", 130, "interrupted by SIGINT"),
        ("TERM", 143, "interrupted by SIGTERM"),
    ] {
        // A model server that takes the request and never answers it.
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", server.local_addr().unwrap());
        let root = tempfile::tempdir().unwrap();
        let mut run = run_json(&base_url, root.path());
        // The run is in its model call once the server has its connection.
        server.set_nonblocking(true).unwrap();
        let deadline = Instant::now() + PATIENCE;
        let _connection = loop {
            match server.accept() {
                Ok((connection, _)) => break connection,
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    if let Some(status) = run.try_wait().unwrap() {
                        panic!("the run ended before its model call: {status}");
                    }
                    assert!(Instant::now() < deadline, "the run never called its model");
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(error) => panic!("{error}"),
            }
        };
        send(signal, run.id());
        let status = exit_of(&mut run);
        assert_eq!(status.code(), Some(code), "SIG{signal}: {status}");
        let mut stdout = String::new();
        run.stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        let last: serde_json::Value =
            serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_default();
        assert_eq!(last["type"], "error", "SIG{signal}: {stdout}");
        assert_eq!(
            last["data"].as_str().unwrap_or_default().split(" (").next(),
            Some(says),
            "{stdout}"
        );
    }
}

/// `run --json` stopped by a signal while its stdout's reader reads nothing (the pipe full,
/// a write of the run's blocked) still exits, with the signal's code. The run wrote on the
/// thread that waits for the signal, which then never heard it; and its error line, written
/// after the run's tasks were dropped, would wait for ever for the stdout a blocked write
/// holds.
#[test]
fn a_signal_during_run_json_exits_though_stdout_is_never_read() {
    use std::io::{BufRead as _, BufReader, Read as _};
    use std::net::TcpListener;
    // A model server answering one request with an answer far larger than a pipe holds.
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", server.local_addr().unwrap());
    let answered = std::thread::spawn(move || {
        let (connection, _) = server.accept().unwrap();
        let mut reader = BufReader::new(connection.try_clone().unwrap());
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        reader.read_exact(&mut vec![0; length]).unwrap();
        let body = json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "x".repeat(4 << 20)}}]})
        .to_string();
        let mut connection = connection;
        let _ = write!(
            connection,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        connection
    });
    let root = tempfile::tempdir().unwrap();
    let mut run = run_json(&base_url, root.path());
    let _connection = answered.join().unwrap();
    // Signalled once a thread of it is blocked writing to the pipe (where Linux says so).
    let deadline = Instant::now() + Duration::from_secs(5);
    while !writing_to_a_pipe(run.id()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    send("TERM", run.id());
    let status = exit_of(&mut run);
    assert_eq!(status.code(), Some(143), "{status}");
}

/// Whether a thread of process `pid` waits in a write to a full pipe.
fn writing_to_a_pipe(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|tasks| {
        tasks.flatten().any(|task| {
            std::fs::read_to_string(task.path().join("wchan"))
                .is_ok_and(|wchan| wchan.contains("pipe_write"))
        })
    })
}

/// `toolsmith run --json` of the `files` preset over `root`, asking the model server at
/// `base_url`, its stdout piped (for the test to read, or not), its stderr dropped.
fn run_json(base_url: &str, root: &std::path::Path) -> std::process::Child {
    toolsmith()
        .args([
            "run", "--json", "--preset", "files", "--model", "m", "--root",
        ])
        .arg(root)
        .args(["--base-url", base_url, "Hi"])
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}
