//! Results across the boundary: a Toolsmith call's outcome as an MCP `CallToolResult`, and an
//! MCP `CallToolResult` as a Toolsmith result or [`ToolError`].

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;
use toolsmith_core::provider::error_for_model;
use toolsmith_core::{
    ContentPart, Image, JsonWithImages, ToolCallResult, ToolError, UserModelContent, value_from_str,
};

use super::tool_mapping::{OutputSchema, WRAPPED_RESULT_KEY};
use crate::expired_limit::ExpiredLimit;

/// How a served call's result is shaped for the client.
pub(crate) struct ResultShape<'a> {
    /// The tool's output schema as served, if it has one.
    pub(crate) output: Option<&'a OutputSchema>,
    /// The client negotiated 2026-07-28 or newer: structured content may be any value.
    pub(crate) any_structured: bool,
    /// Names to suggest in errors ("did you mean …").
    pub(crate) known_tools: &'a [&'a str],
    /// The time limit that ended the call, when one did (its error names it), and whether
    /// the call changes nothing (else its error says what it did may stand).
    pub(crate) expired: Option<(ExpiredLimit, bool)>,
}

/// A call's outcome as an MCP result: text as text, structured results as
/// `structuredContent` mirrored as text, text and images as `text` and `image` content
/// blocks in order, a structured result with images as the structured result with its
/// parts' `image` and `text` blocks, in order, after its text, and every failure (a result
/// the tool marked as an error, invalid arguments, a failed, timed-out or cancelled call) as
/// `isError: true` with the message a model can act on.
pub(crate) fn to_mcp(
    outcome: Result<ToolCallResult, ToolError>,
    shape: &ResultShape<'_>,
) -> CallToolResult {
    let result = match outcome {
        Ok(result) => result,
        Err(error) => {
            let message = match (&error, shape.expired) {
                (ToolError::Timeout { tool }, Some((limit, changes_nothing))) => {
                    limit.timed_out(tool, changes_nothing)
                }
                _ => error_for_model(&error, shape.known_tools),
            };
            return CallToolResult::error(vec![ContentBlock::text(message)]);
        }
    };
    if result.is_error() {
        return CallToolResult::error(vec![ContentBlock::text(result.content.to_text())]);
    }
    match result.content {
        UserModelContent::Text(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        UserModelContent::Json(value) => structured_result(value, shape),
        // Structured content is a value in MCP: text written beforehand is parsed here.
        UserModelContent::JsonText(text) => structured_result(text.to_value(), shape),
        UserModelContent::Parts(parts) => {
            CallToolResult::success(parts.iter().map(content_block).collect())
        }
        // A tool with an output schema must answer with structured content (MCP clients
        // take a result without it as an error): the value is that, the images follow its
        // text.
        UserModelContent::JsonWithImages(json) => {
            let (value, parts) = json.into_parts();
            let mut served = structured_result(value, shape);
            served.content.extend(parts.iter().map(content_block));
            served
        }
        // `UserModelContent` may grow: anything else is served as its text.
        other => CallToolResult::success(vec![ContentBlock::text(other.to_text())]),
    }
}

/// A structured result `value` as served: `structuredContent` (through the output schema's
/// wrapping) mirrored as a text block, or, where the client's revision takes only objects
/// and the tool has no output schema, that text block alone.
fn structured_result(value: Value, shape: &ResultShape<'_>) -> CallToolResult {
    match shape.output {
        // `structured` mirrors the value as text too.
        Some(output) => CallToolResult::structured(output.structured(value)),
        None if value.is_object() || shape.any_structured => CallToolResult::structured(value),
        // An older revision takes only objects as structured content: text alone.
        None => CallToolResult::success(vec![ContentBlock::text(value.to_string())]),
    }
}

/// A content part as an MCP content block: an image as an `image` block (base64 `data`
/// and `mimeType`, as MCP's `ImageContent` has them).
fn content_block(part: &ContentPart) -> ContentBlock {
    match part {
        ContentPart::Image(image) => ContentBlock::image(image.data(), image.media_type()),
        other => ContentBlock::text(other.to_text()),
    }
}

/// An MCP result as the outcome of the bridged tool `local_name` (`remote_name` on its server):
/// `isError` becomes [`ToolError::Execution`] with the server's message, or
/// [`ToolError::InvalidArguments`] when it is a Toolsmith server's refusal of the arguments
/// ([`refused_arguments`]); structured content is kept as a JSON result; content with an image is a
/// result of [parts](ToolCallResult::parts), each image block an image (one the model could not be
/// given, a text saying why, naming the tool), and beside structured content, a [structured result
/// with images](ToolCallResult::json_with_images) of the value and the content's other blocks as
/// parts, in order (the first text block that is the value's JSON text mirrors it, and is left
/// out), so that the value is still checked against the tool's output schema; anything else is
/// the content's text (other non-text blocks described in brackets). `wrapped`: the tool's output
/// schema says its structured results come as `{"result": …}`
/// ([`WRAPPED_RESULT_MARKER`](super::WRAPPED_RESULT_MARKER)), and the value is given back.
pub(crate) fn from_mcp(
    (local_name, remote_name): (&str, &str),
    result: CallToolResult,
    wrapped: bool,
) -> Result<ToolCallResult, ToolError> {
    if result.is_error == Some(true) {
        let text = content_text(&result.content);
        // The tool never ran: hooks, retry policies and the model must see bad arguments,
        // named by the local tool, the one the model calls.
        if let Some(reason) = refused_arguments(remote_name, &text) {
            return Err(ToolError::invalid_arguments(local_name, reason));
        }
        let message = if !text.is_empty() {
            // A Toolsmith server writes a failed call as `ToolError::Execution`'s text, which
            // already says "Tool 'name' failed: "; the error made here says it again. The
            // prefix is that error's own, so that the two cannot drift apart. Its other
            // failures name the tool the same way ("Tool 'name' timed out after 2 s …"):
            // the name is left out too, since the error made here names the tool (by its
            // local name, which may differ).
            let own_prefix = ToolError::execution(remote_name, "").to_string();
            let named = format!("Tool '{remote_name}' ");
            let reason = [own_prefix.as_str(), named.as_str()]
                .into_iter()
                .find_map(|prefix| text.strip_prefix(prefix).filter(|rest| !rest.is_empty()));
            match reason {
                Some(reason) => reason.to_owned(),
                None => text,
            }
        } else if let Some(value) = &result.structured_content {
            value.to_string()
        } else {
            "the server reported an error without a message".to_owned()
        };
        return Err(ToolError::execution(local_name, message));
    }
    let has_image = result
        .content
        .iter()
        .any(|block| matches!(block, ContentBlock::Image(_)));
    // Looked for only where the blocks are kept beside the value.
    let mirror = match &result.structured_content {
        Some(value) if has_image => mirror_block(&result.content, value),
        _ => None,
    };
    let structured = result.structured_content.map(|value| match value {
        Value::Object(mut wrapper)
            if wrapped && wrapper.len() == 1 && wrapper.contains_key(WRAPPED_RESULT_KEY) =>
        {
            wrapper.remove(WRAPPED_RESULT_KEY).unwrap_or_default()
        }
        value => value,
    });
    let part_of = |block: &ContentBlock| match block {
        ContentBlock::Image(image) => {
            match Image::from_base64(&image.mime_type, image.data.as_str()) {
                Ok(image) => ContentPart::Image(image),
                Err(err) => ContentPart::text(format!(
                    "[an image from tool '{local_name}' that cannot be shown: {err}]"
                )),
            }
        }
        other => ContentPart::text(block_text(other)),
    };
    Ok(match structured {
        // The value, and every other block in order (the images, which a structured result
        // alone would drop, and a caption or note beside them); the text mirroring the value
        // is not given twice.
        Some(value) if has_image => ToolCallResult {
            content: UserModelContent::JsonWithImages(JsonWithImages::new(
                value,
                result
                    .content
                    .iter()
                    .enumerate()
                    .filter(|&(at, _)| Some(at) != mirror)
                    .map(|(_, block)| part_of(block)),
            )),
            error_detail: None,
        },
        Some(value) => ToolCallResult::json(value),
        None if has_image => ToolCallResult::parts(result.content.iter().map(part_of)),
        None => ToolCallResult::text(content_text(&result.content)),
    })
}

/// Where in `blocks` the first text block is that mirrors the structured content
/// `structured` (MCP asks a server to give it as JSON text too, for clients that do not read
/// structured content): its JSON text, written compactly as ours is or otherwise (a Python
/// server indents it), read with bounded size and depth.
fn mirror_block(blocks: &[ContentBlock], structured: &Value) -> Option<usize> {
    blocks.iter().position(|block| match block {
        // A caption fails at its first letter; only JSON text is read whole.
        ContentBlock::Text(text) => {
            value_from_str(&text.text).is_ok_and(|mirrored| mirrored == *structured)
        }
        _ => false,
    })
}

/// The reason in `text`, when `text` is how a Toolsmith server refuses the arguments of its
/// tool `remote_name`: [`error_for_model`]'s rendering of [`ToolError::InvalidArguments`]
/// ("Invalid arguments for tool 'x': REASON. Correct the arguments and call 'x' again."), or
/// that error's own text without the request to call again. The frame is worked out from
/// `error_for_model` itself, so that the two cannot drift apart; the full stop the rendering
/// ends the reason with is dropped with the request (a local error's reason has none, and
/// rendering it again adds it back). A refusal naming another tool is not this one's.
pub(crate) fn refused_arguments<'a>(remote_name: &str, text: &'a str) -> Option<&'a str> {
    // A reason that already ends a sentence, so that the rendering adds no full stop of its
    // own; control characters, which no text a server writes holds by chance.
    const MARK: &str = "\u{1}reason\u{2}.";
    let rendered = error_for_model(&ToolError::invalid_arguments(remote_name, MARK), &[]);
    let (prefix, suffix) = rendered.split_once(MARK)?;
    let rest = text.strip_prefix(prefix)?;
    let reason = match rest.strip_suffix(suffix) {
        Some(reason) => reason.strip_suffix('.').unwrap_or(reason),
        None => rest,
    };
    (!reason.trim().is_empty()).then_some(reason)
}

/// The content blocks as one text, one block a line.
fn content_text(blocks: &[ContentBlock]) -> String {
    blocks.iter().map(block_text).collect::<Vec<_>>().join("\n")
}

/// A content block as text: its text, or a non-text block described in brackets.
fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => {
            format!(
                "[image: {}, {} bytes of base64]",
                image.mime_type,
                image.data.len()
            )
        }
        ContentBlock::Audio(audio) => {
            format!(
                "[audio: {}, {} bytes of base64]",
                audio.mime_type,
                audio.data.len()
            )
        }
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { uri, .. } => format!("[resource: {uri}]"),
            #[allow(unreachable_patterns)]
            _ => "[resource]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link: {}]", link.uri),
        #[allow(unreachable_patterns)]
        _ => "[content]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;
    use toolsmith_core::JsonText;

    fn shape(any_structured: bool) -> ResultShape<'static> {
        ResultShape {
            output: None,
            any_structured,
            known_tools: &[],
            expired: None,
        }
    }

    #[test]
    fn structured_results_are_mirrored_as_text() {
        let served = to_mcp(Ok(ToolCallResult::json(json!({"n": 1}))), &shape(false));
        assert_eq!(served.structured_content, Some(json!({"n": 1})));
        assert_eq!(served.content[0].as_text().unwrap().text, r#"{"n":1}"#);
        assert_eq!(served.is_error, Some(false));
    }

    #[test]
    fn json_text_is_served_as_the_value_it_is() {
        let text = || ToolCallResult::json_text(JsonText::new(r#"{"n":1}"#).unwrap());
        for any_structured in [false, true] {
            assert_eq!(
                to_mcp(Ok(text()), &shape(any_structured)),
                to_mcp(
                    Ok(ToolCallResult::json(json!({"n": 1}))),
                    &shape(any_structured)
                )
            );
        }
        let list = ToolCallResult::json_text(JsonText::new("[1,2]").unwrap());
        let old = to_mcp(Ok(list), &shape(false));
        assert_eq!(old.structured_content, None);
        assert_eq!(old.content[0].as_text().unwrap().text, "[1,2]");
    }

    #[test]
    fn non_objects_without_a_schema_are_text_for_older_revisions() {
        let old = to_mcp(Ok(ToolCallResult::json(json!([1, 2]))), &shape(false));
        assert_eq!(old.structured_content, None);
        assert_eq!(old.content[0].as_text().unwrap().text, "[1,2]");
        let new = to_mcp(Ok(ToolCallResult::json(json!([1, 2]))), &shape(true));
        assert_eq!(new.structured_content, Some(json!([1, 2])));
    }

    #[test]
    fn failures_are_tool_errors() {
        let invalid = to_mcp(
            Err(ToolError::invalid_arguments(
                "add",
                "/a: -1 is less than the minimum of 0",
            )),
            &shape(false),
        );
        assert_eq!(invalid.is_error, Some(true));
        assert!(
            invalid.content[0]
                .as_text()
                .unwrap()
                .text
                .contains("/a: -1")
        );
        let marked = to_mcp(Ok(ToolCallResult::error("no such row")), &shape(false));
        assert_eq!(marked.is_error, Some(true));
    }

    #[test]
    fn a_served_failure_names_the_local_tool_once() {
        let served = |error: ToolError| to_mcp(Err(error), &shape(false));
        let back = |error: ToolError| from_mcp(("slow_2", "slow"), served(error), false);
        // Every failure a Toolsmith server writes names its tool; the bridge's error names
        // the local one, once.
        assert_eq!(
            back(ToolError::execution("slow", "disk full"))
                .unwrap_err()
                .to_string(),
            "Tool 'slow_2' failed: disk full"
        );
        // A timed-out call's text names its limit and what may have taken effect.
        let limit = ExpiredLimit::Call(Duration::from_millis(300));
        let timed_out = to_mcp(
            Err(ToolError::timeout("slow")),
            &ResultShape {
                expired: Some((limit, false)),
                ..shape(false)
            },
        );
        assert_eq!(
            from_mcp(("slow_2", "slow"), timed_out, false)
                .unwrap_err()
                .to_string(),
            format!(
                "Tool 'slow_2' failed: {}",
                limit
                    .timed_out("slow", false)
                    .strip_prefix("Tool 'slow' ")
                    .unwrap()
            )
        );
        assert_eq!(
            back(ToolError::timeout("slow")).unwrap_err().to_string(),
            "Tool 'slow_2' failed: timed out"
        );
        // Another tool's name, or none, is the server's text as it is.
        for text in ["Tool 'other' timed out", "Cancelled: shutting down"] {
            let error = from_mcp(
                ("slow_2", "slow"),
                CallToolResult::error(vec![ContentBlock::text(text)]),
                false,
            );
            assert_eq!(error.unwrap_err(), ToolError::execution("slow_2", text));
        }
    }

    #[test]
    fn a_served_refusal_of_the_arguments_comes_back_as_one() {
        let long = "x".repeat(300);
        for (remote, reason) in [
            ("add", "/a: -1 is less than the minimum of 0"),
            ("add", "is the path relative?"),
            ("add", "/a: 1.5 is not of type \"integer\"; /b: missing"),
            // The rendering cuts a long name; the frame is cut alike.
            (long.as_str(), "/a: bad"),
        ] {
            let served = to_mcp(
                Err(ToolError::invalid_arguments(remote, reason)),
                &shape(false),
            );
            assert_eq!(
                from_mcp(("local_add", remote), served, false).unwrap_err(),
                ToolError::invalid_arguments("local_add", reason)
            );
        }
        // The error's own text, without the request to call again, is one too.
        let text = ToolError::invalid_arguments("add", "/a: bad").to_string();
        assert_eq!(refused_arguments("add", &text), Some("/a: bad"));
        // Nothing after the frame, or another tool's frame, is not.
        let empty = error_for_model(&ToolError::invalid_arguments("add", ""), &[]);
        assert_eq!(refused_arguments("add", &empty), None);
        assert_eq!(refused_arguments("sub", &text), None);
        assert_eq!(refused_arguments("add", "Invalid arguments"), None);
    }

    #[test]
    fn remote_results_come_back() {
        let err = from_mcp(
            ("fs_read", "read"),
            CallToolResult::error(vec![ContentBlock::text("gone")]),
            false,
        );
        assert_eq!(err.unwrap_err(), ToolError::execution("fs_read", "gone"));
        let ok = from_mcp(
            ("calc", "calc"),
            CallToolResult::structured(json!({"sum": 3})),
            false,
        )
        .unwrap();
        assert_eq!(ok, ToolCallResult::json(json!({"sum": 3})));
        // A marked wrapper's value is given back; an object that is more than the wrapper,
        // or a tool whose schema is not marked, keeps what came.
        let wrapped = |value: Value, marked: bool| {
            from_mcp(
                ("count", "count"),
                CallToolResult::structured(value),
                marked,
            )
            .unwrap()
        };
        assert_eq!(
            wrapped(json!({"result": 3}), true),
            ToolCallResult::json(json!(3))
        );
        assert_eq!(
            wrapped(json!({"result": 3, "more": 1}), true),
            ToolCallResult::json(json!({"result": 3, "more": 1}))
        );
        assert_eq!(
            wrapped(json!({"result": 3}), false),
            ToolCallResult::json(json!({"result": 3}))
        );
        let audio = from_mcp(
            ("say", "say"),
            CallToolResult::success(vec![
                ContentBlock::text("a sound:"),
                ContentBlock::audio("AAAA", "audio/wav"),
            ]),
            false,
        )
        .unwrap();
        assert_eq!(
            audio.content.to_text(),
            "a sound:\n[audio: audio/wav, 4 bytes of base64]"
        );
    }

    #[test]
    fn images_cross_both_ways() {
        let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let served = to_mcp(
            Ok(ToolCallResult::parts([
                ContentPart::text("a picture:"),
                image.clone().into(),
            ])),
            &shape(false),
        );
        assert_eq!(
            served.content,
            [
                ContentBlock::text("a picture:"),
                ContentBlock::image("iVBORw0KGgo=", "image/png")
            ]
        );
        let back = from_mcp(("pic", "pic"), served, false).unwrap();
        assert_eq!(
            back,
            ToolCallResult::parts([ContentPart::text("a picture:"), image.into()])
        );
        // An image the providers would refuse reaches the model as a text saying why.
        let bad = from_mcp(
            ("pic", "pic"),
            CallToolResult::success(vec![ContentBlock::image("AAAA", "image/png")]),
            false,
        )
        .unwrap();
        assert_eq!(bad.content.images().count(), 0);
        assert_eq!(
            bad.content.to_text(),
            "[an image from tool 'pic' that cannot be shown: the image's data is not image/png: its bytes begin as no supported image type]"
        );
    }

    #[test]
    fn a_structured_result_keeps_the_images_beside_it() {
        let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let with_image = |value: Value| {
            let mut served = CallToolResult::structured(value);
            served
                .content
                .push(ContentBlock::image(image.data(), image.media_type()));
            served
                .content
                .push(ContentBlock::image("AAAA", "image/png"));
            served
        };
        let back = from_mcp(("shot", "shot"), with_image(json!({"width": 800})), false).unwrap();
        // The value stays a value (checked against the tool's output schema), the images
        // beside it; the text mirroring the value is not given twice.
        assert_eq!(
            back.content,
            UserModelContent::JsonWithImages(JsonWithImages::new(
                json!({"width": 800}),
                [
                    image.clone().into(),
                    ContentPart::text(
                        "[an image from tool 'shot' that cannot be shown: the image's data is not image/png: its bytes begin as no supported image type]"
                    ),
                ]
            ))
        );
        assert!(back.content.is_json() && !back.is_error());
        // A marked wrapper's value is the value given.
        let wrapped = from_mcp(("shot", "shot"), with_image(json!({"result": 3})), true).unwrap();
        assert_eq!(wrapped.content.json_value().as_deref(), Some(&json!(3)));
        assert_eq!(wrapped.content.images().collect::<Vec<_>>(), [&image]);
    }

    #[test]
    fn text_beside_a_structured_value_and_images_is_kept_in_order_once() {
        let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let image_block = || ContentBlock::image(image.data(), image.media_type());
        // A server's caption before the image, the value mirrored (indented, as a Python
        // server writes it) after it, and a note a first hop wrote for an image it could
        // not read.
        let note = "[an image from tool 'shot' that cannot be shown: too large]";
        let mut served = CallToolResult::structured(json!({"width": 800}));
        served.content = vec![
            ContentBlock::text("The page:"),
            image_block(),
            ContentBlock::text("{\n  \"width\": 800\n}"),
            ContentBlock::text(note),
        ];
        let back = from_mcp(("shot", "shot"), served, false).unwrap();
        let expected = UserModelContent::JsonWithImages(JsonWithImages::new(
            json!({"width": 800}),
            [
                ContentPart::text("The page:"),
                image.clone().into(),
                ContentPart::text(note),
            ],
        ));
        assert_eq!(back.content, expected);

        // Only the first mirror is ours to drop: text that is the value again, or another
        // value's JSON, is the server's to say.
        let mut served = CallToolResult::structured(json!({"result": 3}));
        served.content.extend([
            image_block(),
            ContentBlock::text(r#"{"result":3}"#),
            ContentBlock::text("3"),
        ]);
        let back = from_mcp(("count", "count"), served, true).unwrap();
        assert_eq!(
            back.content,
            UserModelContent::JsonWithImages(JsonWithImages::new(
                json!(3),
                [
                    image.clone().into(),
                    ContentPart::text(r#"{"result":3}"#),
                    ContentPart::text("3"),
                ]
            ))
        );

        // Served by us, a note among the parts is a text block in its place, after the
        // value's text; read back, the same result.
        let result = ToolCallResult {
            content: expected,
            error_detail: None,
        };
        let served = to_mcp(Ok(result.clone()), &shape(false));
        assert_eq!(
            served.content,
            [
                ContentBlock::text(r#"{"width":800}"#),
                ContentBlock::text("The page:"),
                image_block(),
                ContentBlock::text(note),
            ]
        );
        assert_eq!(from_mcp(("shot", "shot"), served, false).unwrap(), result);
    }

    #[test]
    fn a_structured_result_with_images_is_served_as_structured_content_and_image_blocks() {
        let image = Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        let result = |value: Value| ToolCallResult::json_with_images(value, [image.clone()]);
        let image_block = ContentBlock::image(image.data(), image.media_type());
        let page = json!({"url": "https://example.com"});

        // No output schema: the object as structured content, its text, then the image.
        let served = to_mcp(Ok(result(page.clone())), &shape(false));
        assert_eq!(served.structured_content, Some(page.clone()));
        assert_eq!(
            served.content,
            [ContentBlock::text(page.to_string()), image_block.clone()]
        );
        assert_eq!(served.is_error, Some(false));
        assert_eq!(
            from_mcp(("browse", "browse"), served, false).unwrap(),
            result(page)
        );

        // An output schema that wraps: the value wrapped, as a JSON result's is, and given
        // back unwrapped.
        let wrapping = OutputSchema {
            schema: serde_json::Map::new(),
            wrapped: true,
        };
        let served = to_mcp(
            Ok(result(json!(3))),
            &ResultShape {
                output: Some(&wrapping),
                ..shape(false)
            },
        );
        assert_eq!(served.structured_content, Some(json!({"result": 3})));
        assert_eq!(served.content.last(), Some(&image_block));
        assert_eq!(
            from_mcp(("count", "count"), served, true).unwrap(),
            result(json!(3))
        );

        // An older revision without a schema takes no list as structured content: text,
        // then the image.
        let old = to_mcp(Ok(result(json!([1, 2]))), &shape(false));
        assert_eq!(old.structured_content, None);
        assert_eq!(old.content, [ContentBlock::text("[1,2]"), image_block]);

        // An error result is its text alone, as a parts result's is.
        let failed = ToolCallResult {
            error_detail: Some("the page did not load".into()),
            ..result(json!({"url": "https://example.com"}))
        };
        let served = to_mcp(Ok(failed), &shape(false));
        assert_eq!(served.is_error, Some(true));
        assert_eq!(served.structured_content, None);
        assert_eq!(served.content.len(), 1);
    }
}
