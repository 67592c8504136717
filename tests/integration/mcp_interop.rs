//! Interop with the Python `mcp` package (2.3.0): its client against `toolsmith serve` over
//! stdio and HTTP, and a small Python `MCPServer` consumed by our `McpClient`.
//!
//! The Python environment is made by `tests/mcp_interop/setup.sh` (target/mcp-venv), which
//! `.ci/run` runs first. Without it these tests say why and pass locally; under CI (`CI=true`)
//! they fail.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::binary::{BIN, toolsmith};
use serde_json::json;
use toolsmith::harness::mcp::{McpClient, McpClientOptions, McpCommand, McpNames, McpTransport};
use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult, ToolError};

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_interop")
}

/// The venv's Python, or `None` (with the reason printed) when it is missing outside CI.
fn python() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv/bin/python");
    let usable = python.exists()
        && Command::new(&python)
            .args(["-c", "import mcp"])
            .status()
            .is_ok_and(|s| s.success());
    if usable {
        return Some(python);
    }
    let reason = format!(
        "{} with the `mcp` package is missing: run tests/mcp_interop/setup.sh",
        python.display()
    );
    if std::env::var("CI").is_ok_and(|ci| ci == "true") {
        panic!("MCP interop cannot run under CI: {reason}");
    }
    eprintln!("skipping the MCP interop test: {reason}");
    None
}

fn run_python(python: &Path, args: &[&str]) -> String {
    let out = Command::new(python)
        .args(args)
        .current_dir(scripts())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "python {args:?} failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn python_client_over_stdio() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    let out = run_python(
        &python,
        &["client_stdio.py", BIN, root.path().to_str().unwrap()],
    );
    assert!(out.contains("OK stdio: 5 checks"), "{out}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("py/hello.txt")).unwrap(),
        "from python\n"
    );
}

/// `toolsmith serve --http` on a free port, killed when dropped: the process and its URL.
pub(crate) struct HttpServe(std::process::Child, pub(crate) String);

impl HttpServe {
    /// The server on `root`, with `extra` arguments.
    pub(crate) fn start(root: &Path, extra: &[&str]) -> Self {
        let mut child = toolsmith()
            .args([
                "serve",
                "--preset",
                "minimal",
                "--http",
                "127.0.0.1:0",
                "--root",
            ])
            .arg(root)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line
            .split_whitespace()
            .find(|word| word.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL announced: {line:?}"))
            .to_owned();
        Self(child, url)
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn python_client_over_http() {
    let Some(python) = python() else { return };
    let root = tempfile::tempdir().unwrap();
    let serve = HttpServe::start(root.path(), &[]);
    let out = run_python(&python, &["client_http.py", &serve.1]);
    assert!(out.contains("OK http: 5 checks"), "{out}");
}

fn request(name: &str, arguments: serde_json::Value) -> ToolCallRequest {
    ToolCallRequest::new("1", name, ToolArguments::try_from(arguments).unwrap())
}

#[tokio::test]
async fn a_python_server_through_our_client() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("slow-cancelled");
    let command = McpCommand::new(&python)
        .arg(scripts().join("server.py"))
        .env("SLOW_CANCELLED_MARKER", &marker)
        .quiet();
    let client = McpClient::connect_with(
        McpTransport::child(command),
        McpClientOptions::default()
            .with_names(McpNames::new())
            .with_call_timeout(Some(Duration::from_secs(2))),
    )
    .await
    .unwrap();
    assert_eq!(client.server_info().unwrap().name, "py-interop");
    let names: Vec<String> = client.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["add", "fail", "slow"]);

    let manager = ToolCallManager::new("python");
    for tool in client.tools() {
        manager.register(Arc::new(tool)).unwrap();
    }
    // The server's schema is carried over: a wrong type is refused before it is sent.
    let invalid = manager
        .execute_one(&request("add", json!({"a": "x", "b": 1})))
        .await;
    assert!(invalid.is_err());
    // Python wraps an int result as {"result": …} with an output schema; kept as JSON.
    let sum = manager
        .execute_one(&request("add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(sum, ToolCallResult::json(json!({"result": 5})));
    manager.check_result("add", &sum).unwrap();

    let failed = manager
        .execute_one(&request("fail", json!({})))
        .await
        .unwrap_err();
    let ToolError::Execution { tool, reason } = &failed else {
        panic!("expected an execution error, got {failed:?}");
    };
    assert_eq!(tool, "fail");
    // mcp 2.x reports "Error executing tool fail" (the exception's text stays on the server).
    assert!(reason.contains("fail"), "{reason}");

    // Past the time limit the call is dropped, and the server told to cancel it.
    let slow = manager
        .execute_one(&request("slow", json!({"seconds": 30})))
        .await
        .unwrap_err();
    assert_eq!(slow, ToolError::timeout("slow"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marker.exists() {
        assert!(
            Instant::now() < deadline,
            "the Python server never saw the cancellation"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = client.child_id().unwrap();
    client.close().await;
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the Python server outlived close()"
    );
}
