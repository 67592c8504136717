//! `bash`: exit codes, output caps, time limits that kill the whole process group, and the
//! Landlock policy where the kernel has it.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{call, error, text};
use serde_json::json;
use toolsmith_core::{ToolCallManager, ToolErrorKind};
use toolsmith_harness::tools::BashTool;
use toolsmith_harness::{
    LandlockPolicy, SandboxStatus, ShellConfig, ShellEnvironment, ShellError, ShellRunner,
    ShellSandbox,
};

fn manager(config: ShellConfig) -> ToolCallManager {
    let manager = ToolCallManager::new("shell");
    manager.register(Arc::new(BashTool::new(config))).unwrap();
    manager
}

/// Whether the process is gone (or a zombie waiting to be reaped: it runs no more).
fn is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

async fn wait_dead(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if is_dead(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

async fn read_pid(root: &Path) -> i32 {
    // The pid file is written by the command; give a slow machine a moment.
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(root.join("bg.pid"))
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the command did not write its background pid");
}

#[tokio::test]
async fn runs_in_the_root_and_reports_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(
        text(&m, "bash", json!({"command": "pwd -P"})).await,
        format!("{}\n[exit code: 0]", root.display())
    );
    assert_eq!(
        text(
            &m,
            "bash",
            json!({"command": "echo out; echo err >&2; exit 7"})
        )
        .await,
        "out\nerr\n[exit code: 7]"
    );
    assert_eq!(
        text(&m, "bash", json!({"command": "true"})).await,
        "(no output)\n[exit code: 0]"
    );
    assert_eq!(
        text(&m, "bash", json!({"command": "kill -9 $$"})).await,
        "(no output)\n[killed by signal 9]"
    );
    // Standard input is closed: a command waiting for input ends at once.
    assert_eq!(
        text(&m, "bash", json!({"command": "cat; echo done"})).await,
        "done\n[exit code: 0]"
    );
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    let started = Instant::now();
    let result = call(
        &m,
        "bash",
        json!({"command": "echo starting; sleep 1000 & echo $! > bg.pid; sleep 1000", "timeout_ms": 500}),
    )
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(result.is_error());
    assert_eq!(
        result.content.to_text(),
        "starting\n[timed out after 500 ms: the command and every process it started were killed]"
    );
    let pid = read_pid(dir.path()).await;
    assert!(
        wait_dead(pid).await,
        "the background sleep {pid} survived the timeout"
    );
}

#[tokio::test]
async fn background_processes_do_not_outlive_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    let started = Instant::now();
    // The background sleep holds the output pipe open: the call must still end promptly.
    assert_eq!(
        text(
            &m,
            "bash",
            json!({"command": "sleep 1000 & echo $! > bg.pid; echo started"})
        )
        .await,
        "started\n[exit code: 0]"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let pid = read_pid(dir.path()).await;
    assert!(
        wait_dead(pid).await,
        "the background sleep {pid} survived the call"
    );
}

#[tokio::test]
async fn a_background_job_in_a_group_of_its_own_does_not_outlive_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    // Job control (`set -m`) puts the background job in a process group of its own.
    assert_eq!(
        text(
            &m,
            "bash",
            json!({"command": "set -m; sleep 1000 & echo $! > bg.pid; echo started"})
        )
        .await,
        "started\n[exit code: 0]"
    );
    let pid = read_pid(dir.path()).await;
    let dead = wait_dead(pid).await;
    if !dead {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    assert!(dead, "the background sleep {pid} survived the call");
}

#[tokio::test]
async fn a_call_dropped_by_the_manager_time_limit_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    m.set_timeout("bash", Some(Duration::from_millis(500)))
        .unwrap();
    let err = error(
        &m,
        "bash",
        json!({"command": "sleep 1000 & echo $! > bg.pid; wait"}),
    )
    .await;
    assert_eq!(err.kind(), ToolErrorKind::Timeout);
    let pid = read_pid(dir.path()).await;
    assert!(
        wait_dead(pid).await,
        "the background sleep {pid} survived the dropped call"
    );
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_with_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()).with_output_limit(1000, 1000));
    let shown = text(&m, "bash", json!({"command": "seq 1 100000"})).await;
    let total: usize = (1..=100_000).map(|i: u32| i.to_string().len() + 1).sum();
    let full: String = (1..=100_000).map(|i: u32| format!("{i}\n")).collect();
    let cut = total - 2000;
    let cut_lines = full[1000..total - 1000].matches('\n').count();
    let expected = format!(
        "{}[… {cut} bytes ({cut_lines} line breaks) cut …]\n{}[exit code: 0]",
        &full[..1000],
        &full[total - 1000..]
    );
    // The first 1000 bytes end with a whole line (1-277), so the marker follows directly.
    assert!(full[..1000].ends_with("277\n"));
    assert_eq!(shown, expected);
    assert!(shown.starts_with("1\n2\n3\n"));
    assert!(shown.ends_with("99999\n100000\n[exit code: 0]"));
}

#[tokio::test]
async fn output_is_never_cut_inside_a_character() {
    let dir = tempfile::tempdir().unwrap();
    let runner = ShellRunner::new(ShellConfig::new(dir.path()).with_output_limit(5, 5));
    // 8 bytes: all kept, though "é" lies across the head's end.
    let outcome = runner.run("printf 'abcdé!'", None).await.unwrap();
    assert_eq!(outcome.output, "abcdé!");
    // "€" is 3 bytes: the head ends and the tail starts inside one; those go with the cut.
    let outcome = runner.run("printf 'abcd€€€€wxyz'", None).await.unwrap();
    assert_eq!(
        outcome.output,
        "abcd\n[… 12 bytes (0 line breaks) cut …]\nwxyz"
    );
    assert_eq!(outcome.cut_bytes, 12);
}

#[tokio::test]
async fn arguments_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    for arguments in [
        json!({"command": "touch ran", "timeout_ms": 0}),
        json!({"command": "touch ran", "timeout_ms": 600_001}),
        json!({"command": "touch ran", "cwd": "/"}),
        json!({"timeout_ms": 10}),
    ] {
        let err = error(&m, "bash", arguments.clone()).await;
        assert_eq!(
            err.kind(),
            ToolErrorKind::InvalidArguments,
            "{arguments}: {err}"
        );
    }
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn a_command_with_a_nul_byte_is_refused_as_an_argument() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    let err = error(&m, "bash", json!({"command": "touch ran\u{0}x"})).await;
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'bash': /command: holds a NUL byte (at byte 9), which a \
         command line cannot hold"
    );
    assert!(!dir.path().join("ran").exists());
}

// Pages of 4 KiB, so the limit is known here.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[tokio::test]
async fn a_command_too_long_for_a_command_line_is_refused_as_an_argument() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    // Linux takes at most 32 pages, 131,072 bytes, its NUL included, for one argument.
    let fits = format!("echo {}", "x".repeat(131_071 - 5));
    assert!(
        text(&m, "bash", json!({"command": fits}))
            .await
            .ends_with("[exit code: 0]")
    );
    let long = format!("touch ran; echo {}", "x".repeat(131_072));
    let err = error(&m, "bash", json!({"command": long})).await;
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'bash': /command: is 131088 bytes, more than the 131071 \
         bytes a program's argument may have; write long content to a file with the write \
         tool, or put the commands in a script file and run that"
    );
    assert!(!dir.path().join("ran").exists());
}

#[test]
fn without_a_tokio_runtime_the_call_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    let err =
        futures::executor::block_on(call(&m, "bash", json!({"command": "touch ran"}))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Tool 'bash' failed: running a command needs a Tokio runtime with time and I/O enabled"
    );
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn a_missing_shell_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let runner = ShellRunner::new(ShellConfig::new(dir.path()).with_shell("/nonexistent/bash"));
    let err = runner.run("true", None).await.unwrap_err();
    assert!(matches!(err, ShellError::Spawn { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/bash"), "{err}");
}

fn outside_and_root() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("root");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.txt"), "keep").unwrap();
    (base, root, outside)
}

#[tokio::test]
async fn landlock_confines_writes_to_the_root_where_supported() {
    let (_base, root, outside) = outside_and_root();
    let config =
        ShellConfig::new(&root).with_sandbox(ShellSandbox::Landlock(LandlockPolicy::new()));
    let runner = ShellRunner::new(config.clone());
    if !LandlockPolicy::is_supported() {
        // Without kernel support a required sandbox refuses to run anything.
        assert!(matches!(
            runner.sandbox_status(),
            SandboxStatus::Unavailable(_)
        ));
        let err = runner.run("touch ran", None).await.unwrap_err();
        assert!(matches!(err, ShellError::SandboxUnavailable(_)), "{err}");
        assert!(!root.join("ran").exists());
        eprintln!("Landlock is not supported by this kernel: only the refusal was tested");
        return;
    }
    assert_eq!(runner.sandbox_status(), SandboxStatus::Confined);
    let m = manager(config);
    let command = format!(
        "echo inside > in.txt && mkdir -p sub && echo deeper > sub/f.txt && cat /etc/passwd >/dev/null && echo ok; \
         echo pwned > {out}/new.txt; echo pwned >> {out}/keep.txt; rm -f {out}/keep.txt; mkdir {out}/d; \
         ln -s /etc {out}/l; mv in.txt {out}/moved.txt; true",
        out = outside.display()
    );
    let shown = text(&m, "bash", json!({"command": command})).await;
    assert!(shown.starts_with("ok\n"), "{shown}");
    assert!(shown.contains("Permission denied"), "{shown}");
    assert_eq!(
        std::fs::read_to_string(root.join("in.txt")).unwrap(),
        "inside\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("sub/f.txt")).unwrap(),
        "deeper\n"
    );
    let mut names: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["keep.txt"], "{shown}");
    assert_eq!(
        std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
        "keep"
    );
}

#[tokio::test]
async fn landlock_allows_the_paths_added_to_the_policy() {
    if !LandlockPolicy::is_supported() {
        eprintln!("Landlock is not supported by this kernel: nothing to test");
        return;
    }
    let (_base, root, outside) = outside_and_root();
    let policy = LandlockPolicy::new().allow_writes_beneath(&outside);
    let runner =
        ShellRunner::new(ShellConfig::new(&root).with_sandbox(ShellSandbox::Landlock(policy)));
    let outcome = runner
        .run(
            &format!("echo allowed > {}/new.txt", outside.display()),
            None,
        )
        .await
        .unwrap();
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.output);
    assert_eq!(
        std::fs::read_to_string(outside.join("new.txt")).unwrap(),
        "allowed\n"
    );
}

#[tokio::test]
async fn without_a_sandbox_writes_outside_are_possible() {
    // The control for the Landlock tests: the same write, unconfined, goes through.
    let (_base, root, outside) = outside_and_root();
    let runner = ShellRunner::new(ShellConfig::new(&root).with_sandbox(ShellSandbox::None));
    assert!(matches!(
        runner.sandbox_status(),
        SandboxStatus::NotSandboxed(_)
    ));
    let outcome = runner
        .run(
            &format!("echo unconfined > {}/new.txt", outside.display()),
            None,
        )
        .await
        .unwrap();
    assert_eq!(outcome.exit_code, Some(0));
    assert!(outside.join("new.txt").exists());
}

#[test]
fn the_timeout_bounds_are_in_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let m = manager(ShellConfig::new(dir.path()));
    let Some(toolsmith_core::Tool::SingleCommand(def)) = m.get_def("bash") else {
        panic!("bash")
    };
    let timeout = &def.arguments.schema()["properties"]["timeout_ms"];
    assert_eq!(timeout["minimum"], 1, "{timeout}");
    assert_eq!(timeout["maximum"], 600_000, "{timeout}");
    assert!(
        timeout["description"]
            .as_str()
            .unwrap()
            .starts_with("The time limit in milliseconds"),
        "{timeout}"
    );
}

/// The names among `vars` that a shell passes on to its commands as they are: valid names,
/// other than those the shell sets itself and the sandbox's TMPDIR.
fn names_of(
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> impl Iterator<Item = String> {
    vars.filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| {
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        })
        .filter(|name| !SHELL_SET.contains(&name.as_str()))
}

/// Variables the shell sets itself (and the sandbox the command's TMPDIR).
const SHELL_SET: [&str; 5] = ["PWD", "SHLVL", "_", "OLDPWD", "TMPDIR"];

#[tokio::test]
async fn a_command_gets_only_the_environment_the_config_passes() {
    let dir = tempfile::tempdir().unwrap();
    let names = |output: String| -> Vec<String> {
        let mut names: Vec<String> = output
            .lines()
            .filter_map(|line| line.split_once('=').map(|(name, _)| name.to_owned()))
            .filter(|name| !SHELL_SET.contains(&name.as_str()))
            .collect();
        names.sort();
        names
    };
    let only = ShellConfig::new(dir.path())
        .with_environment(ShellEnvironment::Only(vec!["PATH".into(), "HOME".into()]));
    let passed = text(&manager(only), "bash", json!({"command": "env"})).await;
    assert_eq!(names(passed), ["HOME", "PATH"]);

    // By default, everything but what names a credential: each of the process's own
    // variables that passes reaches the command. (Read from the process, not named: a test
    // binary run without cargo has no CARGO_PKG_NAME.)
    let default = text(
        &manager(ShellConfig::new(dir.path())),
        "bash",
        json!({"command": "env"}),
    )
    .await;
    let names = names(default);
    let own: Vec<String> = names_of(std::env::vars_os())
        .filter(|name| ShellEnvironment::WithoutSecrets.passes(name))
        .collect();
    assert!(own.iter().any(|name| name == "PATH"), "{own:?}");
    let missing: Vec<&String> = own.iter().filter(|name| !names.contains(name)).collect();
    assert!(missing.is_empty(), "{missing:?} did not reach {names:?}");
    assert!(
        names
            .iter()
            .all(|name| ShellEnvironment::WithoutSecrets.passes(name)),
        "{names:?}"
    );
}

#[tokio::test]
async fn a_confined_command_has_a_temporary_directory_of_its_own() {
    if !LandlockPolicy::is_supported() {
        eprintln!("Landlock is not supported by this kernel: nothing to test");
        return;
    }
    let (_base, root, outside) = outside_and_root();
    let config =
        ShellConfig::new(&root).with_sandbox(ShellSandbox::Landlock(LandlockPolicy::new()));
    let runner = ShellRunner::new(config);
    // A here-document too large for a pipe goes through a temporary file; `mktemp` and
    // `sort` need one too. The system's `/tmp` stays closed.
    let command = format!(
        "head -c 300000 /dev/zero | tr '\\0' 'a' > big; \
         cat > copy <<EOF\n$(cat big)\nEOF\n\
         t=$(mktemp) && echo made > \"$t\" && cat \"$t\" && echo \"$TMPDIR\" > tmpdir; \
         echo no > {}/escaped.txt",
        outside.display()
    );
    let outcome = runner.run(&command, None).await.unwrap();
    assert!(outcome.output.contains("made"), "{}", outcome.output);
    assert!(
        outcome.output.contains("Permission denied"),
        "{}",
        outcome.output
    );
    assert_eq!(std::fs::metadata(root.join("copy")).unwrap().len(), 300_001);
    assert!(!outside.join("escaped.txt").exists());
    // The directory went with the command.
    let tmpdir = std::fs::read_to_string(root.join("tmpdir")).unwrap();
    assert!(tmpdir.trim().contains("toolsmith-bash-"), "{tmpdir}");
    assert!(!Path::new(tmpdir.trim()).exists());
}

#[tokio::test]
async fn a_command_has_a_temporary_directory_of_its_own_exactly_when_the_status_says_confined() {
    // The status and the runner read the sandbox setting in one place: whatever this kernel
    // supports, they agree for every setting.
    let dir = tempfile::tempdir().unwrap();
    let inherited = std::env::var("TMPDIR").unwrap_or_default();
    for sandbox in [
        ShellSandbox::None,
        ShellSandbox::Landlock(LandlockPolicy::new()),
        ShellSandbox::LandlockIfSupported(LandlockPolicy::new()),
    ] {
        let runner = ShellRunner::new(ShellConfig::new(dir.path()).with_sandbox(sandbox.clone()));
        let status = runner.sandbox_status();
        match runner.run("printf %s \"$TMPDIR\"", None).await {
            Err(ShellError::SandboxUnavailable(reason)) => {
                assert!(
                    matches!(&status, SandboxStatus::Unavailable(_)),
                    "{sandbox:?}: refused ({reason}) but reported {status:?}"
                );
            }
            Err(err) => panic!("{sandbox:?}: {err}"),
            Ok(outcome) => match status {
                SandboxStatus::Confined | SandboxStatus::PartlyConfined(_) => {
                    assert!(
                        outcome.output.contains("toolsmith-bash-"),
                        "{sandbox:?}: {:?}",
                        outcome.output
                    );
                }
                SandboxStatus::NotSandboxed(_) => {
                    assert_eq!(outcome.output, inherited, "{sandbox:?}")
                }
                SandboxStatus::Unavailable(reason) => {
                    panic!("{sandbox:?}: ran though reported unavailable ({reason})")
                }
            },
        }
    }
}
