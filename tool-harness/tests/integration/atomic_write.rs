//! Writes are atomic: a writer killed in the middle of a large write leaves the old content
//! whole. The writer is this test binary run again as a child process (see `writer_child`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolsmith_harness::{FileSystem, LocalFileSystem};

const CHILD_ROOT: &str = "TOOLSMITH_WRITER_CHILD_ROOT";
const CHILD_FSIZE: &str = "TOOLSMITH_WRITER_CHILD_FSIZE";
const OLD: &[u8] = b"old content, complete\n";
const NEW_LEN: usize = 64 * 1024 * 1024;

/// Not a test of its own: the body of the child process the tests below start and kill. In
/// a normal run (no root given) it returns at once.
#[tokio::test]
async fn writer_child() {
    let Ok(root) = std::env::var(CHILD_ROOT) else {
        return;
    };
    if let Ok(limit) = std::env::var(CHILD_FSIZE) {
        // The kernel kills a process that writes past RLIMIT_FSIZE (SIGXFSZ): a crash at a
        // known point in the middle of the write.
        let limit: u64 = limit.parse().unwrap();
        rustix::process::setrlimit(
            rustix::process::Resource::Fsize,
            rustix::process::Rlimit {
                current: Some(limit),
                maximum: Some(limit),
            },
        )
        .unwrap();
    }
    let fs = LocalFileSystem::new(&root).unwrap();
    let content = vec![b'x'; NEW_LEN];
    fs.write(Path::new("data/target.txt"), content)
        .await
        .unwrap();
    println!("WRITE FINISHED");
}

/// `writer_child`'s name as the test harness knows it: its module path without the crate.
fn writer_child_test_name() -> String {
    let module = module_path!()
        .split_once("::")
        .map_or("", |(_crate, module)| module);
    format!("{module}::writer_child")
}

fn start_writer(root: &Path, fsize_limit: Option<u64>) -> std::process::Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            &writer_child_test_name(),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ROOT, root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(limit) = fsize_limit {
        command.env(CHILD_FSIZE, limit.to_string());
    }
    command.spawn().unwrap()
}

fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    std::fs::create_dir_all(root.join("data")).unwrap();
    std::fs::write(root.join("data/target.txt"), OLD).unwrap();
    (dir, root)
}

fn temporaries(root: &Path) -> Vec<(PathBuf, u64)> {
    std::fs::read_dir(root.join("data"))
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            (name != "target.txt")
                .then(|| (entry.path(), entry.metadata().map(|m| m.len()).unwrap_or(0)))
        })
        .collect()
}

#[test]
fn a_writer_that_dies_midway_leaves_the_old_content() {
    let (_dir, root) = setup();
    let mut child = start_writer(&root, Some(1024 * 1024));
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(
        status.signal(),
        Some(libc::SIGXFSZ),
        "the writer was not stopped midway: {status:?}"
    );
    assert_eq!(std::fs::read(root.join("data/target.txt")).unwrap(), OLD);
    // The partial data went to a temporary file beside the target, never into it.
    let leftovers = temporaries(&root);
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    assert_eq!(leftovers[0].1, 1024 * 1024);
}

#[test]
fn a_writer_killed_during_a_large_write_leaves_the_old_content() {
    let (_dir, root) = setup();
    let mut child = start_writer(&root, None);
    // Kill it as soon as its temporary file has some, but not all, of the data.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut killed_midway = false;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if temporaries(&root)
            .iter()
            .any(|(_, len)| *len > 0 && *len < NEW_LEN as u64)
        {
            child.kill().unwrap();
            killed_midway = true;
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    child.wait().unwrap();
    eprintln!("writer killed midway: {killed_midway}");
    let content = std::fs::read(root.join("data/target.txt")).unwrap();
    if killed_midway {
        assert_eq!(
            content, OLD,
            "the target changed although the writer was killed midway"
        );
    } else {
        // The write finished before it could be caught: then it is whole.
        assert_eq!(content.len(), NEW_LEN);
        assert!(content.iter().all(|&b| b == b'x'));
    }
}

#[tokio::test]
async fn a_finished_write_replaces_the_content_and_leaves_no_temporary() {
    let (_dir, root) = setup();
    let fs = LocalFileSystem::new(&root).unwrap();
    assert!(
        !fs.write(Path::new("data/target.txt"), b"new\n".to_vec())
            .await
            .unwrap()
    );
    assert!(
        fs.write(Path::new("data/deep/er/new.txt"), b"made\n".to_vec())
            .await
            .unwrap()
    );
    assert_eq!(
        std::fs::read(root.join("data/target.txt")).unwrap(),
        b"new\n"
    );
    assert_eq!(
        std::fs::read(root.join("data/deep/er/new.txt")).unwrap(),
        b"made\n"
    );
    assert_eq!(
        temporaries(&root).len(),
        1,
        "only the new directory besides the target"
    );
}

#[tokio::test]
async fn a_write_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_dir, root) = setup();
    let target = root.join("data/target.txt");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o754)).unwrap();
    let fs = LocalFileSystem::new(&root).unwrap();
    fs.write(Path::new("data/target.txt"), b"#!/bin/sh\n".to_vec())
        .await
        .unwrap();
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o754
    );
}
