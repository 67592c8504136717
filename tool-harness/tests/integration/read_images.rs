//! `read` on an image file shows the model the image; other files read as before; the
//! sandbox, the image cap and the file system's read limit hold for images too; and
//! `run_input` sends a user's images as `send_input` does.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;
use toolsmith_core::provider::Provider;
use toolsmith_core::{
    CancellationToken, ContentPart, Image, MAX_IMAGE_BASE64_LEN, ToolCallResult, ToolError,
};
use toolsmith_harness::agent::{AgentSession, FINAL_ANSWER_TOOL, UserInput};
use toolsmith_harness::model::{Message, ScriptedModel, ScriptedTurn};
use toolsmith_harness::tools::{ReadLimits, ReadTool};
use toolsmith_harness::{FileSystem, InMemoryFileSystem, LocalFileSystem, ToolPreset};

use crate::common::{call, error, file_systems, text};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";
const JPEG: &[u8] = b"\xFF\xD8\xFF\xE0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0";
const GIF: &[u8] = b"GIF89a\x01\0\x01\0\x80\0\0\xFF\xFF\xFF\0\0\0!\xF9\x04";
const WEBP: &[u8] = b"RIFF\x24\0\0\0WEBPVP8 \x18\0\0\0\x30\x01\0\x9d\x01\x2a";

/// The largest file whose base64 fits in an image.
const MAX_IMAGE_FILE_BYTES: usize = MAX_IMAGE_BASE64_LEN / 4 * 3;

fn manager(fs: Arc<dyn FileSystem>) -> toolsmith_core::ToolCallManager {
    ToolPreset::files(fs).into_manager("files").unwrap()
}

/// The result of a `read` that must succeed.
async fn read(
    manager: &toolsmith_core::ToolCallManager,
    arguments: serde_json::Value,
) -> ToolCallResult {
    call(manager, "read", arguments.clone())
        .await
        .unwrap_or_else(|err| panic!("read {arguments} failed: {err}"))
}

#[tokio::test]
async fn read_shows_each_image_type_as_an_image_found_by_its_bytes() {
    for (kind, fs, _dir) in file_systems() {
        // The last one's name says nothing of an image: its bytes do.
        let files: [(&str, &str, &[u8]); 5] = [
            ("shots/login.png", "image/png", PNG),
            ("photo.jpg", "image/jpeg", JPEG),
            ("spinner.gif", "image/gif", GIF),
            ("logo.webp", "image/webp", WEBP),
            ("diagram.dat", "image/png", PNG),
        ];
        for (path, _, bytes) in files {
            fs.write(Path::new(path), bytes.to_vec()).await.unwrap();
        }
        let m = manager(fs);
        for (path, media_type, bytes) in files {
            let result = read(&m, json!({ "path": path })).await;
            let expected = Image::from_bytes(media_type, bytes).unwrap();
            assert_eq!(
                result,
                ToolCallResult::parts([
                    ContentPart::text(format!(
                        "{path:?}: an {media_type} image, {} bytes",
                        bytes.len()
                    )),
                    expected.clone().into(),
                ]),
                "{kind} {path}"
            );
            let image = result.content.images().next().unwrap();
            assert_eq!(image.media_type(), media_type, "{kind} {path}");
            assert_eq!(image.data(), expected.data(), "{kind} {path}");
            assert!(!result.is_error());
        }
    }
}

#[tokio::test]
async fn text_and_other_binary_files_read_as_before_whatever_their_names() {
    for (kind, fs, _dir) in file_systems() {
        // Named as images, they are not: the bytes decide.
        fs.write(Path::new("notes.png"), b"not a picture\n".to_vec())
            .await
            .unwrap();
        fs.write(Path::new("app.jpg"), b"\x7fELF\x02\x01\x01\0\0\0".to_vec())
            .await
            .unwrap();
        // A PNG's signature cut short is not a PNG.
        fs.write(Path::new("half.png"), b"\x89PNG\r\n\0".to_vec())
            .await
            .unwrap();
        let m = manager(fs);
        assert_eq!(
            read(&m, json!({"path": "notes.png"})).await,
            ToolCallResult::text("     1\tnot a picture"),
            "{kind}"
        );
        assert_eq!(
            error(&m, "read", json!({"path": "app.jpg"}))
                .await
                .to_string(),
            "Tool 'read' failed: refused \"app.jpg\": it looks like a binary file (10 bytes, a NUL byte at offset 7); read shows text files only",
            "{kind}"
        );
        assert_eq!(
            error(&m, "read", json!({"path": "half.png"}))
                .await
                .to_string(),
            "Tool 'read' failed: refused \"half.png\": it looks like a binary file (7 bytes, a NUL byte at offset 6); read shows text files only",
            "{kind}"
        );
    }
}

#[tokio::test]
async fn an_image_past_the_cap_is_refused_naming_the_file_its_size_and_the_limit() {
    for (kind, fs, _dir) in file_systems() {
        let mut fits = PNG.to_vec();
        fits.resize(MAX_IMAGE_FILE_BYTES, 0);
        fs.write(Path::new("fits.png"), fits.clone()).await.unwrap();
        let mut too_large = fits.clone();
        too_large.push(0);
        fs.write(Path::new("big.png"), too_large).await.unwrap();
        let m = manager(fs);

        let result = read(&m, json!({"path": "fits.png"})).await;
        let image = result.content.images().next().unwrap();
        assert_eq!(image.data().len(), MAX_IMAGE_BASE64_LEN, "{kind}");

        let err = error(&m, "read", json!({"path": "big.png"})).await;
        assert!(matches!(err, ToolError::Execution { .. }), "{kind} {err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "Tool 'read' failed: refused \"big.png\": it is an image/png image of {} bytes, \
                 more than the {MAX_IMAGE_FILE_BYTES} bytes an image may be (5 MiB as base64, \
                 the most every provider takes); make it smaller",
                MAX_IMAGE_FILE_BYTES + 1
            ),
            "{kind}"
        );
    }
}

#[tokio::test]
async fn reading_an_image_is_bounded_by_the_file_systems_read_limit() {
    // A file past the file system's limit is refused from its size, before it is read, as a
    // text file is: the image cap is checked only on what the limit let through.
    let dir = tempfile::tempdir().unwrap();
    let mut huge = PNG.to_vec();
    huge.resize(4096, 0);
    std::fs::write(dir.path().join("huge.png"), &huge).unwrap();
    let fs = LocalFileSystem::new(dir.path())
        .unwrap()
        .with_max_read_bytes(1024);
    let m = manager(Arc::new(fs));
    assert_eq!(
        error(&m, "read", json!({"path": "huge.png"}))
            .await
            .to_string(),
        "Tool 'read' failed: refused \"huge.png\": it is 4096 bytes, more than the 1024-byte limit"
    );
}

#[tokio::test]
async fn images_outside_the_sandbox_are_refused_as_text_files_are() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("inside.png"), PNG).unwrap();
    std::fs::write(outside.join("secret.png"), PNG).unwrap();
    symlink("../outside/secret.png", root.join("rel_link.png")).unwrap();
    symlink(outside.join("secret.png"), root.join("abs_link.png")).unwrap();
    symlink("inside.png", root.join("inside_link.png")).unwrap();
    let m = manager(Arc::new(LocalFileSystem::new(&root).unwrap()));

    // Inside the root, directly or through a link that stays inside, it is shown.
    for path in ["inside.png", "inside_link.png"] {
        let result = read(&m, json!({ "path": path })).await;
        assert_eq!(result.content.images().count(), 1, "{path}");
    }
    let outside_path = outside.join("secret.png");
    for path in [
        "../outside/secret.png",
        outside_path.to_str().unwrap(),
        "rel_link.png",
        "abs_link.png",
    ] {
        let err = error(&m, "read", json!({ "path": path })).await;
        let message = err.to_string();
        assert!(
            message.contains("outside the root") || message.contains("leads above the root"),
            "{path}: {message}"
        );
        assert!(message.contains(path), "{path}: {message}");
    }
}

#[tokio::test]
async fn offset_and_limit_do_not_apply_to_an_image_and_the_result_says_so() {
    for (kind, fs, _dir) in file_systems() {
        fs.write(Path::new("chart.gif"), GIF.to_vec())
            .await
            .unwrap();
        let m = manager(fs);
        let result = read(&m, json!({"path": "chart.gif", "offset": 40, "limit": 10})).await;
        assert_eq!(
            result,
            ToolCallResult::parts([
                ContentPart::text(format!(
                    "\"chart.gif\": an image/gif image, {} bytes (shown whole: offset and limit \
                     apply to text files only)",
                    GIF.len()
                )),
                Image::from_bytes("image/gif", GIF).unwrap().into(),
            ]),
            "{kind}"
        );
        // Only one of them is noted too.
        let result = read(&m, json!({"path": "chart.gif", "limit": 10})).await;
        assert!(result.content.to_text().contains("(shown whole"), "{kind}");
    }
}

#[tokio::test]
async fn with_images_turned_off_an_image_is_refused_saying_why() {
    let fs: Arc<dyn FileSystem> = Arc::new(
        InMemoryFileSystem::new()
            .with_file("shot.png", PNG)
            .with_file("notes.txt", "hi\n"),
    );
    let limits = ReadLimits {
        images: false,
        ..ReadLimits::default()
    };
    for m in [
        ToolPreset::files_with(Arc::clone(&fs), limits)
            .into_manager("files")
            .unwrap(),
        {
            let m = toolsmith_core::ToolCallManager::new("s");
            m.register(Arc::new(ReadTool::new(Arc::clone(&fs), limits)))
                .unwrap();
            m
        },
    ] {
        assert_eq!(
            error(&m, "read", json!({"path": "shot.png"}))
                .await
                .to_string(),
            format!(
                "Tool 'read' failed: refused \"shot.png\": it is an image/png image ({} bytes), \
                 and this read tool shows text files only",
                PNG.len()
            )
        );
        assert_eq!(
            text(&m, "read", json!({"path": "notes.txt"})).await,
            "     1\thi"
        );
    }
    let preset = ToolPreset::files_with(fs, limits);
    assert_eq!(preset.names(), ["read", "write", "edit"]);
    assert!(ReadLimits::default().images, "on by default");
}

#[tokio::test]
async fn a_read_image_renders_as_an_anthropic_image_block() {
    let fs = Arc::new(InMemoryFileSystem::new().with_file("shot.png", PNG));
    let m = manager(fs);
    let result = call(&m, "read", json!({"path": "shot.png"})).await;
    let rendered = Provider::Anthropic.render_results([("toolu_1", "read", &result)]);
    let image = Image::from_bytes("image/png", PNG).unwrap();
    assert_eq!(
        rendered,
        [json!({"role": "user", "content": [{
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [
                {"type": "text", "text": format!("\"shot.png\": an image/png image, {} bytes", PNG.len())},
                {"type": "image", "source": {
                    "type": "base64", "media_type": "image/png", "data": image.data()}},
            ],
        }]})]
    );
}

#[tokio::test]
async fn a_model_that_calls_read_on_an_image_is_shown_it() {
    let fs = Arc::new(InMemoryFileSystem::new().with_file("ui/login.png", PNG));
    let model = ScriptedModel::new([
        ScriptedTurn::call("read", json!({"path": "ui/login.png"})),
        ScriptedTurn::text("The login button is blue."),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("scripted")
        .with_toolshed(toolsmith_core::ToolShed::new().tools(ToolPreset::files(fs)))
        .build()
        .unwrap();
    let names = session.tool_manager().names();
    session.tool_manager().activate(&names);
    let run = session.run("What colour is the button?").await.unwrap();
    assert_eq!(run.text, "The login button is blue.");
    let requests = model.requests();
    let results = requests[1].messages.last().unwrap().results();
    assert_eq!(
        results[0].result.content.images().collect::<Vec<_>>(),
        [&Image::from_bytes("image/png", PNG).unwrap()]
    );
}

fn photo() -> Image {
    Image::from_bytes("image/jpeg", JPEG).unwrap()
}

#[tokio::test]
async fn run_input_sends_the_users_images_and_keeps_no_conversation() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("A cat."),
        ScriptedTurn::text("Still a cat."),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("scripted")
        .build()
        .unwrap();
    let run = session
        .run_input(UserInput::new("What is this?").image(photo()))
        .await
        .unwrap();
    assert_eq!(run.text, "A cat.");
    assert_eq!(
        run.transcript[0],
        Message::user_with_images("What is this?", vec![photo()])
    );
    let stop = CancellationToken::new();
    session
        .run_input_with_cancellation(UserInput::new("And this?").image(photo()), stop)
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(
        requests[0].messages,
        [Message::user_with_images("What is this?", vec![photo()])]
    );
    // A run of its own each: neither saw the other, nor kept anything for `send`.
    assert_eq!(
        requests[1].messages,
        [Message::user_with_images("And this?", vec![photo()])]
    );
    assert!(session.transcript().await.is_empty());
    // Text alone converts, as for `send_input`.
    let model = ScriptedModel::new([ScriptedTurn::text("Hi.")]);
    let session = AgentSession::builder(model.clone())
        .with_model("scripted")
        .build()
        .unwrap();
    session.run_input("Hello").await.unwrap();
    assert_eq!(model.requests()[0].messages, [Message::user("Hello")]);
}

/// What the photo shows.
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Seen {
    /// The animal.
    animal: String,
}

#[tokio::test]
async fn the_typed_forms_take_images_too() {
    let model = ScriptedModel::new([
        ScriptedTurn::text("A cat."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"animal": "cat"})),
        ScriptedTurn::text("A cat again."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"animal": "cat"})),
        ScriptedTurn::text("Still."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"animal": "cat"})),
        ScriptedTurn::text("Yes."),
        ScriptedTurn::call(FINAL_ANSWER_TOOL, json!({"animal": "cat"})),
    ]);
    let session = AgentSession::builder(model.clone())
        .with_model("scripted")
        .build()
        .unwrap();
    let asked = || UserInput::new("What animal?").image(photo());
    let cat = Seen {
        animal: "cat".into(),
    };
    let token = CancellationToken::new;
    assert_eq!(
        session.run_input_as::<Seen>(asked()).await.unwrap().value,
        cat
    );
    assert_eq!(
        session
            .run_input_as_with_cancellation::<Seen>(asked(), token())
            .await
            .unwrap()
            .value,
        cat
    );
    assert_eq!(
        session.send_input_as::<Seen>(asked()).await.unwrap().value,
        cat
    );
    assert_eq!(
        session
            .send_input_as_with_cancellation::<Seen>(asked(), token())
            .await
            .unwrap()
            .value,
        cat
    );
    let requests = model.requests();
    let asked_message = Message::user_with_images("What animal?", vec![photo()]);
    // Each run's first request: the two runs alone, the sends continuing the kept conversation.
    assert_eq!(requests[0].messages, std::slice::from_ref(&asked_message));
    assert_eq!(requests[2].messages, std::slice::from_ref(&asked_message));
    assert_eq!(requests[4].messages, std::slice::from_ref(&asked_message));
    assert_eq!(requests[6].messages.first(), Some(&asked_message));
    assert_eq!(requests[6].messages.last(), Some(&asked_message));
    assert_eq!(requests[6].messages.len(), 3);
}
