//! The sandbox as a security boundary: attempts to read, write or edit outside the root of a
//! `LocalFileSystem`, each refused with an error that names the path, and nothing outside
//! the root read or written.

use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use toolsmith_core::ToolCallManager;
use toolsmith_harness::{FileSystem, FsError, LocalFileSystem, SearchQuery, ToolPreset};

const SECRET: &str = "SECRET-OUTSIDE-THE-ROOT";

struct Fixture {
    _base: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let base_dir = tempfile::tempdir().unwrap();
        let base = base_dir.path().canonicalize().unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
        std::fs::write(root.join("inside.txt"), "inside\n").unwrap();
        let link = |target: &str, name: &str| symlink(target, root.join(name)).unwrap();
        link(outside.join("secret.txt").to_str().unwrap(), "abs_link");
        link("../outside/secret.txt", "rel_link");
        link("chain2", "chain1");
        link("chain3", "chain2");
        link("../outside/secret.txt", "chain3");
        link(outside.to_str().unwrap(), "dir_link");
        link("../outside", "rel_dir_link");
        link("../outside/new.txt", "dangling_out");
        link("loop2", "loop1");
        link("loop1", "loop2");
        link("self_loop", "self_loop");
        link("/proc/self/root", "proc_root");
        link("/", "root_link");
        link("../../outside/secret.txt", "a/deep_link");
        link("../a/../../outside", "a/sneaky");
        link("b/../../rel_link", "a/via_inner_link");
        Self {
            _base: base_dir,
            base,
            root,
            outside,
        }
    }

    /// Everything below the base directory except the root: what must never change.
    fn outside_listing(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut listing = Vec::new();
        let mut stack = vec![self.base.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path == self.root {
                    continue;
                }
                let meta = std::fs::symlink_metadata(&path).unwrap();
                if meta.is_dir() {
                    stack.push(path.clone());
                    listing.push((path, Vec::new()));
                } else {
                    listing.push((path.clone(), std::fs::read(&path).unwrap()));
                }
            }
        }
        listing.sort();
        listing
    }
}

/// The escape attempts: (what it tries, the path).
fn attempts(fx: &Fixture) -> Vec<(&'static str, PathBuf)> {
    let outside = fx.outside.to_str().unwrap();
    let root = fx.root.to_str().unwrap();
    vec![
        ("'..' to a sibling", "../outside/secret.txt".into()),
        ("'..' to /etc", "../../../../../../etc/passwd".into()),
        (
            "'..' after a directory",
            "a/../../outside/secret.txt".into(),
        ),
        ("'..' deep", "a/b/../../../outside/secret.txt".into()),
        ("plain '..'", "..".into()),
        ("absolute system path", "/etc/passwd".into()),
        (
            "absolute path outside",
            format!("{outside}/secret.txt").into(),
        ),
        (
            "absolute root then '..'",
            format!("{root}/../outside/secret.txt").into(),
        ),
        (
            "absolute through /proc",
            format!("/proc/self/root{outside}/secret.txt").into(),
        ),
        ("absolute symlink to a file", "abs_link".into()),
        ("relative symlink climbing out", "rel_link".into()),
        ("chain of symlinks", "chain1".into()),
        ("absolute directory symlink", "dir_link/secret.txt".into()),
        (
            "relative directory symlink",
            "rel_dir_link/secret.txt".into(),
        ),
        (
            "new file below a directory symlink",
            "dir_link/made/new.txt".into(),
        ),
        ("dangling symlink pointing out", "dangling_out".into()),
        ("symlink loop", "loop1".into()),
        ("self-referencing symlink", "self_loop".into()),
        ("symlink to /proc/self/root", "proc_root/etc/passwd".into()),
        ("symlink to /", "root_link/etc/passwd".into()),
        ("nested symlink climbing out", "a/deep_link".into()),
        (
            "symlink with '..' inside its target",
            "a/sneaky/secret.txt".into(),
        ),
        ("symlink via an inner symlink", "a/via_inner_link".into()),
        ("NUL byte", "inside.txt\0../../outside/secret.txt".into()),
        ("very long name", "n".repeat(300).into()),
        ("very long path", "a/".repeat(2100).into()),
        (
            "non-UTF-8 name",
            PathBuf::from(std::ffi::OsStr::from_bytes(b"../\xff\xfe/outside")),
        ),
    ]
}

fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn every_escape_is_refused_at_the_file_system_and_names_the_path() {
    let fx = Fixture::new();
    let before = fx.outside_listing();
    let fs = LocalFileSystem::new(&fx.root).unwrap();
    let attempts = attempts(&fx);
    assert!(attempts.len() >= 20);
    for (what, path) in &attempts {
        let read = fs.read(path).await;
        let write = fs.write(path, b"PWNED".to_vec()).await;
        let search = fs
            .search(SearchQuery::new("SECRET").in_path(path.clone()))
            .await;
        for (op, outcome) in [
            (
                "read",
                read.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
            ),
            ("write", write.map(|created| created.to_string())),
            (
                "search",
                search
                    .map(|report| format!("{report:?}"))
                    .map_err(|err| match err {
                        toolsmith_harness::SearchError::Fs(err) => err,
                        other => panic!("{what}: {other}"),
                    }),
            ),
        ] {
            let err = match outcome {
                Ok(value) => panic!("{what} ({}): {op} was allowed: {value}", shown(path)),
                Err(err) => err,
            };
            assert_eq!(err.path(), shown(path), "{what}: {op}: {err}");
            assert!(
                err.to_string().contains(&format!("{:?}", shown(path))),
                "{what}: {op}: the message does not name the path: {err}"
            );
            // Refused as an escape or an invalid name, never because the target was missing
            // or unreadable, which would mean the lookup went outside.
            assert!(
                matches!(
                    err,
                    FsError::OutsideRoot { .. }
                        | FsError::InvalidPath { .. }
                        | FsError::SymlinkLoop { .. }
                ),
                "{what}: {op}: refused for the wrong reason: {err}"
            );
        }
    }
    assert_eq!(
        fx.outside_listing(),
        before,
        "something outside the root changed"
    );
}

#[tokio::test]
async fn every_escape_is_refused_by_the_tools() {
    let fx = Fixture::new();
    let before = fx.outside_listing();
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(&fx.root).unwrap());
    let manager = (ToolPreset::files(Arc::clone(&fs)) + ToolPreset::file_search(fs))
        .into_manager("escape")
        .unwrap();
    for (what, path) in attempts(&fx) {
        // JSON strings are UTF-8: the tools never see the non-UTF-8 attempt as such.
        let Some(text) = path.to_str() else { continue };
        for (tool, arguments) in [
            ("read", json!({"path": text})),
            ("write", json!({"path": text, "content": "PWNED"})),
            (
                "edit",
                json!({"path": text, "old_string": SECRET, "new_string": "PWNED"}),
            ),
            ("search_file", json!({"pattern": "SECRET", "path": text})),
        ] {
            let err = crate::common::error(&manager, tool, arguments).await;
            let message = err.to_string();
            assert!(
                message.contains(&format!("{text:?}")),
                "{what}: {tool}: the message does not name the path: {message}"
            );
            assert!(
                !message.contains(SECRET),
                "{what}: {tool} leaked: {message}"
            );
        }
    }
    assert_eq!(
        fx.outside_listing(),
        before,
        "something outside the root changed"
    );
}

#[tokio::test]
async fn searching_the_whole_root_does_not_follow_links_out() {
    let fx = Fixture::new();
    let fs = LocalFileSystem::new(&fx.root).unwrap();
    let report = fs.search(SearchQuery::new("SECRET|inside")).await.unwrap();
    let paths: Vec<&str> = report.matches.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["inside.txt"], "{report:?}");
}

#[tokio::test]
async fn links_that_stay_inside_work() {
    let fx = Fixture::new();
    symlink("inside.txt", fx.root.join("good_link")).unwrap();
    symlink("../inside.txt", fx.root.join("a/up_link")).unwrap();
    let fs = LocalFileSystem::new(&fx.root).unwrap();
    assert_eq!(fs.read(Path::new("good_link")).await.unwrap(), b"inside\n");
    assert_eq!(fs.read(Path::new("a/up_link")).await.unwrap(), b"inside\n");
    // A write through a link inside the root lands on its target, and the link stays.
    fs.write(Path::new("good_link"), b"changed\n".to_vec())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read(fx.root.join("inside.txt")).unwrap(),
        b"changed\n"
    );
    assert!(
        std::fs::symlink_metadata(fx.root.join("good_link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // An absolute path inside the root is accepted.
    let absolute = fx.root.join("inside.txt");
    assert_eq!(fs.read(&absolute).await.unwrap(), b"changed\n");
}

#[tokio::test]
async fn a_write_through_a_hard_link_does_not_change_the_file_outside() {
    // A hard link inside the root to a file outside is the same file: reading it reads the
    // outside file (see the README), but writes replace the link by a new file.
    let fx = Fixture::new();
    std::fs::hard_link(fx.outside.join("secret.txt"), fx.root.join("hard.txt")).unwrap();
    let fs = LocalFileSystem::new(&fx.root).unwrap();
    fs.write(Path::new("hard.txt"), b"new\n".to_vec())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        SECRET
    );
    assert_eq!(std::fs::read(fx.root.join("hard.txt")).unwrap(), b"new\n");
}

#[tokio::test]
async fn special_files_are_refused_without_blocking() {
    let fx = Fixture::new();
    let fifo = fx.root.join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let fs = LocalFileSystem::new(&fx.root).unwrap();
    let err = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        fs.read(Path::new("pipe")),
    )
    .await
    .expect("reading a FIFO must not block")
    .unwrap_err();
    assert!(matches!(err, FsError::NotARegularFile { .. }), "{err}");
    assert!(err.to_string().contains("a FIFO"), "{err}");
}

#[tokio::test]
async fn refusals_through_the_manager_name_the_tool() {
    let fx = Fixture::new();
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(&fx.root).unwrap());
    let manager = ToolCallManager::new("s");
    toolsmith_harness::register_file_tools(&manager, fs).unwrap();
    let err =
        crate::common::error(&manager, "read", json!({"path": "../outside/secret.txt"})).await;
    assert_eq!(
        err.to_string(),
        "Tool 'read' failed: refused \"../outside/secret.txt\": it is outside the root ('..' leads above the root)"
    );
}

#[tokio::test]
async fn the_in_memory_file_system_refuses_the_same_paths() {
    let fs = toolsmith_harness::InMemoryFileSystem::new().with_file("inside.txt", "inside\n");
    let long_name = "n".repeat(300);
    let long_path = "a/".repeat(2100);
    let attempts: Vec<PathBuf> = vec![
        "../x".into(),
        "a/../../x".into(),
        "..".into(),
        "/etc/passwd".into(),
        "inside.txt\0../x".into(),
        long_name.into(),
        long_path.into(),
        PathBuf::from(std::ffi::OsStr::from_bytes(b"bad\xffname")),
    ];
    for path in attempts {
        for err in [
            fs.read(&path).await.unwrap_err(),
            fs.write(&path, b"PWNED".to_vec()).await.unwrap_err(),
        ] {
            assert_eq!(err.path(), shown(&path), "{err}");
            assert!(
                matches!(
                    err,
                    FsError::OutsideRoot { .. } | FsError::InvalidPath { .. }
                ),
                "{err}"
            );
        }
    }
    assert_eq!(fs.files(), [PathBuf::from("inside.txt")]);
}

#[tokio::test]
async fn a_socket_is_refused_as_not_a_regular_file() {
    // Opening a socket fails (ENXIO, "No such device or address"): that was the message, an
    // I/O failure, where the kind is what is wrong.
    let fx = Fixture::new();
    let _listener = std::os::unix::net::UnixListener::bind(fx.root.join("sock")).unwrap();
    symlink("sock", fx.root.join("sock_link")).unwrap();
    let fs = LocalFileSystem::new(&fx.root).unwrap();
    for path in ["sock", "sock_link"] {
        let err = fs.read(Path::new(path)).await.unwrap_err();
        assert!(
            matches!(&err, FsError::NotARegularFile { kind, .. } if kind == "a socket"),
            "{path}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("refused {path:?}: it is not a regular file (a socket)")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_swapped_in_for_a_file_during_a_search_does_not_stall_it() {
    // The walk tells a file from a FIFO when it lists the directory; another process can
    // swap one for the other before the file is opened. A FIFO opened to be searched waited
    // for a writer that never came: the search never ended.
    let fx = Fixture::new();
    let dir = fx.root.join("many");
    std::fs::create_dir_all(dir.join(".keep")).unwrap();
    for i in 0..500 {
        std::fs::write(dir.join(format!("f{i:03}.txt")), "text\n").unwrap();
    }
    // The FIFO lives on under a hidden name (not searched), so that a search stuck opening
    // it can be released.
    let fifo = dir.join(".keep/fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, dir, fifo) = (Arc::clone(&stop), dir.clone(), fifo.clone());
        std::thread::spawn(move || {
            let swapped = dir.join("f250.txt");
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::remove_file(dir.join(".to_fifo"));
                std::fs::hard_link(&fifo, dir.join(".to_fifo")).unwrap();
                std::fs::rename(dir.join(".to_fifo"), &swapped).unwrap();
                std::fs::write(dir.join(".to_file"), "text\n").unwrap();
                std::fs::rename(dir.join(".to_file"), &swapped).unwrap();
            }
        })
    };
    let fs = LocalFileSystem::new(&fx.root).unwrap();
    let mut stalled = false;
    for _ in 0..200 {
        let search = fs.search(SearchQuery::new("never-there").in_path("many"));
        if tokio::time::timeout(std::time::Duration::from_secs(10), search)
            .await
            .is_err()
        {
            stalled = true;
            break;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    // Release whatever is stuck opening the FIFO, so that the runtime can shut down.
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo);
    drop(writer);
    assert!(!stalled, "a search stalled opening a FIFO");
}
