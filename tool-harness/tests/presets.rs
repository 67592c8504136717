//! `ToolPreset`: contents, composition, registration (all or nothing), session-built tools.

mod common;

use std::sync::Arc;

use async_trait::async_trait;
use common::text;
use serde_json::json;
use toolsmith_core::{
    ContextHit, ContextSearch, MemoryAccess, RegistrationError, ServiceError, SessionParts,
    SessionState, ToolCallManager, ToolConstructor,
};
use toolsmith_harness::{
    FileSystem, InMemoryFileSystem, InMemoryMemory, LocalFileSystem, PresetError, ToolPreset,
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
    assert_eq!(
        err,
        PresetError::NeedsSession(vec!["search_context".into(), "memory".into()])
    );
    assert!(
        err.to_string().contains("'search_context', 'memory'"),
        "{err}"
    );
    assert!(manager.is_empty(), "nothing of the preset was registered");
    assert!(matches!(
        ToolPreset::session_memory().as_child_tools(),
        Err(PresetError::NeedsSession(_))
    ));
    assert!(matches!(
        ToolPreset::search_context().into_manager("x"),
        Err(PresetError::NeedsSession(_))
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
        PresetError::Registration(RegistrationError::DuplicateTool("bash".into()))
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
        Err(PresetError::Registration(RegistrationError::DuplicateTool(
            _
        )))
    ));
}
