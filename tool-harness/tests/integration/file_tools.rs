//! `read`, `write` and `edit` through `ToolCallManager::execute_one`, over both file systems.

use std::path::Path;
use std::sync::Arc;

use crate::common::{error, file_systems, text};
use serde_json::json;
use toolsmith_core::{Tool, ToolCallManager, ToolErrorKind};
use toolsmith_harness::tools::{ReadLimits, ReadTool};
use toolsmith_harness::{FileSystem, InMemoryFileSystem, LocalFileSystem, ToolPreset};

fn manager(fs: Arc<dyn FileSystem>) -> ToolCallManager {
    ToolPreset::files(fs).into_manager("files").unwrap()
}

#[tokio::test]
async fn write_then_read_then_edit() {
    for (kind, fs, _dir) in file_systems() {
        let m = manager(Arc::clone(&fs));
        assert_eq!(
            text(
                &m,
                "write",
                json!({"path": "src/main.rs", "content": "fn main() {\n    println!(\"hi\");\n}\n"})
            )
            .await,
            "Created \"src/main.rs\" (34 bytes)",
            "{kind}"
        );
        assert_eq!(
            text(&m, "read", json!({"path": "src/main.rs"})).await,
            "     1\tfn main() {\n     2\t    println!(\"hi\");\n     3\t}",
            "{kind}"
        );
        assert_eq!(
            text(
                &m,
                "edit",
                json!({"path": "src/main.rs", "old_string": "\"hi\"", "new_string": "\"hello\""})
            )
            .await,
            "Edited \"src/main.rs\": replaced 1 occurrence",
            "{kind}"
        );
        assert_eq!(
            fs.read(Path::new("src/main.rs")).await.unwrap(),
            b"fn main() {\n    println!(\"hello\");\n}\n",
            "{kind}"
        );
        assert_eq!(
            text(&m, "write", json!({"path": "src/main.rs", "content": ""})).await,
            "Replaced the content of \"src/main.rs\" (0 bytes)",
            "{kind}"
        );
        assert_eq!(
            text(&m, "read", json!({"path": "src/main.rs"})).await,
            "\"src/main.rs\" is empty (0 bytes)"
        );
        assert_eq!(
            text(&m, "write", json!({"path": "src/main.rs", "content": "x"})).await,
            "Replaced the content of \"src/main.rs\" (1 byte)",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn read_pages_with_offset_and_limit_and_says_how_to_go_on() {
    for (kind, fs, _dir) in file_systems() {
        let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        fs.write(Path::new("ten.txt"), body.into_bytes())
            .await
            .unwrap();
        let m = manager(fs);
        assert_eq!(
            text(
                &m,
                "read",
                json!({"path": "ten.txt", "offset": 4, "limit": 2})
            )
            .await,
            "     4\tline 4\n     5\tline 5\n[lines 4-5 of 10 shown; call read with offset=6 to read on]",
            "{kind}"
        );
        // Lenient numbers, as text backends send them; offset 0 reads as 1.
        assert!(
            text(
                &m,
                "read",
                json!({"path": "ten.txt", "offset": "0", "limit": "1"})
            )
            .await
            .starts_with("     1\tline 1\n")
        );
        assert_eq!(
            text(&m, "read", json!({"path": "ten.txt", "offset": 10})).await,
            "    10\tline 10"
        );
        let err = error(&m, "read", json!({"path": "ten.txt", "offset": 11})).await;
        assert_eq!(
            err.to_string(),
            "Tool 'read' failed: offset 11 is past the end of \"ten.txt\", which has 10 lines"
        );
    }
}

#[tokio::test]
async fn read_cuts_at_the_size_cap_with_a_clear_message() {
    let fs: Arc<dyn FileSystem> = Arc::new(InMemoryFileSystem::new());
    let body: String = (1..=1000)
        .map(|i| format!("{i:04} {}\n", "x".repeat(95)))
        .collect();
    fs.write(Path::new("big.txt"), body.into_bytes())
        .await
        .unwrap();
    let limits = ReadLimits {
        max_output_bytes: 1000,
        max_line_chars: 50,
        ..ReadLimits::default()
    };
    let m = ToolCallManager::new("s");
    m.register(Arc::new(ReadTool::new(fs, limits))).unwrap();
    let shown = text(&m, "read", json!({"path": "big.txt"})).await;
    // Each shown line: 7 bytes of number and tab, 50 characters, the cut marker, a newline.
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "     1\t0001 {}… [line cut: 50 more characters]",
            "x".repeat(45)
        )
    );
    let last = lines.last().unwrap();
    let shown_lines = lines.len() - 1;
    assert_eq!(
        *last,
        format!(
            "[read stopped at the 1000-byte output cap after line {shown_lines} of 1000; call read with offset={} to continue]",
            shown_lines + 1
        )
    );
    assert!(shown.len() < 1000 + last.len() + 1);
}

#[tokio::test]
async fn read_refuses_binary_files_and_reports_missing_ones() {
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("app.bin"), b"\x7fELF\x02\x01\x01\0\0\0".to_vec())
            .await
            .unwrap();
        fs.write(Path::new("latin1.txt"), b"caf\xe9\n".to_vec())
            .await
            .unwrap();
        let m = manager(fs);
        let err = error(&m, "read", json!({"path": "app.bin"})).await;
        assert_eq!(
            err.to_string(),
            "Tool 'read' failed: refused \"app.bin\": it looks like a binary file (10 bytes, a NUL byte at offset 7); read shows text files only",
            "{kind}"
        );
        assert_eq!(
            text(&m, "read", json!({"path": "latin1.txt"})).await,
            "     1\tcaf\u{fffd}\n[not valid UTF-8: undecodable bytes are shown as U+FFFD]"
        );
        let err = error(&m, "read", json!({"path": "missing.txt"})).await;
        assert_eq!(
            err.to_string(),
            "Tool 'read' failed: \"missing.txt\" does not exist",
            "{kind}"
        );
        let err = error(&m, "read", json!({"path": "."})).await;
        assert!(err.to_string().contains("is a directory"), "{kind}: {err}");
    }
}

/// `edit` refuses the files `read` refuses as binary, in the same words; before, a file with
/// NUL bytes that was valid UTF-8 was edited, and one that was not was refused as not UTF-8.
#[tokio::test]
async fn edit_refuses_binary_files_as_read_does() {
    for (kind, fs, _dir) in file_systems() {
        for (path, contents) in [
            ("utf16.txt", &b"a\0=\x001\0\n\0"[..]),
            ("app.bin", &b"\x7fELF\x02\x01\x01\0\0\0"[..]),
        ] {
            fs.write(Path::new(path), contents.to_vec()).await.unwrap();
            let m = manager(Arc::clone(&fs));
            let read = error(&m, "read", json!({"path": path})).await.to_string();
            let edited = error(
                &m,
                "edit",
                json!({"path": path, "old_string": "1", "new_string": "2"}),
            )
            .await
            .to_string();
            let refusal = format!(
                "refused {path:?}: it looks like a binary file ({} bytes, a NUL byte at offset {})",
                contents.len(),
                contents.iter().position(|&b| b == 0).unwrap()
            );
            assert_eq!(
                read,
                format!("Tool 'read' failed: {refusal}; read shows text files only"),
                "{kind}"
            );
            assert_eq!(
                edited,
                format!("Tool 'edit' failed: {refusal}; edit works on text files only"),
                "{kind}"
            );
            assert_eq!(fs.read(Path::new(path)).await.unwrap(), contents, "{kind}");
        }
    }
}

#[tokio::test]
async fn edit_requires_a_unique_match_unless_replace_all() {
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("f.txt"), b"a = 1\nb = 1\nc = 2\n".to_vec())
            .await
            .unwrap();
        let m = manager(Arc::clone(&fs));
        let err = error(
            &m,
            "edit",
            json!({"path": "f.txt", "old_string": "= 1", "new_string": "= 3"}),
        )
        .await;
        assert_eq!(
            err.to_string(),
            "Tool 'edit' failed: in \"f.txt\": old_string occurs 2 times (on lines 1 and 2); add surrounding lines to make it unique, or set replace_all to replace all 2",
            "{kind}"
        );
        let err = error(
            &m,
            "edit",
            json!({"path": "f.txt", "old_string": "= 9", "new_string": "= 3"}),
        )
        .await;
        assert!(
            err.to_string()
                .contains("old_string was not found (0 matches)"),
            "{kind}: {err}"
        );
        assert_eq!(
            fs.read(Path::new("f.txt")).await.unwrap(),
            b"a = 1\nb = 1\nc = 2\n",
            "{kind}: unchanged"
        );

        assert_eq!(
            text(&m, "edit", json!({"path": "f.txt", "old_string": "= 1", "new_string": "= 3", "replace_all": true})).await,
            "Edited \"f.txt\": replaced 2 occurrences"
        );
        assert_eq!(
            fs.read(Path::new("f.txt")).await.unwrap(),
            b"a = 3\nb = 3\nc = 2\n"
        );

        let err = error(
            &m,
            "edit",
            json!({"path": "f.txt", "old_string": "", "new_string": "x"}),
        )
        .await;
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
        let err = error(
            &m,
            "edit",
            json!({"path": "f.txt", "old_string": "c", "new_string": "c"}),
        )
        .await;
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
        let err = error(
            &m,
            "edit",
            json!({"path": "nope.txt", "old_string": "a", "new_string": "b"}),
        )
        .await;
        assert_eq!(
            err.to_string(),
            "Tool 'edit' failed: \"nope.txt\" does not exist"
        );
    }
}

#[tokio::test]
async fn invalid_arguments_never_reach_the_tool() {
    let fs = Arc::new(InMemoryFileSystem::new());
    let m = manager(fs.clone());
    let err = error(&m, "write", json!({"path": "x.txt"})).await;
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        err.to_string()
            .contains("\"content\" is a required property"),
        "{err}"
    );
    let err = error(
        &m,
        "write",
        json!({"path": "x.txt", "content": "c", "mode": "0777"}),
    )
    .await;
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    let err = error(&m, "read", json!({"path": 7})).await;
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    assert!(fs.files().is_empty(), "no tool ran");
}

#[tokio::test]
async fn writes_refuse_directories_and_files_in_the_way() {
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("dir/file.txt"), b"x".to_vec())
            .await
            .unwrap();
        let m = manager(fs);
        let err = error(&m, "write", json!({"path": "dir", "content": "y"})).await;
        assert!(
            err.to_string().contains("\"dir\" is a directory"),
            "{kind}: {err}"
        );
        let err = error(
            &m,
            "write",
            json!({"path": "dir/file.txt/under", "content": "y"}),
        )
        .await;
        assert!(
            err.to_string().contains("\"dir/file.txt/under\""),
            "{kind}: {err}"
        );
    }
}

#[test]
fn definitions_have_the_spec_names_and_arguments() {
    let fs: Arc<dyn FileSystem> = Arc::new(InMemoryFileSystem::new());
    let m = manager(fs);
    let props = |name: &str| {
        let Some(Tool::SingleCommand(def)) = m.get_def(name) else {
            panic!("{name}")
        };
        let schema = def.arguments.schema().clone();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert!(schema.get("$ref").is_none() && schema.get("$defs").is_none());
        (
            def.arguments
                .property_names()
                .map(str::to_owned)
                .collect::<Vec<_>>(),
            schema["required"].clone(),
            def.category,
        )
    };
    assert_eq!(
        props("read"),
        (
            vec!["path".into(), "offset".into(), "limit".into()],
            json!(["path"]),
            "read".into()
        )
    );
    assert_eq!(
        props("write"),
        (
            vec!["path".into(), "content".into()],
            json!(["path", "content"]),
            "write".into()
        )
    );
    assert_eq!(
        props("edit"),
        (
            vec![
                "path".into(),
                "old_string".into(),
                "new_string".into(),
                "replace_all".into()
            ],
            json!(["path", "old_string", "new_string"]),
            "write".into()
        )
    );
}

#[test]
fn definitions_keep_their_behaviour_hints() {
    use toolsmith_core::ToolAnnotations;
    let m = manager(Arc::new(InMemoryFileSystem::new()));
    let hints = |name: &str| {
        let Some(Tool::SingleCommand(def)) = m.get_def(name) else {
            panic!("{name}")
        };
        def.annotations
    };
    assert_eq!(hints("read"), ToolAnnotations::read_only());
    let writes = |idempotent| ToolAnnotations {
        read_only: Some(false),
        destructive: Some(true),
        idempotent: Some(idempotent),
        open_world: Some(false),
    };
    assert_eq!(hints("write"), writes(true));
    assert_eq!(hints("edit"), writes(false));
}

#[tokio::test]
async fn edit_counts_overlapping_occurrences_and_reads_crlf_files_as_read_shows_them() {
    for (kind, fs, _dir) in file_systems() {
        let m = manager(Arc::clone(&fs));
        // `}\n}` occurs twice in `}\n}\n}`, the two sharing a brace: which one is unknown.
        fs.write(Path::new("f.rs"), b"    }\n}\n}\n".to_vec())
            .await
            .unwrap();
        let err = error(
            &m,
            "edit",
            json!({"path": "f.rs", "old_string": "}\n}", "new_string": "X"}),
        )
        .await;
        assert!(err.to_string().contains("occurs 2 times"), "{kind}: {err}");
        let err = error(
            &m,
            "edit",
            json!({"path": "f.rs", "old_string": "}\n}", "new_string": "X", "replace_all": true}),
        )
        .await;
        assert!(err.to_string().contains("overlapping"), "{kind}: {err}");
        assert_eq!(fs.read(Path::new("f.rs")).await.unwrap(), b"    }\n}\n}\n");

        // A CRLF file: `read` shows its lines without `\r`, and text copied from it edits
        // the file, keeping its line ends.
        fs.write(Path::new("w.txt"), b"one\r\ntwo\r\nthree\r\n".to_vec())
            .await
            .unwrap();
        assert_eq!(
            text(&m, "read", json!({"path": "w.txt"})).await,
            "     1\tone\n     2\ttwo\n     3\tthree",
            "{kind}"
        );
        text(
            &m,
            "edit",
            json!({"path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"}),
        )
        .await;
        assert_eq!(
            fs.read(Path::new("w.txt")).await.unwrap(),
            b"1\r\n2\r\nthree\r\n",
            "{kind}"
        );
        let err = error(
            &m,
            "edit",
            json!({"path": "w.txt", "old_string": "1\nthree", "new_string": "x"}),
        )
        .await;
        assert!(
            err.to_string().contains("(the file's lines end in CRLF)"),
            "{kind}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_of_one_file_are_all_kept() {
    // Calls outside one batch run at once (an MCP client's requests, sub-agents sharing a
    // tree): each edit must see the file as the ones before it left it.
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFileSystem::new(dir.path()).unwrap());
    let managers = [manager(Arc::clone(&fs)), manager(Arc::clone(&fs))].map(Arc::new);
    let lines: String = (0..12).map(|i| format!("line {i}\n")).collect();
    fs.write(Path::new("f.txt"), lines.into_bytes())
        .await
        .unwrap();
    let edits = (0..12).map(|i| {
        let m = Arc::clone(&managers[i % 2]);
        // The same file, spelled three ways.
        let path = ["f.txt", "./f.txt", "d/../f.txt"][i % 3];
        tokio::spawn(async move {
            let old = format!("line {i}\n");
            let new = format!("LINE {i}\n");
            text(
                &m,
                "edit",
                json!({"path": path, "old_string": old, "new_string": new}),
            )
            .await
        })
    });
    for edit in edits.collect::<Vec<_>>() {
        edit.await.unwrap();
    }
    let expected: String = (0..12).map(|i| format!("LINE {i}\n")).collect();
    assert_eq!(
        String::from_utf8(fs.read(Path::new("f.txt")).await.unwrap()).unwrap(),
        expected
    );
}

#[tokio::test]
async fn an_ambiguous_edit_says_on_which_lines_old_string_occurs() {
    // The error said how many times, not where: the model had to search for them to choose
    // the surrounding lines that make its text unique.
    for (kind, fs, _dir) in file_systems() {
        let m = manager(Arc::clone(&fs));
        fs.write(
            Path::new("dup.txt"),
            b"x = 1\ny = 2\nx = 1\n\nx = 1 x = 1\n".to_vec(),
        )
        .await
        .unwrap();
        let err = error(
            &m,
            "edit",
            json!({"path": "dup.txt", "old_string": "x = 1", "new_string": "x = 3"}),
        )
        .await;
        assert_eq!(
            err.to_string(),
            "Tool 'edit' failed: in \"dup.txt\": old_string occurs 4 times (on lines 1, 3 and 5); add surrounding lines to make it unique, or set replace_all to replace all 4",
            "{kind}"
        );
        // Many: the first lines are listed, then an ellipsis.
        let many: String = (0..30).map(|_| "same\n").collect();
        fs.write(Path::new("many.txt"), many.into_bytes())
            .await
            .unwrap();
        let err = error(
            &m,
            "edit",
            json!({"path": "many.txt", "old_string": "same", "new_string": "other"}),
        )
        .await;
        assert!(
            err.to_string().contains(
                "old_string occurs 30 times (on lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …);"
            ),
            "{kind}: {err}"
        );
        // Overlapping occurrences refused for replace_all are placed too; in a CRLF file,
        // text spanning lines is found with the file's line ends, and placed the same.
        fs.write(Path::new("w.txt"), b"}\r\n}\r\n}\r\n".to_vec())
            .await
            .unwrap();
        let err = error(
            &m,
            "edit",
            json!({"path": "w.txt", "old_string": "}\n}", "new_string": "X", "replace_all": true}),
        )
        .await;
        assert_eq!(
            err.to_string(),
            "Tool 'edit' failed: in \"w.txt\": old_string occurs 2 times (on lines 1 and 2), some of them overlapping, so replacing all of them is ambiguous; add surrounding lines to make it unique (the file's lines end in CRLF)",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn lines_an_edit_adds_to_a_crlf_file_end_in_crlf() {
    // A model writes `\n`: lines added by a one-line old_string went in with `\n` alone, and
    // the file's line ends were mixed from then on (which `read` does not show).
    for (kind, fs, _dir) in file_systems() {
        let m = manager(Arc::clone(&fs));
        fs.write(Path::new("w.txt"), b"one\r\ntwo\r\nthree\r\n".to_vec())
            .await
            .unwrap();
        text(
            &m,
            "edit",
            json!({"path": "w.txt", "old_string": "two", "new_string": "two\nhalf"}),
        )
        .await;
        assert_eq!(
            fs.read(Path::new("w.txt")).await.unwrap(),
            b"one\r\ntwo\r\nhalf\r\nthree\r\n",
            "{kind}"
        );
        // Line ends already given as CRLF stay as they are.
        text(
            &m,
            "edit",
            json!({"path": "w.txt", "old_string": "half", "new_string": "half\r\nmore"}),
        )
        .await;
        assert_eq!(
            fs.read(Path::new("w.txt")).await.unwrap(),
            b"one\r\ntwo\r\nhalf\r\nmore\r\nthree\r\n",
            "{kind}"
        );
        // An old_string that starts (or ends) with a line's end takes the `\r` before it
        // along: found as written, it left that `\r` beside the new text's own CRLF.
        text(
            &m,
            "edit",
            json!({"path": "w.txt", "old_string": "\nmore\r\nthree", "new_string": "\nMORE\nTHREE"}),
        )
        .await;
        assert_eq!(
            fs.read(Path::new("w.txt")).await.unwrap(),
            b"one\r\ntwo\r\nhalf\r\nMORE\r\nTHREE\r\n",
            "{kind}"
        );
        text(
            &m,
            "edit",
            json!({"path": "w.txt", "old_string": "two\n", "new_string": "2\n"}),
        )
        .await;
        assert_eq!(
            fs.read(Path::new("w.txt")).await.unwrap(),
            b"one\r\n2\r\nhalf\r\nMORE\r\nTHREE\r\n",
            "{kind}"
        );
        // A file whose line ends are mixed, or `\n`, gets the text as given.
        fs.write(Path::new("mixed.txt"), b"a\r\nb\nc\n".to_vec())
            .await
            .unwrap();
        text(
            &m,
            "edit",
            json!({"path": "mixed.txt", "old_string": "b", "new_string": "b\nx"}),
        )
        .await;
        assert_eq!(
            fs.read(Path::new("mixed.txt")).await.unwrap(),
            b"a\r\nb\nx\nc\n",
            "{kind}"
        );
        fs.write(Path::new("lf.txt"), b"a\nb\n".to_vec())
            .await
            .unwrap();
        text(
            &m,
            "edit",
            json!({"path": "lf.txt", "old_string": "a", "new_string": "a\r\nz"}),
        )
        .await;
        assert_eq!(
            fs.read(Path::new("lf.txt")).await.unwrap(),
            b"a\r\nz\nb\n",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn an_edit_that_would_grow_a_file_past_the_limit_is_refused_before_it_is_made() {
    // replace_all built the whole result, however large: a file of a million `a`s and a
    // new_string of a kilobyte asked for a gigabyte, and more aborted the process.
    use toolsmith_harness::tools::MAX_EDIT_GROWTH_BYTES;
    assert_eq!(MAX_EDIT_GROWTH_BYTES, 64 * 1024 * 1024);
    for (kind, fs, _dir) in file_systems() {
        let m = manager(Arc::clone(&fs));
        let original = "a".repeat(64 * 1024);
        fs.write(Path::new("a.txt"), original.clone().into_bytes())
            .await
            .unwrap();
        // Each of the 65,536 occurrences grows the file by 1,025 bytes: past the limit.
        let err = error(
            &m,
            "edit",
            json!({"path": "a.txt", "old_string": "a", "new_string": "b".repeat(1026), "replace_all": true}),
        )
        .await;
        assert_eq!(
            err.to_string(),
            "Tool 'edit' failed: in \"a.txt\": replacing the 65536 occurrences would make the \
             file 67239936 bytes, 67174400 more than it is; an edit adds at most 67108864 bytes",
            "{kind}"
        );
        assert_eq!(
            fs.read(Path::new("a.txt")).await.unwrap(),
            original.as_bytes(),
            "{kind}"
        );
        // Grown by the limit exactly, it is made (past what a local `read` reads by default).
        assert_eq!(
            text(
                &m,
                "edit",
                json!({"path": "a.txt", "old_string": "a", "new_string": "b".repeat(1025), "replace_all": true}),
            )
            .await,
            "Edited \"a.txt\": replaced 65536 occurrences",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn a_path_through_a_file_is_refused_alike_by_both_file_systems() {
    // On disk the error was the OS's ("Not a directory (os error 20)"); in memory a read said
    // the path did not exist, a write named the file in the way.
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("dir/file.txt"), b"x\n".to_vec())
            .await
            .unwrap();
        let m = ToolPreset::files(Arc::clone(&fs))
            .merge(ToolPreset::file_search(Arc::clone(&fs)))
            .into_manager("files")
            .unwrap();
        for path in ["dir/file.txt/x", "dir/file.txt/x/y.txt"] {
            for (tool, arguments, failed) in [
                ("read", json!({"path": path}), "Tool 'read' failed"),
                (
                    "write",
                    json!({"path": path, "content": "y"}),
                    "Tool 'write' failed",
                ),
                (
                    "edit",
                    json!({"path": path, "old_string": "x", "new_string": "y"}),
                    "Tool 'edit' failed",
                ),
                (
                    "search_file",
                    json!({"pattern": "x", "path": path}),
                    "Tool 'search_file' failed",
                ),
            ] {
                let err = error(&m, tool, arguments).await;
                assert_eq!(
                    err.to_string(),
                    format!("{failed}: {path:?}: dir/file.txt is a file, not a directory"),
                    "{kind}"
                );
            }
        }
    }
}
