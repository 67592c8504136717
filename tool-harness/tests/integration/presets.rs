//! `ToolPreset`: contents, composition, registration (all or nothing), session-built tools.

use std::sync::Arc;

use crate::common::text;
use async_trait::async_trait;
use serde_json::json;
use toolsmith_core::shed::{ToolShed, ToolShedError};
use toolsmith_core::{
    ContextHit, ContextSearch, MemoryAccess, RegistrationError, ServiceError, SessionParts,
    SessionState, ToolCallManager, ToolConstructor,
};
use toolsmith_harness::{
    FileSystem, InMemoryFileSystem, InMemoryMemory, LocalFileSystem, ToolPreset,
    register_file_tools, register_shell_tool,
};

fn memory_fs() -> Arc<dyn FileSystem> {
    Arc::new(InMemoryFileSystem::new())
}

struct OneHit;

#[async_trait]
impl ContextSearch for OneHit {
    async fn search(&self, query: &str, _limit: usize) -> Result<Vec<ContextHit>, ServiceError> {
        Ok(vec![ContextHit {
            source: "session".into(),
            text: format!("recalled {query}"),
            score: 1.0,
        }])
    }
}

fn parts(memory: Arc<dyn MemoryAccess>) -> SessionParts {
    SessionParts {
        session_id: "session-7".into(),
        context: Arc::new(OneHit),
        memory,
        embedder: None,
        state: SessionState::new(),
    }
}

#[test]
fn presets_hold_the_spec_tools() {
    let fs = memory_fs();
    let names = |preset: ToolPreset| preset.names();
    assert_eq!(
        names(ToolPreset::files(fs.clone())),
        ["read", "write", "edit"]
    );
    assert_eq!(names(ToolPreset::shell()), ["bash"]);
    assert_eq!(
        names(ToolPreset::memory(Arc::new(InMemoryMemory::new()))),
        ["memory"]
    );
    assert_eq!(names(ToolPreset::session_memory()), ["memory"]);
    assert_eq!(names(ToolPreset::search_context()), ["search_context"]);
    assert_eq!(names(ToolPreset::file_search(fs.clone())), ["search_file"]);
    assert_eq!(
        names(ToolPreset::minimal_sub_agent(fs.clone())),
        ["read", "write", "edit", "bash"]
    );
    assert_eq!(
        names(ToolPreset::standard(fs.clone())),
        ["read", "write", "edit", "bash", "search_file", "memory"]
    );
    assert_eq!(ToolPreset::standard(fs.clone()).session_tools(), ["memory"]);
    assert!(ToolPreset::files(fs).session_tools().is_empty());
    assert!(ToolPreset::new().is_empty());
}

#[test]
fn merge_and_plus_concatenate() {
    let fs = memory_fs();
    let merged = ToolPreset::files(fs.clone()).merge(ToolPreset::shell());
    let added = ToolPreset::files(fs) + ToolPreset::shell() + ToolPreset::search_context();
    assert_eq!(merged.names(), ["read", "write", "edit", "bash"]);
    assert_eq!(
        added.names(),
        ["read", "write", "edit", "bash", "search_context"]
    );
    assert_eq!(added.len(), 5);
}

#[test]
fn a_preset_is_an_iterator_of_constructors() {
    // What `ToolShed::tools(..)` will take.
    let constructors: Vec<Box<dyn ToolConstructor>> = (ToolPreset::files(memory_fs())
        + ToolPreset::session_memory())
    .into_iter()
    .collect();
    let names: Vec<String> = constructors.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["read", "write", "edit", "memory"]);
    assert_eq!(
        constructors
            .iter()
            .map(|c| c.needs_session())
            .collect::<Vec<_>>(),
        [false, false, false, true]
    );
    let rebuilt: ToolPreset = constructors.into_iter().collect();
    assert_eq!(rebuilt.len(), 4);
}

#[tokio::test]
async fn ready_presets_register_and_build_managers() {
    let fs = memory_fs();
    let manager = ToolCallManager::new("s");
    ToolPreset::files(fs.clone())
        .register_all(&manager)
        .unwrap();
    assert_eq!(manager.names(), ["read", "write", "edit"]);
    text(&manager, "write", json!({"path": "a.txt", "content": "x"})).await;

    let manager = ToolPreset::memory(Arc::new(InMemoryMemory::new()))
        .into_manager("m")
        .unwrap();
    assert_eq!(manager.session_id(), "m");
    assert_eq!(
        text(
            &manager,
            "memory",
            json!({"command": "add", "text": "fact"})
        )
        .await,
        "Remembered fact 1 (memory version 1)"
    );

    let children = (ToolPreset::files(fs) + ToolPreset::shell())
        .as_child_tools()
        .unwrap();
    let names: Vec<String> = children
        .iter()
        .map(|t| t.definition().name().to_owned())
        .collect();
    assert_eq!(names, ["read", "write", "edit", "bash"]);
}

#[test]
fn session_presets_need_a_session() {
    let manager = ToolCallManager::new("s");
    let err = (ToolPreset::files(memory_fs())
        + ToolPreset::search_context()
        + ToolPreset::session_memory())
    .register_all(&manager)
    .unwrap_err();
    // The core's error names the first tool that needs the session.
    assert_eq!(err, ToolShedError::NeedsSession("search_context".into()));
    assert_eq!(
        err.to_string(),
        "the tool 'search_context' is built from a session's parts, so it needs a session"
    );
    assert!(manager.is_empty(), "nothing of the preset was registered");
    assert!(matches!(
        ToolPreset::session_memory().as_child_tools(),
        Err(ToolShedError::NeedsSession(name)) if name == "memory"
    ));
    assert!(matches!(
        ToolPreset::search_context().into_manager("x"),
        Err(ToolShedError::NeedsSession(name)) if name == "search_context"
    ));
}

#[test]
fn registration_is_all_or_nothing() {
    let manager = ToolCallManager::new("s");
    ToolPreset::shell().register_all(&manager).unwrap();
    let err = (ToolPreset::files(memory_fs()) + ToolPreset::shell())
        .register_all(&manager)
        .unwrap_err();
    assert_eq!(
        err,
        ToolShedError::Registration {
            tool: "bash".into(),
            source: RegistrationError::DuplicateTool("bash".into())
        }
    );
    assert_eq!(manager.names(), ["bash"], "the files tools were taken back");
}

#[tokio::test]
async fn session_presets_are_built_from_the_session_parts() {
    let memory: Arc<dyn MemoryAccess> = Arc::new(InMemoryMemory::new());
    let manager = (ToolPreset::session_memory() + ToolPreset::search_context())
        .into_manager_with(&parts(Arc::clone(&memory)))
        .unwrap();
    assert_eq!(manager.session_id(), "session-7");
    text(
        &manager,
        "memory",
        json!({"command": "add", "text": "kept in the session"}),
    )
    .await;
    assert_eq!(memory.facts().await.unwrap()[0].text, "kept in the session");
    assert_eq!(
        text(&manager, "search_context", json!({"query": "plans"})).await,
        "1. [session] (score 1.000)\nrecalled plans"
    );
}

#[tokio::test]
async fn standard_runs_bash_in_the_file_system_root() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(dir.path()).unwrap());
    let manager = ToolPreset::standard(fs)
        .into_manager_with(&parts(Arc::new(InMemoryMemory::new())))
        .unwrap();
    text(
        &manager,
        "write",
        json!({"path": "made.txt", "content": "by write\n"}),
    )
    .await;
    assert_eq!(
        text(
            &manager,
            "bash",
            json!({"command": "cat made.txt && pwd -P"})
        )
        .await,
        format!(
            "by write\n{}\n[exit code: 0]",
            dir.path().canonicalize().unwrap().display()
        )
    );
    assert_eq!(
        text(&manager, "search_file", json!({"pattern": "write"})).await,
        "1 match in 1 file (1 file searched)\nmade.txt:1: by write"
    );
}

#[test]
fn register_functions_add_the_file_and_shell_tools() {
    let manager = ToolCallManager::new("s");
    register_file_tools(&manager, memory_fs()).unwrap();
    register_shell_tool(&manager).unwrap();
    assert_eq!(manager.names(), ["read", "write", "edit", "bash"]);
    assert!(matches!(
        register_shell_tool(&manager),
        Err(ToolShedError::Registration {
            source: RegistrationError::DuplicateTool(_),
            ..
        })
    ));
}

#[tokio::test]
async fn a_preset_goes_straight_into_a_tool_shed() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(dir.path()).unwrap());
    let memory: Arc<dyn MemoryAccess> = Arc::new(InMemoryMemory::new());
    let mut session = parts(Arc::clone(&memory));
    session.session_id = "shed-session".into();
    let manager = ToolShed::new()
        .tools(ToolPreset::standard(fs) + ToolPreset::search_context())
        .build(session)
        .unwrap();
    assert_eq!(manager.session_id(), "shed-session");
    for name in [
        "read",
        "write",
        "edit",
        "bash",
        "search_file",
        "memory",
        "search_context",
    ] {
        assert!(manager.contains(name), "{name} is in the shed's manager");
    }
    // Ready-made tools run through execute_one.
    assert_eq!(
        text(
            &manager,
            "write",
            json!({"path": "notes.txt", "content": "ship it\n"})
        )
        .await,
        "Created \"notes.txt\" (8 bytes)"
    );
    assert_eq!(
        text(&manager, "read", json!({"path": "notes.txt"})).await,
        "     1\tship it"
    );
    assert_eq!(
        text(&manager, "bash", json!({"command": "cat notes.txt"})).await,
        "ship it\n[exit code: 0]"
    );
    // Session-built tools use the session's own parts.
    assert_eq!(
        text(
            &manager,
            "memory",
            json!({"command": "add", "text": "ships on Fridays"})
        )
        .await,
        "Remembered fact 1 (memory version 1)"
    );
    assert_eq!(memory.facts().await.unwrap()[0].text, "ships on Fridays");
    assert_eq!(
        text(&manager, "search_context", json!({"query": "plans"})).await,
        "1. [session] (score 1.000)\nrecalled plans"
    );
    // A preset holding session-built tools is refused without a session.
    assert_eq!(
        ToolShed::new()
            .tools(ToolPreset::session_memory())
            .build_without_session("none")
            .unwrap_err(),
        ToolShedError::NeedsSession("memory".into())
    );
}
