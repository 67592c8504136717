//! `ToolPreset::standard` over a temporary directory: a few calls of each tool, and an escape
//! attempt that the sandbox refuses.
//!
//! Run with `cargo run --example presets`. Copied into a crate of your own, it needs
//! `tempfile = "3"` besides the dependencies the README lists.

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith::async_trait;
use toolsmith::harness::{
    FileSystem, InMemoryMemory, LocalFileSystem, SandboxStatus, ShellConfig, ShellRunner,
    ToolPreset,
};
use toolsmith::{
    ContextHit, ContextSearch, ServiceError, SessionParts, SessionState, ToolArguments,
    ToolCallManager, ToolCallRequest,
};

/// A session's context store for the example: a few notes, matched on words.
struct Notes;

#[async_trait]
impl ContextSearch for Notes {
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<ContextHit>, ServiceError> {
        let notes = [
            ("design.md", "The cache is flushed on every deploy."),
            ("meeting-03.md", "Deploys move to Tuesdays from next month."),
            ("readme.md", "Run the tests with cargo test."),
        ];
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        Ok(notes
            .iter()
            .filter(|(_, text)| {
                words
                    .iter()
                    .any(|w| text.to_lowercase().contains(w.as_str()))
            })
            .take(limit)
            .map(|(source, text)| ContextHit {
                source: (*source).into(),
                text: (*text).into(),
                score: 1.0,
            })
            .collect())
    }
}

async fn show(manager: &ToolCallManager, name: &str, arguments: Value) {
    let request = ToolCallRequest::new(
        "call",
        name,
        ToolArguments::try_from(arguments.clone()).unwrap(),
    );
    println!("── {name} {arguments}");
    match manager.execute_one(&request).await {
        Ok(result) if result.is_error() => {
            println!("(reported as an error)\n{}\n", result.content.to_text())
        }
        Ok(result) => println!("{}\n", result.content.to_text()),
        Err(err) => println!("error: {err}\n"),
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(dir.path()).expect("the root"));

    // `standard` builds `memory` from the session, and `search_context` too: here the parts
    // are made by hand, as a session's ToolShed would hand them over.
    let parts = SessionParts {
        session_id: "example".into(),
        context: Arc::new(Notes),
        memory: Arc::new(InMemoryMemory::new()),
        embedder: None,
        state: SessionState::new(),
    };
    let preset = ToolPreset::standard(Arc::clone(&fs)) + ToolPreset::search_context();
    println!("tools: {:?}", preset.names());
    let sandbox = ShellRunner::new(ShellConfig::new(dir.path())).sandbox_status();
    println!("bash sandbox on this machine: {sandbox:?}\n");
    let manager = preset
        .into_manager_with(&parts)
        .expect("the preset registers");

    show(
        &manager,
        "write",
        json!({"path": "src/lib.rs", "content": "pub fn answer() -> u32 {\n    41\n}\n"}),
    )
    .await;
    show(
        &manager,
        "edit",
        json!({"path": "src/lib.rs", "old_string": "41", "new_string": "42"}),
    )
    .await;
    show(&manager, "read", json!({"path": "src/lib.rs"})).await;
    show(
        &manager,
        "read",
        json!({"path": "src/lib.rs", "offset": 2, "limit": 1}),
    )
    .await;
    show(
        &manager,
        "write",
        json!({"path": ".gitignore", "content": "target/\n"}),
    )
    .await;
    show(
        &manager,
        "write",
        json!({"path": "target/gen.rs", "content": "pub fn answer_generated() {}\n"}),
    )
    .await;
    show(
        &manager,
        "search_file",
        json!({"pattern": r"fn \w+", "glob": "*.rs"}),
    )
    .await;
    show(
        &manager,
        "bash",
        json!({"command": "ls -R src && wc -l src/lib.rs"}),
    )
    .await;
    show(
        &manager,
        "bash",
        json!({"command": "sleep 5", "timeout_ms": 200}),
    )
    .await;
    show(
        &manager,
        "memory",
        json!({"command": "add", "text": "answer() must return 42"}),
    )
    .await;
    show(
        &manager,
        "memory",
        json!({"command": "replace", "id": 1, "text": "answer() returns 42 since the edit"}),
    )
    .await;
    show(&manager, "memory", json!({"command": "remove", "id": 5})).await;
    show(
        &manager,
        "search_context",
        json!({"query": "deploy", "limit": 2}),
    )
    .await;

    // Escape attempts: refused, with the path named, and nothing outside touched.
    show(&manager, "read", json!({"path": "../../../etc/passwd"})).await;
    std::os::unix::fs::symlink("/etc", dir.path().join("etc_link")).expect("a symlink");
    show(&manager, "read", json!({"path": "etc_link/hostname"})).await;
    show(
        &manager,
        "write",
        json!({"path": "/tmp/outside.txt", "content": "no"}),
    )
    .await;
    if matches!(
        sandbox,
        SandboxStatus::Confined | SandboxStatus::PartlyConfined(_)
    ) {
        // Landlock: the shell's writes outside the root fail in the kernel.
        let outside = dir
            .path()
            .parent()
            .expect("a parent")
            .join("toolsmith-example-escape.txt");
        let command = format!("echo escaped > {}", outside.display());
        show(&manager, "bash", json!({ "command": command })).await;
        assert!(!outside.exists());
    }
}
