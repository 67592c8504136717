//! The harness tools against baselines measured in the same run:
//!
//! - `read/tool_1mib`: the `read` tool through `ToolCallManager::execute_one` on a 1 MiB text
//!   file (validation, the sandboxed read, rendering the first window of numbered lines),
//!   against `read/std_1mib`: `std::fs::read` and UTF-8 decoding of the same file. Its two
//!   parts are measured too: `read/fs_read_1mib` (the sandboxed `LocalFileSystem::read`) and
//!   `read/render_1mib` (numbering and capping the first window).
//! - `search_file/toolsmith_10k`: `search_file` through the manager over a generated tree of
//!   10,000 files, against `search_file/ripgrep_10k`: the `rg` binary on the same tree with
//!   the same filters (skipped when `rg` is not installed).
//!
//! Run with `cargo bench -p toolsmith-harness --bench harness -- --warm-up-time 1
//! --measurement-time 3`; the figures are in `docs/PERFORMANCE.md`.

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolsmith_core::{ToolArguments, ToolCallManager, ToolCallRequest};
use toolsmith_harness::tools::SearchFileTool;
use toolsmith_harness::{FileSystem, LocalFileSystem, ToolPreset};

const FILES: usize = 10_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn request(name: &str, arguments: serde_json::Value) -> ToolCallRequest {
    ToolCallRequest::new("bench", name, ToolArguments::try_from(arguments).unwrap())
}

fn read(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let line = format!(
        "{}\n",
        "the quick brown fox jumps over the lazy dog 0123456789 abcdef"
    );
    let mut body = String::new();
    while body.len() < 1024 * 1024 {
        body.push_str(&line);
    }
    body.truncate(1024 * 1024);
    std::fs::write(dir.path().join("big.txt"), &body).unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(dir.path()).unwrap());
    let manager = ToolPreset::files(fs).into_manager("bench").unwrap();
    let call = request("read", json!({"path": "big.txt"}));
    let rt = runtime();

    let mut group = c.benchmark_group("read");
    group.bench_function("tool_1mib", |b| {
        b.iter(|| {
            let result = rt.block_on(manager.execute_one(black_box(&call))).unwrap();
            black_box(result);
        })
    });
    let path = dir.path().join("big.txt");
    group.bench_function("std_1mib", |b| {
        b.iter(|| {
            let bytes = std::fs::read(black_box(&path)).unwrap();
            black_box(String::from_utf8(bytes).unwrap());
        })
    });
    let bytes = std::fs::read(&path).unwrap();
    group.bench_function("render_1mib", |b| {
        b.iter(|| {
            black_box(
                toolsmith_harness::tools::render_lines(
                    "big.txt",
                    black_box(&bytes),
                    None,
                    None,
                    &Default::default(),
                )
                .unwrap(),
            )
        })
    });
    let local = LocalFileSystem::new(dir.path()).unwrap();
    group.bench_function("fs_read_1mib", |b| {
        b.iter(|| black_box(rt.block_on(local.read(Path::new("big.txt"))).unwrap()))
    });
    group.finish();
}

/// 100 directories of 100 files, each 40 lines; one file in 100 holds the needle, and an
/// ignored directory holds more that must not be found.
fn generate_tree(root: &Path) {
    std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
    let filler: String = (0..40)
        .map(|i| format!("let value_{i} = compute(alpha, beta, gamma) + {i}; // filler text\n"))
        .collect();
    for d in 0..FILES / 100 {
        let dir = root.join(format!("dir{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let mut content = filler.clone();
            if f == 0 {
                content.push_str("fn needle_function() -> u32 { 42 }\n");
            }
            std::fs::write(dir.join(format!("file{f:03}.rs")), content).unwrap();
        }
    }
    std::fs::create_dir_all(root.join("ignored")).unwrap();
    for f in 0..100 {
        std::fs::write(
            root.join(format!("ignored/gen{f:03}.rs")),
            "fn needle_function() {}\n",
        )
        .unwrap();
    }
}

fn search(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    generate_tree(dir.path());
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(dir.path()).unwrap());
    let manager = ToolCallManager::new("bench");
    manager
        .register(Arc::new(SearchFileTool::new(
            fs,
            toolsmith_harness::DEFAULT_MAX_MATCHES,
        )))
        .unwrap();
    let call = request("search_file", json!({"pattern": r"fn needle_\w+"}));
    let rt = runtime();
    let shown = rt
        .block_on(manager.execute_one(&call))
        .unwrap()
        .content
        .to_text();
    assert!(
        shown.starts_with("100 matches in 100 files (10000 files searched)"),
        "{}",
        shown.lines().next().unwrap_or_default()
    );

    let mut group = c.benchmark_group("search_file");
    group.sample_size(10);
    group.bench_function("toolsmith_10k", |b| {
        b.iter(|| {
            let result = rt.block_on(manager.execute_one(black_box(&call))).unwrap();
            black_box(result);
        })
    });
    // ripgrep with the same filters: .gitignore without a git repository, no ignore files
    // from above the root, no global git config, hidden files skipped (its default).
    let rg = || {
        let mut command = Command::new("rg");
        command
            .args([
                "--no-require-git",
                "--no-ignore-parent",
                "--no-config",
                "-n",
                r"fn needle_\w+",
                ".",
            ])
            .current_dir(dir.path());
        command
    };
    match rg().output() {
        Ok(output) if output.status.success() => {
            let lines = String::from_utf8_lossy(&output.stdout).lines().count();
            assert_eq!(lines, 100, "ripgrep must find what search_file finds");
            group.bench_function("ripgrep_10k", |b| {
                b.iter(|| black_box(rg().output().unwrap()))
            });
        }
        _ => eprintln!("`rg` is not installed: the ripgrep comparison is skipped"),
    }
    group.finish();
}

criterion_group!(benches, read, search);
criterion_main!(benches);
