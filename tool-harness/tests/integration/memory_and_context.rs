//! `memory` over both stores (versions, persistence across a reopen, atomic files) and
//! `search_context` over a session's `ContextSearch`.

use std::sync::Arc;

use crate::common::{error, text};
use async_trait::async_trait;
use serde_json::json;
use toolsmith_core::{
    ContextHit, ContextSearch, MemoryAccess, MemoryFact, ServiceError, Tool, ToolCallManager,
    ToolErrorKind, Versioned,
};
use toolsmith_harness::tools::{MAX_FACT_BYTES, MemoryTool, SearchContextTool};
use toolsmith_harness::{FileMemory, InMemoryMemory};

fn manager(memory: Arc<dyn MemoryAccess>) -> ToolCallManager {
    let manager = ToolCallManager::new("memory");
    manager.register(Arc::new(MemoryTool::new(memory))).unwrap();
    manager
}

/// The texts of the facts `memory` holds, in order.
async fn fact_texts(memory: &FileMemory) -> Vec<String> {
    let facts = memory.facts().await.unwrap();
    facts.into_iter().map(|fact| fact.text).collect()
}

#[tokio::test]
async fn memory_commands_bump_the_version_and_report_errors() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<(&str, Arc<dyn MemoryAccess>)> = vec![
        ("in-memory", Arc::new(InMemoryMemory::new())),
        (
            "file",
            Arc::new(FileMemory::open(dir.path().join("m.json")).unwrap()),
        ),
    ];
    for (kind, memory) in stores {
        let m = manager(Arc::clone(&memory));
        assert_eq!(
            text(&m, "memory", json!({"command": "add", "text": "uses tabs"})).await,
            "Remembered fact 1 (memory version 1)",
            "{kind}"
        );
        assert_eq!(
            text(
                &m,
                "memory",
                json!({"command": "add", "text": "deploys on Friday"})
            )
            .await,
            "Remembered fact 2 (memory version 2)"
        );
        assert_eq!(
            text(
                &m,
                "memory",
                json!({"command": "replace", "id": "1", "text": "uses spaces"})
            )
            .await,
            "Replaced fact 1 (memory version 3)"
        );
        // What was remembered can be read back (else a model writes facts it never sees).
        assert_eq!(
            text(&m, "memory", json!({"command": "list"})).await,
            "2 facts (memory version 3):\n1: uses spaces\n2: deploys on Friday",
            "{kind}"
        );
        assert_eq!(
            text(&m, "memory", json!({"command": "remove", "id": 2})).await,
            "Forgot fact 2 (memory version 4)"
        );
        let err = error(&m, "memory", json!({"command": "remove", "id": 2})).await;
        assert_eq!(
            err.to_string(),
            "Tool 'memory' failed: there is no fact with id 2 (known ids: 1)",
            "{kind}"
        );
        let err = error(
            &m,
            "memory",
            json!({"command": "replace", "id": 9, "text": "x"}),
        )
        .await;
        assert!(
            err.to_string().contains("no fact with id 9"),
            "{kind}: {err}"
        );
        assert_eq!(memory.version(), 4, "{kind}: failed writes are no versions");
        let facts = memory.facts().await.unwrap();
        assert_eq!(facts.len(), 1);
        assert_eq!((facts[0].id, facts[0].text.as_str()), (1, "uses spaces"));

        for bad in [
            json!({"command": "forget"}),
            json!({"command": "add"}),
            json!({"command": "remove", "id": "two"}),
            json!({"text": "no command"}),
        ] {
            let err = error(&m, "memory", bad.clone()).await;
            assert_eq!(
                err.kind(),
                ToolErrorKind::InvalidArguments,
                "{kind} {bad}: {err}"
            );
        }
        // A fact of nothing visible (spaces, zero-width characters) is no fact: refused, and
        // no version made.
        for bad in [
            json!({"command": "add", "text": " \n"}),
            json!({"command": "add", "text": "\u{200B}\u{FEFF}"}),
            json!({"command": "replace", "id": 1, "text": "\u{2060}"}),
        ] {
            let err = error(&m, "memory", bad.clone()).await;
            assert_eq!(
                err.kind(),
                ToolErrorKind::InvalidArguments,
                "{kind} {bad}: {err}"
            );
            assert!(
                err.to_string().contains("/text: the fact is empty"),
                "{kind} {bad}: {err}"
            );
        }
        assert_eq!(memory.version(), 4, "{kind}: a refused fact is no version");
    }
}

/// A fact longer than `list` can show whole is refused, naming its length and the limit:
/// any length was kept, and a fact `list` cuts is one the model can never read back.
#[tokio::test]
async fn a_fact_longer_than_a_fact_may_be_is_refused_naming_the_limit() {
    let memory: Arc<dyn MemoryAccess> = Arc::new(InMemoryMemory::new());
    let m = manager(Arc::clone(&memory));
    let longest = "é".repeat(MAX_FACT_BYTES / 2);
    assert_eq!(
        text(&m, "memory", json!({"command": "add", "text": longest})).await,
        "Remembered fact 1 (memory version 1)"
    );
    let too_long = format!("{longest}x");
    for bad in [
        json!({"command": "add", "text": too_long}),
        json!({"command": "replace", "id": 1, "text": too_long}),
    ] {
        let err = error(&m, "memory", bad).await;
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
        assert!(
            err.to_string().contains(&format!(
                "/text: the fact is {} bytes, more than the {MAX_FACT_BYTES} a fact may hold",
                MAX_FACT_BYTES + 1
            )),
            "{err}"
        );
    }
    assert_eq!(memory.version(), 1, "a refused fact is no version");
    assert_eq!(memory.facts().await.unwrap()[0].text, longest);
    // The longest fact is listed whole.
    let listed = text(&m, "memory", json!({"command": "list"})).await;
    assert_eq!(listed, format!("1 fact (memory version 1):\n1: {longest}"));
    // The schema tells the model the limit.
    let tool = MemoryTool::new(memory);
    let spec = toolsmith_core::ToolImpl::definition(&tool).function_spec();
    let described = spec.parameters["properties"]["text"]["description"].to_string();
    assert_eq!(
        described
            .matches(&format!("(at most {MAX_FACT_BYTES} bytes)"))
            .count(),
        2,
        "{described}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_adds_each_report_the_version_they_made() {
    const ADDS: u64 = 48;
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<(&str, Arc<dyn MemoryAccess>)> = vec![
        ("in-memory", Arc::new(InMemoryMemory::new())),
        (
            "file",
            Arc::new(FileMemory::open(dir.path().join("m.json")).unwrap()),
        ),
    ];
    for (kind, memory) in stores {
        let m = Arc::new(manager(memory));
        let adds: Vec<_> = (0..ADDS)
            .map(|n| {
                let m = Arc::clone(&m);
                tokio::spawn(async move {
                    text(
                        &m,
                        "memory",
                        json!({"command": "add", "text": format!("fact {n}")}),
                    )
                    .await
                })
            })
            .collect();
        let mut ids = Vec::new();
        let mut versions = Vec::new();
        for add in adds {
            let shown = add.await.unwrap();
            let (id, version) = shown
                .strip_prefix("Remembered fact ")
                .and_then(|rest| rest.strip_suffix(')'))
                .and_then(|rest| rest.split_once(" (memory version "))
                .unwrap_or_else(|| panic!("{kind}: {shown}"));
            ids.push(id.parse::<u64>().unwrap());
            versions.push(version.parse::<u64>().unwrap());
        }
        ids.sort_unstable();
        versions.sort_unstable();
        let each: Vec<u64> = (1..=ADDS).collect();
        assert_eq!(ids, each, "{kind}");
        // Each add reports the version it made, not one a later add made meanwhile.
        assert_eq!(versions, each, "{kind}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_file_memory_writes_reach_the_file_once_each_in_version_order() {
    const TASKS: u64 = 16;
    const EACH: u64 = 6;
    const ALL: u64 = TASKS * EACH;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    let memory = FileMemory::open(&path).unwrap();
    let writers: Vec<_> = (0..TASKS)
        .map(|task| {
            let memory = memory.clone();
            tokio::spawn(async move {
                let mut made = Vec::new();
                for n in 0..EACH {
                    let added = memory.add(format!("task {task} fact {n}")).await.unwrap();
                    made.push((added.value, added.version));
                }
                made
            })
        })
        .collect();
    // A reader meanwhile: the version only grows, and a read never shows a fact a version
    // read after it does not count (only adds here: one fact a version).
    let writing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let reader = tokio::spawn({
        let memory = memory.clone();
        let writing = Arc::clone(&writing);
        async move {
            let mut last = 0;
            while writing.load(std::sync::atomic::Ordering::Acquire) {
                let facts = memory.facts().await.unwrap();
                let version = memory.version();
                assert!(version >= last, "the version went from {last} to {version}");
                assert!(
                    facts.len() as u64 <= version,
                    "{} facts at {version}",
                    facts.len()
                );
                last = version;
                tokio::task::yield_now().await;
            }
        }
    });
    let mut made = std::collections::HashMap::new();
    for writer in writers {
        for (fact, version) in writer.await.unwrap() {
            assert!(made.insert(fact.id, (fact.text, version)).is_none());
        }
    }
    writing.store(false, std::sync::atomic::Ordering::Release);
    reader.await.unwrap();
    assert_eq!(memory.version(), ALL);
    drop(memory);

    let reopened = FileMemory::open(&path).unwrap();
    assert_eq!(reopened.version(), ALL);
    let in_file = reopened.facts().await.unwrap();
    // Every fact added is in the file once, as its add returned it.
    let mut texts: Vec<&str> = in_file.iter().map(|fact| fact.text.as_str()).collect();
    texts.sort_unstable();
    let mut expected: Vec<String> = (0..TASKS)
        .flat_map(|task| (0..EACH).map(move |n| format!("task {task} fact {n}")))
        .collect();
    expected.sort_unstable();
    assert_eq!(texts, expected);
    for fact in &in_file {
        assert_eq!(made[&fact.id].0, fact.text, "fact {}", fact.id);
    }
    // The file holds the facts in the order their adds' versions say, one version each.
    let versions: Vec<u64> = in_file.iter().map(|fact| made[&fact.id].1).collect();
    assert_eq!(versions, (1..=ALL).collect::<Vec<_>>());
}

#[tokio::test]
async fn an_unknown_id_lists_the_first_known_ids_only() {
    let memory: Arc<dyn MemoryAccess> = Arc::new(InMemoryMemory::new());
    for n in 0..500 {
        memory.add(format!("fact {n}")).await.unwrap();
    }
    let m = manager(memory);
    let err = error(&m, "memory", json!({"command": "remove", "id": 9999})).await;
    let listed: Vec<String> = (1..=20).map(|id| id.to_string()).collect();
    assert_eq!(
        err.to_string(),
        format!(
            "Tool 'memory' failed: there is no fact with id 9999 (known ids: {}, … (500 facts in all))",
            listed.join(", ")
        )
    );
}

#[tokio::test]
async fn file_memory_survives_a_reopen_and_writes_whole_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/memory.json");
    {
        let memory = FileMemory::open(&path).unwrap();
        assert!(!path.exists(), "nothing is written before the first write");
        memory.add("one".into()).await.unwrap();
        memory.add("two".into()).await.unwrap();
        let removed = memory.remove(2).await.unwrap();
        assert_eq!((removed.value, removed.version), (true, 3));
        // Every write leaves a complete file, and no temporary beside it (only the lock).
        let on_disk: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(on_disk["version"], 3);
        let mut names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["memory.json", "memory.json.lock"]);
    }
    let reopened = FileMemory::open(&path).unwrap();
    assert_eq!(reopened.version(), 3);
    let facts = reopened.facts().await.unwrap();
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0].text, "one");
    // Ids are never reused, across reopens too.
    let added = reopened.add("three".into()).await.unwrap();
    assert_eq!((added.value.id, added.version), (3, 4));
    assert_eq!(reopened.version(), 4);
}

/// An empty file (`touch memory.json`) is a memory with no facts yet, as a missing one is,
/// and its first write makes it one.
#[tokio::test]
async fn file_memory_takes_an_empty_file_as_a_memory_with_no_facts() {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in [("empty.json", ""), ("blank.json", " \n")] {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        let memory = FileMemory::open(&path).unwrap();
        assert!(memory.facts().await.unwrap().is_empty());
        assert_eq!(memory.version(), 0);
        memory.add("first".into()).await.unwrap();
        drop(memory);
        let reopened = FileMemory::open(&path).unwrap();
        let facts = reopened.facts().await.unwrap();
        assert_eq!((facts.len(), facts[0].id, reopened.version()), (1, 1, 1));
    }
}

/// `list` on an empty memory says so; a memory too long to show whole is listed up to the
/// bound, saying how many facts are not shown.
#[tokio::test]
async fn memory_lists_an_empty_memory_and_cuts_a_long_one() {
    let memory: Arc<dyn MemoryAccess> = Arc::new(InMemoryMemory::new());
    let m = manager(Arc::clone(&memory));
    assert_eq!(
        text(&m, "memory", json!({"command": "list"})).await,
        "The memory is empty (memory version 0)"
    );
    for i in 0..100 {
        memory
            .add(format!("{i:03} {}", "x".repeat(500)))
            .await
            .unwrap();
    }
    let listed = text(&m, "memory", json!({"command": "list"})).await;
    assert!(
        listed.starts_with("100 facts (memory version 100):\n1: 000 x"),
        "{}",
        &listed[..80]
    );
    assert!(listed.len() < 17 * 1024, "{}", listed.len());
    let shown = listed.lines().filter(|line| line.contains(" xxx")).count();
    assert!(
        listed.ends_with(&format!(
            "… and {} more facts not shown (the list stops at 16384 bytes; remove facts no longer needed)",
            100 - shown
        )),
        "{}",
        &listed[listed.len() - 120..]
    );
}

/// A memory whose first `facts()` lets a parallel write land right after the facts were
/// read (as another session's `add` can), and whose version reads count it.
struct WrittenWhileRead {
    inner: InMemoryMemory,
    writes_left: std::sync::atomic::AtomicUsize,
}

#[async_trait]
impl MemoryAccess for WrittenWhileRead {
    async fn facts(&self) -> Result<Vec<MemoryFact>, ServiceError> {
        let facts = self.inner.facts().await?;
        let write = self.writes_left.fetch_update(
            std::sync::atomic::Ordering::AcqRel,
            std::sync::atomic::Ordering::Acquire,
            |left| left.checked_sub(1),
        );
        if write.is_ok() {
            self.inner.add("written in between".into()).await?;
        }
        Ok(facts)
    }
    async fn add(&self, text: String) -> Result<Versioned<MemoryFact>, ServiceError> {
        self.inner.add(text).await
    }
    async fn remove(&self, id: u64) -> Result<Versioned<bool>, ServiceError> {
        self.inner.remove(id).await
    }
    async fn replace(&self, id: u64, text: String) -> Result<Versioned<bool>, ServiceError> {
        self.inner.replace(id, text).await
    }
    fn version(&self) -> u64 {
        self.inner.version()
    }
}

/// `list` shows facts with the version they are at: it read the facts, then the version, so
/// a write landing between showed one fact under version 2, which counts a fact not shown.
#[tokio::test]
async fn memory_lists_facts_with_the_version_they_are_at_when_a_write_lands_between() {
    let memory = Arc::new(WrittenWhileRead {
        inner: InMemoryMemory::new(),
        writes_left: 0.into(),
    });
    memory.add("first".into()).await.unwrap();
    memory
        .writes_left
        .store(1, std::sync::atomic::Ordering::Release);
    let m = manager(memory.clone());
    assert_eq!(
        text(&m, "memory", json!({"command": "list"})).await,
        "2 facts (memory version 2):\n1: first\n2: written in between"
    );

    // A memory written on every read still gets an answer: the last read's facts, with the
    // version read after them.
    memory
        .writes_left
        .store(usize::MAX, std::sync::atomic::Ordering::Release);
    let listed = memory.facts_with_version().await.unwrap();
    assert_eq!((listed.value.len(), listed.version), (9, 10));
}

/// The stores shipped read their facts and version together.
#[tokio::test]
async fn the_memories_read_facts_and_version_together() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<Arc<dyn MemoryAccess>> = vec![
        Arc::new(InMemoryMemory::new()),
        Arc::new(FileMemory::open(dir.path().join("memory.json")).unwrap()),
    ];
    for memory in stores {
        let empty = memory.facts_with_version().await.unwrap();
        assert_eq!((empty.value.len(), empty.version), (0, 0));
        let first = memory.add("first".into()).await.unwrap().value;
        memory.add("second".into()).await.unwrap();
        memory.remove(first.id).await.unwrap();
        let listed = memory.facts_with_version().await.unwrap();
        let texts: Vec<_> = listed.value.iter().map(|fact| fact.text.as_str()).collect();
        assert_eq!((texts, listed.version), (vec!["second"], 3));
    }
}

/// A write's new file is made beside the memory file and renamed over it: a crash between
/// left it there for good, one more at every crash. Opening the memory removes its own (and
/// only its own).
#[tokio::test]
async fn opening_a_memory_file_removes_the_temporary_files_crashed_writes_left() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    {
        let memory = FileMemory::open(&path).unwrap();
        memory.add("kept".into()).await.unwrap();
    }
    let left = [".memory.json.Ab12Cd.tmp", ".memory.json.zzzzzz.tmp"];
    let foreign = [
        ".tmpAb12Cd",
        ".other.json.Ab12Cd.tmp",
        ".memory.json.notes.tmp",
    ];
    for name in left.iter().chain(&foreign) {
        std::fs::write(dir.path().join(name), "{\"version\": 9").unwrap();
    }
    // A directory of such a name is not a file a write made.
    std::fs::create_dir(dir.path().join(".memory.json.dir123.tmp")).unwrap();

    let memory = FileMemory::open(&path).unwrap();
    assert_eq!(fact_texts(&memory).await, ["kept"]);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".memory.json.dir123.tmp",
            ".memory.json.notes.tmp",
            ".other.json.Ab12Cd.tmp",
            ".tmpAb12Cd",
            "memory.json",
            "memory.json.lock"
        ]
    );
    // Writes go on making (and renaming) their temporaries.
    memory.add("second".into()).await.unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 6);
}

/// A fact longer than what `list` shows is shown cut, not hidden: `list` showed no fact at
/// all when the first was longer than 16 KiB, the short ones after it and every id included.
#[tokio::test]
async fn memory_lists_a_fact_longer_than_the_list_cut_rather_than_none() {
    let memory: Arc<dyn MemoryAccess> = Arc::new(InMemoryMemory::new());
    let m = manager(Arc::clone(&memory));
    // Two-byte characters, so that a cut at a byte count could fall inside one.
    memory.add("é".repeat(20_000)).await.unwrap();
    memory.add("short".into()).await.unwrap();
    let listed = text(&m, "memory", json!({"command": "list"})).await;
    let mut lines = listed.lines();
    assert_eq!(lines.next(), Some("2 facts (memory version 2):"));
    let first = lines.next().unwrap();
    assert!(first.starts_with("1: éééé"), "{:?}", first.get(..40));
    assert!(
        first.ends_with("é… (cut: the fact is 40000 bytes)"),
        "{:?}",
        first.get(first.len() - 80..)
    );
    assert!(listed.len() < 17 * 1024, "{}", listed.len());
    assert_eq!(
        lines.collect::<Vec<_>>(),
        [
            "… and 1 more fact not shown (the list stops at 16384 bytes; remove facts no longer needed)"
        ]
    );
}

/// A fact of several lines is listed with its lines after the first indented: written as
/// they are, a line of the fact that began with a number and `:` read as another fact, its
/// id a wrong one (here, `1: build` as the text of fact 1).
#[tokio::test]
async fn memory_lists_a_fact_of_several_lines_so_that_no_line_reads_as_another_fact() {
    let memory: Arc<dyn MemoryAccess> = Arc::new(InMemoryMemory::new());
    let m = manager(Arc::clone(&memory));
    memory.add("uses tabs".into()).await.unwrap();
    memory
        .add("deploy steps:\n1: build\r\n2: test".into())
        .await
        .unwrap();
    assert_eq!(
        text(&m, "memory", json!({"command": "list"})).await,
        "2 facts (memory version 2):\n1: uses tabs\n2: deploy steps:\n    1: build\n    2: test"
    );
}

/// A memory file saved by an editor that starts files with a UTF-8 byte order mark is read
/// as the memory it holds (it was "not a memory file: expected value at line 1 column 1").
#[tokio::test]
async fn file_memory_reads_a_file_that_starts_with_a_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    let memory = FileMemory::open(&path).unwrap();
    memory.add("kept".into()).await.unwrap();
    drop(memory);
    let written = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("\u{feff}{written}")).unwrap();
    let reopened = FileMemory::open(&path).unwrap();
    assert_eq!(fact_texts(&reopened).await, ["kept"]);
    reopened.add("more".into()).await.unwrap();
    assert_eq!(fact_texts(&reopened).await, ["kept", "more"]);
}

/// A named pipe where the memory file should be is refused at once: opening it to read
/// waited for a writer that never came.
#[test]
fn file_memory_refuses_a_named_pipe_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    let (sender, receiver) = std::sync::mpsc::channel();
    let opening = path.clone();
    std::thread::spawn(move || {
        let _ = sender.send(FileMemory::open(&opening).map(drop));
    });
    let opened = receiver
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("FileMemory::open returned");
    let err = opened.unwrap_err().to_string();
    assert!(
        err.ends_with("memory.json is not a regular file; a memory file must be one"),
        "{err}"
    );
}

#[tokio::test]
async fn file_memory_refuses_a_file_that_is_not_a_memory_and_keeps_state_on_failed_writes() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "not json").unwrap();
    let err = FileMemory::open(&bad).unwrap_err();
    assert!(err.to_string().contains("is not a memory file"), "{err}");
    assert!(err.to_string().contains("bad.json"), "{err}");
    let err = FileMemory::open(dir.path().join("..")).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("/.. names no file to keep a memory in"),
        "{err}"
    );

    // A memory whose directory is replaced by a file once it is open: the write fails,
    // nothing changes.
    let memory = FileMemory::open(dir.path().join("blocker/memory.json")).unwrap();
    std::fs::remove_dir_all(dir.path().join("blocker")).unwrap();
    std::fs::write(dir.path().join("blocker"), "a file").unwrap();
    let err = memory.add("lost?".into()).await.unwrap_err();
    assert!(err.to_string().starts_with("memory: "), "{err}");
    assert_eq!(memory.version(), 0);
    assert!(memory.facts().await.unwrap().is_empty());
}

/// A path ending in `/` names a directory: refused when opened, where the open succeeded and
/// every write then failed ("Not a directory"), each a failed call of the model's.
#[cfg(unix)]
#[tokio::test]
async fn file_memory_refuses_a_path_ending_in_a_separator() {
    let dir = tempfile::tempdir().unwrap();
    let slashed = format!("{}/memory.json/", dir.path().display());
    let err = FileMemory::open(&slashed).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "memory: {slashed} ends with /, so it names a directory; a memory is kept in a \
             file (write its path without the final /)"
        )
    );
    // Through a symbolic link whose target ends with `/` too.
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("memory.json/", &link).unwrap();
    let err = FileMemory::open(&link).unwrap_err();
    assert!(
        err.to_string()
            .contains("memory.json/ ends with /, so it names a directory"),
        "{err}"
    );
    // Written without it, the same file opens and keeps facts.
    let memory = FileMemory::open(dir.path().join("memory.json")).unwrap();
    memory.add("kept".into()).await.unwrap();
}

/// The error of type `E` a memory failure keeps as its cause, if any.
fn cause_of<E: std::error::Error + 'static>(error: &ServiceError) -> Option<&E> {
    std::error::Error::source(error).and_then(|source| source.downcast_ref::<E>())
}

#[tokio::test]
async fn a_file_memory_failure_keeps_the_error_it_failed_of() {
    let dir = tempfile::tempdir().unwrap();
    // A file that is not JSON: the parser's error.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "not json").unwrap();
    let err = FileMemory::open(&bad).unwrap_err();
    let cause = cause_of::<serde_json::Error>(&err).expect("the parser's error");
    assert!(cause.is_syntax(), "{cause}");
    // A directory that is a file: the I/O error of making it, the text unchanged.
    std::fs::write(dir.path().join("plain"), "a file").unwrap();
    let err = FileMemory::open(dir.path().join("plain/memory.json")).unwrap_err();
    let cause = cause_of::<std::io::Error>(&err).expect("an I/O error");
    assert!(err.to_string().ends_with(&cause.to_string()), "{err}");
    // A write that fails (the directory replaced by a file once open): its I/O error.
    let memory = FileMemory::open(dir.path().join("blocker/memory.json")).unwrap();
    std::fs::remove_dir_all(dir.path().join("blocker")).unwrap();
    std::fs::write(dir.path().join("blocker"), "a file").unwrap();
    let err = memory.add("lost?".into()).await.unwrap_err();
    assert!(cause_of::<std::io::Error>(&err).is_some(), "{err:?}");
    // A failure of no typed error has no cause.
    let err = FileMemory::open(dir.path().join("..")).unwrap_err();
    assert!(std::error::Error::source(&err).is_none(), "{err:?}");
}

#[tokio::test]
async fn a_memory_file_has_one_writer_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    let first = FileMemory::open(&path).unwrap();
    first.add("first's".into()).await.unwrap();
    let err = FileMemory::open(&path).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "memory: {} is open already, in another FileMemory of this process or another \
             (a memory file has one writer at a time; the lock is on {}.lock)",
            path.display(),
            path.display()
        )
    );
    // Another spelling of the same file is the same file.
    let spelled = dir.path().join(".").join("memory.json");
    assert!(FileMemory::open(&spelled).is_err());
    // A clone is the same writer, and keeps the lock when the first goes.
    let clone = first.clone();
    drop(first);
    assert!(FileMemory::open(&path).is_err());
    clone.add("the clone's".into()).await.unwrap();
    drop(clone);
    // Let go with the last clone: the file opens, with every write of the first.
    let reopened = FileMemory::open(&path).unwrap();
    assert_eq!(fact_texts(&reopened).await, ["first's", "the clone's"]);
    // Another file of the same directory is another lock.
    FileMemory::open(dir.path().join("other.json")).unwrap();
}

#[tokio::test]
async fn a_memory_file_has_one_writer_under_all_its_hard_links() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    FileMemory::open(&path)
        .unwrap()
        .add("kept".into())
        .await
        .unwrap();
    let link = dir.path().join("link.json");
    std::fs::hard_link(&path, &link).unwrap();

    let first = FileMemory::open(&path).unwrap();
    let refused = |name: &std::path::Path| {
        format!(
            "memory: {} is open already under another name (a hard link to the same file), \
             in another FileMemory of this process or another (a memory file has one writer \
             at a time)",
            name.display()
        )
    };
    // Each name has a lock file of its own: the file's own lock refuses the second.
    let err = FileMemory::open(&link).unwrap_err().to_string();
    assert_eq!(err, refused(&link));

    // A write replaces the file, and the lock goes with it to the new one: a name linked to
    // the new file is refused too.
    first.add("second".into()).await.unwrap();
    let later = dir.path().join("later.json");
    std::fs::hard_link(&path, &later).unwrap();
    let err = FileMemory::open(&later).unwrap_err().to_string();
    assert_eq!(err, refused(&later));
    // The first link names the file that was replaced, no longer the memory's: it is free.
    let old = FileMemory::open(&link).unwrap();
    assert_eq!(fact_texts(&old).await, ["kept"]);

    drop(first);
    let reopened = FileMemory::open(&later).unwrap();
    assert_eq!(fact_texts(&reopened).await, ["kept", "second"]);
}

#[tokio::test]
async fn a_memory_file_past_its_limit_is_refused_and_no_write_makes_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    FileMemory::open(&path)
        .unwrap()
        .add("a fact of some length".into())
        .await
        .unwrap();
    let size = std::fs::metadata(&path).unwrap().len();

    let err = FileMemory::open_with_max_bytes(&path, size - 1)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "memory: {} is {size} bytes, more than the {} a memory file may hold \
             (FileMemory::open_with_max_bytes sets the limit)",
            path.display(),
            size - 1
        )
    );
    // A refused open holds no lock.
    let memory = FileMemory::open_with_max_bytes(&path, size).unwrap();
    assert_eq!(fact_texts(&memory).await, ["a fact of some length"]);

    // A write past the limit fails and changes nothing, in memory or on disk.
    let on_disk = std::fs::read(&path).unwrap();
    let err = memory.add("one more".into()).await.unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("memory: {}: the memory would be ", path.display()))
            && err.ends_with(&format!(
                "bytes, more than the {size} its file may hold \
                 (FileMemory::open_with_max_bytes sets the limit); nothing was written: \
                 remove facts no longer needed to make room"
            )),
        "{err}"
    );
    assert_eq!(memory.version(), 1);
    assert_eq!(fact_texts(&memory).await, ["a fact of some length"]);
    assert_eq!(std::fs::read(&path).unwrap(), on_disk);
    // The default limit is 64 MiB.
    assert_eq!(FileMemory::DEFAULT_MAX_BYTES, 64 * 1024 * 1024);
}

/// The variable that names the file [`hold_a_memory_file_open`] opens.
const HELD_MEMORY_FILE: &str = "TOOLSMITH_TEST_HELD_MEMORY_FILE";

/// The other process of the tests that [`start_holder`]: opens the file the test names, says
/// so, and holds it until its standard input closes (or it is killed).
#[test]
#[ignore = "the other process of the tests that start_holder"]
fn hold_a_memory_file_open() {
    use std::io::Read as _;
    // Run on its own (`--include-ignored`), it has nothing to hold.
    let Some(path) = std::env::var_os(HELD_MEMORY_FILE) else {
        return;
    };
    let _memory = FileMemory::open(&path).unwrap();
    println!("holding the memory file");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// Starts [`hold_a_memory_file_open`] on `path` in another process, and returns it once it
/// holds the file, with its output.
fn start_holder(
    path: &std::path::Path,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    String,
) {
    use std::io::BufRead as _;
    let mut holder = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "memory_and_context::hold_a_memory_file_open",
            "--ignored",
            "--nocapture",
        ])
        .env(HELD_MEMORY_FILE, path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut output = std::io::BufReader::new(holder.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("holding the memory file\n") {
        let before = seen.len();
        output.read_line(&mut seen).unwrap();
        assert!(
            seen.len() > before,
            "the other process did not open the file: {seen}"
        );
    }
    (holder, output, seen)
}

#[test]
fn a_memory_file_open_in_another_process_is_refused() {
    use std::io::Read as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    let (mut holder, mut output, mut seen) = start_holder(&path);

    let err = FileMemory::open(&path).unwrap_err().to_string();
    assert!(
        err.contains(&format!("{} is open already", path.display())),
        "{err}"
    );

    drop(holder.stdin.take());
    output.read_to_string(&mut seen).unwrap();
    assert!(holder.wait().unwrap().success(), "{seen}");
    // The lock went with the other process's memory.
    FileMemory::open(&path).unwrap();
}

#[test]
fn a_memory_file_held_by_a_killed_process_opens_at_once() {
    // A killed holder drops nothing itself: the kernel lets its locks go, so no stale lock
    // (the lock file stays) refuses the next open or makes it wait.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    let (mut holder, _output, _) = start_holder(&path);
    assert!(FileMemory::open(&path).is_err());
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(dir.path().join("memory.json.lock").exists());
    FileMemory::open(&path).unwrap();
}

#[test]
fn memory_is_a_command_group() {
    let tool = MemoryTool::new(Arc::new(InMemoryMemory::new()));
    let definition = toolsmith_core::ToolImpl::definition(&tool);
    let Tool::MultiCommands(name, commands) = &definition else {
        panic!()
    };
    assert_eq!(name, "memory");
    let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["add", "list", "remove", "replace"]);
    // Removing or replacing a fact destroys its text (as `write` and `edit` a file's):
    // approval hooks ask for both, and a batch runs them one at a time. Listing reads only.
    let destructive: Vec<Option<bool>> =
        commands.iter().map(|c| c.annotations.destructive).collect();
    assert_eq!(destructive[2..], [Some(true), Some(true)]);
    assert_ne!(destructive[1], Some(true));
    assert_eq!(commands[1].annotations.read_only, Some(true));
    let spec = definition.function_spec();
    assert_eq!(
        spec.parameters["properties"]["command"]["enum"],
        json!(["add", "list", "remove", "replace"])
    );
    // True whether the memory is the session's own or kept across sessions and shared.
    let group_description = spec.description.split("\n\n").next().unwrap();
    assert_eq!(
        group_description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        "Your memory: facts kept to use later, each with an id. It may be kept across \
         sessions or shared with other agents, so it can hold facts you did not add and \
         change between your calls."
    );
}

/// A context store that answers from a fixed list, matching on words.
struct Notes(Vec<ContextHit>);

#[async_trait]
impl ContextSearch for Notes {
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<ContextHit>, ServiceError> {
        if query == "fail" {
            return Err(ServiceError::new("context", "the index is offline"));
        }
        Ok(self
            .0
            .iter()
            .filter(|hit| query.split_whitespace().any(|w| hit.text.contains(w)))
            .take(limit)
            .cloned()
            .collect())
    }
}

fn notes() -> Arc<dyn ContextSearch> {
    Arc::new(Notes(
        (1..=8)
            .map(|i| ContextHit {
                source: format!("doc-{i}"),
                text: format!("release note {i}"),
                score: 1.0 - i as f32 / 10.0,
            })
            .collect(),
    ))
}

#[tokio::test]
async fn search_context_returns_hits_with_sources() {
    let m = ToolCallManager::new("ctx");
    m.register(Arc::new(SearchContextTool::new(notes())))
        .unwrap();
    assert_eq!(
        text(&m, "search_context", json!({"query": "note", "limit": 2})).await,
        "1. [doc-1] (score 0.900)\nrelease note 1\n\n2. [doc-2] (score 0.800)\nrelease note 2"
    );
    let all = text(&m, "search_context", json!({"query": "note"})).await;
    assert_eq!(
        all.matches("release note").count(),
        5,
        "the default limit is 5"
    );
    assert_eq!(
        text(&m, "search_context", json!({"query": "unrelated"})).await,
        "Nothing in the session's context matches \"unrelated\""
    );
    let err = error(&m, "search_context", json!({"query": "fail"})).await;
    assert_eq!(
        err.to_string(),
        "Tool 'search_context' failed: context: the index is offline"
    );
    for bad in [
        json!({"query": "note", "limit": 0}),
        json!({"query": "note", "limit": 51}),
        json!({}),
    ] {
        let err = error(&m, "search_context", bad.clone()).await;
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{bad}: {err}");
    }
    let Some(Tool::SingleCommand(def)) = m.get_def("search_context") else {
        panic!("search_context")
    };
    let limit = &def.arguments.schema()["properties"]["limit"];
    assert_eq!(
        (&limit["minimum"], &limit["maximum"]),
        (&json!(1), &json!(50)),
        "{limit}"
    );
}

#[tokio::test]
async fn a_memory_file_never_gives_an_id_it_holds_and_refuses_one_given_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    // A file whose next id is behind its facts (edited by hand, or by an older writer).
    std::fs::write(
        &path,
        r#"{"version": 3, "next_id": 0, "facts": [{"id": 1, "text": "a"}, {"id": 7, "text": "b"}]}"#,
    )
    .unwrap();
    let memory = FileMemory::open(&path).unwrap();
    let added = toolsmith_core::MemoryAccess::add(&memory, "c".into())
        .await
        .unwrap();
    assert_eq!((added.value.id, added.version), (8, 4));
    drop(memory);

    std::fs::write(
        &path,
        r#"{"version": 1, "next_id": 2, "facts": [{"id": 2, "text": "a"}, {"id": 2, "text": "b"}]}"#,
    )
    .unwrap();
    let error = FileMemory::open(&path).unwrap_err().to_string();
    assert!(
        error.contains("is not a memory file: two facts have the id 2"),
        "{error}"
    );
}

#[tokio::test]
async fn a_memory_file_whose_ids_are_used_up_refuses_a_new_fact_and_keeps_its_counters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    // Counters at their end (a file edited by hand, or written by another program).
    let file = format!(
        r#"{{"version": {max}, "next_id": 0, "facts": [{{"id": {max}, "text": "last"}}]}}"#,
        max = u64::MAX
    );
    std::fs::write(&path, &file).unwrap();
    let memory = FileMemory::open(&path).unwrap();
    // No id is left to give: refused, where the id went past its end (a panic, or id 0
    // and then ids already held).
    let err = memory.add("one more".into()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("memory: {}: every fact id has been given", path.display())
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), file);
    // The version stays at its end, and other writes still work.
    let replaced = memory.replace(u64::MAX, "changed".into()).await.unwrap();
    assert_eq!((replaced.value, replaced.version), (true, u64::MAX));
    assert_eq!(memory.version(), u64::MAX);
    assert_eq!(memory.facts().await.unwrap()[0].text, "changed");
}

#[cfg(unix)]
#[tokio::test]
async fn a_memory_file_opened_through_a_symbolic_link_is_the_file_it_links_to() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("memory.json", &link).unwrap();
    {
        let first = FileMemory::open(&path).unwrap();
        first.add("kept".into()).await.unwrap();
        // The link is another spelling of the open file: a second writer is refused.
        let err = FileMemory::open(&link).unwrap_err().to_string();
        assert!(err.contains("is open already"), "{err}");
    }
    let through_link = FileMemory::open(&link).unwrap();
    assert_eq!(through_link.path(), path);
    through_link
        .add("written through the link".into())
        .await
        .unwrap();
    // The write reached the file linked to; the link is still a link.
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    drop(through_link);
    let reopened = FileMemory::open(&path).unwrap();
    assert_eq!(
        fact_texts(&reopened).await,
        ["kept", "written through the link"]
    );

    // A link to a file not written yet: the first write creates it where the link points.
    let dangling = dir.path().join("later.json");
    std::os::unix::fs::symlink("state/later-target.json", &dangling).unwrap();
    let memory = FileMemory::open(&dangling).unwrap();
    memory.add("first".into()).await.unwrap();
    assert!(dir.path().join("state/later-target.json").is_file());
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // A loop of links is refused with an error naming the path.
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::os::unix::fs::symlink("b.json", &a).unwrap();
    std::os::unix::fs::symlink("a.json", &b).unwrap();
    let err = FileMemory::open(&a).unwrap_err().to_string();
    assert!(err.contains("a.json"), "{err}");
}

#[cfg(unix)]
#[tokio::test]
async fn a_write_keeps_the_memory_file_s_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.json");
    let mode = || std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    let memory = FileMemory::open(&path).unwrap();
    memory.add("one".into()).await.unwrap();
    // A new memory file is its owner's alone: facts may be private.
    assert_eq!(mode(), 0o600);
    // Every write replaces the file with a new one: it took the new file's 0600, so a file
    // shared with a group (or made read-only) lost that at the next write.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    memory.add("two".into()).await.unwrap();
    assert_eq!(mode(), 0o640);
    drop(memory);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let reopened = FileMemory::open(&path).unwrap();
    reopened.remove(1).await.unwrap();
    assert_eq!(mode(), 0o444);
    assert_eq!(fact_texts(&reopened).await, ["two"]);
}
