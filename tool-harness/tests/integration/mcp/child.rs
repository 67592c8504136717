//! A server in a child process never outlives its client: a failed handshake, a connect
//! timeout, or a command that does not exist leave no process, no zombie and no orphan.

use std::path::Path;
use std::time::Duration;

use toolsmith_harness::mcp::{
    McpClient, McpClientOptions, McpCommand, McpError, McpNames, McpTransport,
};

/// The state letter of a process (`R`, `S`, `Z`, …), or `None` once it is gone (reaped).
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the command name in parentheses.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// The pids a test script wrote: its own (the group leader) and its background child's.
fn pids(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

/// A shell that records its pid and a background `sleep`'s, then runs `then`.
fn script(pid_file: &Path, then: &str) -> McpCommand {
    McpCommand::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > '{file}'; sleep 300 < /dev/null > /dev/null & echo $! >> '{file}'; {then}",
            file = pid_file.display()
        ))
        .quiet()
}

/// A connect timeout far past what the script takes to record its pids and do what the
/// test has it do (exit, answer), even on a loaded machine: at 700 ms, a shell not yet
/// scheduled was killed before either, and the test saw a time-out and no pids.
fn options() -> McpClientOptions {
    McpClientOptions::default()
        .with_names(McpNames::new())
        .with_connect_timeout(Duration::from_secs(3))
}

/// The leader must be reaped (gone); the grandchild killed (gone, or a zombie left to init).
async fn assert_nothing_left(pid_file: &Path) {
    let pids = pids(pid_file);
    assert_eq!(pids.len(), 2, "the script did not record its pids");
    let (leader, grandchild) = (pids[0], pids[1]);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let leader_gone = state(leader).is_none();
        let grandchild_dead = matches!(state(grandchild), None | Some('Z'));
        if leader_gone && grandchild_dead {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "left behind: leader {leader} in state {:?}, grandchild {grandchild} in state {:?}",
            state(leader),
            state(grandchild)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_server_that_never_answers_is_ended_at_the_connect_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let command = script(&pid_file, "exec sleep 301");
    let err = McpClient::connect_with(McpTransport::child(command), options())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Timeout { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("connecting to the MCP server `sh -c"),
        "{err}"
    );
    assert_nothing_left(&pid_file).await;
}

#[tokio::test]
async fn a_server_that_exits_during_the_handshake_is_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let command = script(&pid_file, "exit 3");
    let err = McpClient::connect_with(McpTransport::child(command), options())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Handshake { .. }), "{err}");
    assert_nothing_left(&pid_file).await;
}

/// A server that exits at once (a bad flag, a missing preset) fails the handshake saying
/// that its process exited and with what status, not only that the connection closed.
#[tokio::test]
async fn a_server_that_exits_at_once_is_a_handshake_error_naming_its_exit_status() {
    let quiet = McpCommand::new("sh").args(["-c", "exit 2"]).quiet();
    let err = McpClient::connect_with(McpTransport::child(quiet), options())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Handshake { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("the MCP handshake with `sh -c exit 2` failed: "),
        "{message}"
    );
    assert!(
        message
            .contains("the server's process exited (exit status: 2) before the handshake was done"),
        "{message}"
    );
    assert!(
        message.contains("its stderr was discarded (McpCommand::quiet)"),
        "{message}"
    );

    // Its stderr, when not discarded, went to this process's.
    let loud = McpCommand::new("sh").args(["-c", "kill -TERM $$"]);
    let message = McpClient::connect_with(McpTransport::child(loud), options())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        message.contains(
            "the server's process exited (signal: 15 (SIGTERM)) before the handshake was done"
        ),
        "{message}"
    );
    assert!(
        message.contains("its stderr went to this process's stderr"),
        "{message}"
    );
}

/// A server that answers the handshake, then exits on the first request (the tool listing):
/// the listing's error says that its process exited and with what status, not only that the
/// connection closed.
#[tokio::test]
async fn a_server_that_exits_while_its_tools_are_listed_names_its_exit_status() {
    // The initialize answer echoes the request's id and protocol version.
    let server = r#"read request
id=$(printf '%s' "$request" | sed -E 's/.*"id":([0-9]+).*/\1/')
version=$(printf '%s' "$request" | sed -E 's/.*"protocolVersion":"([^"]+)".*/\1/')
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"exits","version":"1"}}}\n' "$id" "$version"
read initialized
read list
exit 4"#;
    let command = McpCommand::new("sh").args(["-c", server]).quiet();
    let err = McpClient::connect_with(McpTransport::child(command), options())
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, McpError::Request { .. }), "{message}");
    assert!(message.starts_with("tools/list to "), "{message}");
    assert!(
        message.contains(
            "the server's process exited (exit status: 4) before its tools were listed; \
             its stderr was discarded (McpCommand::quiet)"
        ),
        "{message}"
    );
}

/// A server that writes other text to its stdout (logs, a banner) and never a message times
/// out saying what it wrote: how many lines did not read, and the start of the first, cut
/// after 200 characters.
#[tokio::test]
async fn a_server_writing_text_to_its_stdout_times_out_quoting_its_first_line() {
    let command = McpCommand::new("sh")
        .args([
            "-c",
            "head -c 5000 /dev/zero | tr '\\0' x; echo; echo world; sleep 30",
        ])
        .quiet();
    let err = McpClient::connect_with(
        McpTransport::child(command),
        options().with_connect_timeout(Duration::from_secs(2)),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::Timeout { .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains("did not finish within 2s; "), "{message}");
    let first = format!("\"{}…\"", "x".repeat(200));
    assert!(
        message.ends_with(&format!(
            "the server wrote 2 lines that are not JSON-RPC messages to its stdout \
             (a server writes only those there), the first: {first}"
        )),
        "{message}"
    );

    // One that exits after it: said with its exit.
    let command = McpCommand::new("sh")
        .args(["-c", "echo 'Listening on stdio'; exit 1"])
        .quiet();
    let message = McpClient::connect_with(McpTransport::child(command), options())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("exited (exit status: 1)")
            && message.contains(
                "the server wrote 1 line that is not a JSON-RPC message to its stdout \
                 (a server writes only those there): \"Listening on stdio\""
            ),
        "{message}"
    );
}

#[tokio::test]
async fn a_server_that_answers_garbage_is_ended() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    // `cat` echoes the client's own request back: never a valid answer.
    let command = script(&pid_file, "exec cat");
    let err = McpClient::connect_with(McpTransport::child(command), options())
        .await
        .unwrap_err();
    assert!(
        matches!(err, McpError::Timeout { .. } | McpError::Handshake { .. }),
        "{err}"
    );
    assert_nothing_left(&pid_file).await;
}

#[tokio::test]
async fn a_missing_program_is_an_error_naming_it() {
    let command = McpCommand::new("/nonexistent/mcp-server").arg("--stdio");
    let err = McpClient::connect_with(McpTransport::child(command), options())
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::Io { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("starting the MCP server `/nonexistent/mcp-server --stdio`"),
        "{err}"
    );
}

/// A server's command line names it in errors (which reach logs and, from a bridged tool,
/// the model), its secrets not: the value of a secret-looking flag or assignment shows as
/// `***`, a URL without its password and query values, the rest as given.
#[tokio::test]
async fn a_servers_label_hides_the_secrets_of_its_command_line() {
    let command = McpCommand::new("/nonexistent/mcp-server").args([
        "--stdio",
        "--token",
        "tok-1",
        "--api-key=key-2",
        "--github-personal-access-token",
        "pat-3",
        "CLIENT_SECRET=sec-4",
        "--password",
        "pw-5",
        "--url",
        "https://user:pw-6@api.test/mcp?key=key-7",
        "--header",
        "Authorization: Bearer bearer-8",
        "--verbose",
        "repo=toolsmith",
    ]);
    let shown = "/nonexistent/mcp-server --stdio --token *** --api-key=*** \
                 --github-personal-access-token *** CLIENT_SECRET=*** --password *** --url \
                 https://api.test/mcp?key=… --header Authorization: *** --verbose \
                 repo=toolsmith";
    assert_eq!(command.to_string(), shown);
    let debug = format!("{command:?}");
    let err = McpClient::connect_with(McpTransport::child(command), options())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("starting the MCP server `{shown}`")),
        "{err}"
    );
    for secret in [
        "tok-1", "key-2", "pat-3", "sec-4", "pw-5", "pw-6", "key-7", "bearer-8",
    ] {
        assert!(!err.to_string().contains(secret), "{err}");
        assert!(!debug.contains(secret), "{debug}");
    }
}

/// The secrets a first version of the label showed: a flag's value starting with `-`,
/// names holding `pass`, `pat`, `bearer`, `cookie` or `session`, a header without a space
/// after its colon, and an assignment given as a flag's value. What is not secret-looking
/// stays as given (`--port 8080`, `--output=-`, `http://host:8080`).
#[test]
fn a_servers_label_hides_secrets_in_every_form_it_reads() {
    let cases: &[(&[&str], &str)] = &[
        (&["--password", "-Xq9z"], "--password ***"),
        (&["--pass", "hunter2"], "--pass ***"),
        (&["--passphrase", "correct-horse"], "--passphrase ***"),
        (&["X-Api-Key:k-123"], "X-Api-Key:***"),
        (
            &["--header=Authorization: Bearer b-456"],
            "--header=Authorization: ***",
        ),
        (&["GITHUB_PAT=ghp_789"], "GITHUB_PAT=***"),
        (&["--bearer", "b-1"], "--bearer ***"),
        (&["Cookie: sid=c-2"], "Cookie: ***"),
        (&["--session", "s-3"], "--session ***"),
        (&["--port", "8080", "--output=-"], "--port 8080 --output=-"),
        (&["http://host:8080/mcp"], "http://host:8080/mcp"),
    ];
    for (args, shown) in cases {
        let command = McpCommand::new("srv").args(args.iter().copied());
        assert_eq!(command.to_string(), format!("srv {shown}"), "{args:?}");
    }
}

/// A server that answers the handshake and its list, then stops reading its stdin (hung).
fn stops_reading(pid_file: &Path) -> McpCommand {
    script(
        pid_file,
        r#"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      version=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"hung","version":"1"}}}\n' "$id" "$version" ;;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","description":"A tool.","inputSchema":{"type":"object"}}]}}\n' "$id"
      exec sleep 302 ;;
  esac
done
"#,
    )
}

#[tokio::test]
async fn closing_a_server_that_stopped_reading_ends_it() {
    use toolsmith_core::{ToolArguments, ToolImpl};

    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let options = McpClientOptions::default()
        .with_names(McpNames::new())
        .with_connect_timeout(Duration::from_secs(10));
    let client = McpClient::connect_with(McpTransport::child(stops_reading(&pid_file)), options)
        .await
        .unwrap();
    let tool = client.tools().remove(0);
    // More than a pipe holds: the write of this request never ends.
    let mut arguments = ToolArguments::new();
    arguments.insert("text", "x".repeat(1 << 20));
    let call = tokio::time::timeout(Duration::from_millis(500), tool.execute(arguments)).await;
    assert!(call.is_err(), "the hung server answered: {call:?}");
    tokio::time::timeout(Duration::from_secs(20), client.close())
        .await
        .expect("close ends a server that no longer reads");
    assert_nothing_left(&pid_file).await;
}
