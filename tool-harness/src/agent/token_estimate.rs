//! [`TokenEstimate`]: how many input tokens a request is estimated to take, for the context
//! window guard of a session built
//! [`with_context_window`](super::AgentSessionBuilder::with_context_window).

use std::sync::Arc;

use toolsmith_core::{ContentPart, Image, ToolDeclarations, UserModelContent};

use crate::model::{ChatRequest, ImageLimits, Message, ToolResultMessage, Usage, image_places};
use crate::serialized_len::serialized_len;

/// UTF-8 bytes counted as one token where no provider count is known. Tokenizers of the
/// common APIs average about 4 characters of English (or of JSON) a token; 3 counts more
/// tokens than that, so a request is rather shortened once too often than sent to be
/// refused. Bytes, not characters: a script written with 3 bytes a character (Chinese,
/// Japanese) is counted about a token a character, as its tokenizers take it, where
/// characters / 3 would count a third of that.
pub(crate) const BYTES_PER_TOKEN: u64 = 3;

/// Tokens counted for each message, tool call and tool result besides its content: the
/// role and framing tokens every format adds (OpenAI documents 3 or 4 a message).
pub(crate) const PART_OVERHEAD_TOKENS: u64 = 4;

/// Tokens counted for an image of unknown size, and the most counted for any: its base64
/// text says nothing of what the model reads. Anthropic counts about width × height / 750
/// tokens an image and scales larger ones down to about 1,600; OpenAI's high detail costs
/// at most about 1,100 and Gemini 258 a 768-pixel tile: 1,600 is at or above each for an
/// image as the providers take it.
pub(crate) const IMAGE_TOKENS: u64 = 1_600;

/// The tokens counted for `image`: for a size its header gave, the most any provider counts
/// for it, at most [`IMAGE_TOKENS`] — Anthropic's width × height / 750 once scaled within
/// 1,568 px a side and 1.15 megapixels; OpenAI's high detail, 85 and 170 a 512-pixel tile
/// once scaled within 2,048 px and then to 768 px its shorter side; Gemini's 258 within 384
/// px, else 258 a 768-pixel tile (docs.claude.com "Vision", platform.openai.com "Images and
/// vision", ai.google.dev "Token counting") — so that an icon counts a few hundred tokens,
/// not 1,600; [`IMAGE_TOKENS`] for an image of unknown size.
pub(crate) fn image_tokens(image: &Image) -> u64 {
    let Some((width, height)) = image.dimensions() else {
        return IMAGE_TOKENS;
    };
    let (width, height) = (f64::from(width), f64::from(height));
    let anthropic = {
        let scale = (1_568.0 / width.max(height))
            .min((1_150_000.0 / (width * height)).sqrt())
            .min(1.0);
        (width * scale) * (height * scale) / 750.0
    };
    let openai = {
        let fit = (2_048.0 / width.max(height)).min(1.0);
        let (width, height) = (width * fit, height * fit);
        let shorter = (768.0 / width.min(height)).min(1.0);
        let tiles = (width * shorter / 512.0).ceil() * (height * shorter / 512.0).ceil();
        85.0 + 170.0 * tiles
    };
    let gemini = if width <= 384.0 && height <= 384.0 {
        258.0
    } else {
        (width / 768.0).ceil() * (height / 768.0).ceil() * 258.0
    };
    // As an integer, at most IMAGE_TOKENS (a float past u64 saturates in the cast).
    (anthropic.max(openai).max(gemini).ceil() as u64).min(IMAGE_TOKENS)
}

/// The estimate of a run's requests: the input tokens the provider reported for the last
/// request answered (exact), and how much its request had, so that a later request whose
/// messages begin with that one's counts only what was added since by
/// [`BYTES_PER_TOKEN`] (a `send` starts from the kept conversation's). Without a report (a
/// conversation's first request, a provider that reports no input tokens, or a
/// conversation shortened, edited or stripped of images since), the whole request is
/// counted so: its system prompt, messages and tool declarations; the count of its messages
/// is kept, and of its tools, so that the next request (which begins with the same
/// messages, and declares the same tools unless they changed) reads only the messages
/// added: a long run of a provider that reports no usage does not count its whole
/// conversation again before each request.
///
/// With it, the other thing known of the request's messages that holds while they are only
/// added to: how far they were checked against the model's image limits
/// ([`images_within`](Self::images_within)). Both are forgotten together.
#[derive(Debug, Clone, Default)]
pub(crate) struct TokenEstimate {
    measured: Option<Measured>,
    /// How many of the request's first messages were counted by their bytes, and how many
    /// tokens they came to.
    counted: Option<(usize, u64)>,
    /// The tools last counted by their bytes, and their tokens.
    tools_counted: Option<(Arc<ToolDeclarations>, u64)>,
    /// How many of the request's first messages were checked against which image limits,
    /// and left within them.
    images_checked: Option<(usize, ImageLimits)>,
    /// How many times the messages were changed other than by additions (or handed to code
    /// that may have): equal before and after a run, the run only added to them
    /// ([`rewrites`](Self::rewrites)).
    rewrites: u64,
}

/// The last request the provider counted.
#[derive(Debug, Clone)]
struct Measured {
    /// Its input tokens, as the provider reported them.
    input_tokens: u64,
    /// How many messages it had: the first of a later request are the same.
    messages: usize,
    /// The tools it declared (the same `Arc` means no change; counted only when a later
    /// request declares another set).
    tools: Arc<ToolDeclarations>,
}

impl TokenEstimate {
    /// The input tokens `request` is estimated to take.
    pub(crate) fn estimate(&mut self, request: &ChatRequest) -> u64 {
        let Some(measured) = self
            .measured
            .as_ref()
            .filter(|measured| measured.messages <= request.messages.len())
        else {
            return self.by_bytes(request);
        };
        let added: u64 = request.messages[measured.messages..]
            .iter()
            .map(estimate_message_tokens)
            .sum();
        // Tools declared since count; tools no longer declared are not taken off, the
        // estimate errs on the long side.
        let tools = if Arc::ptr_eq(&measured.tools, &request.tools) {
            0
        } else {
            tools_tokens(&request.tools).saturating_sub(tools_tokens(&measured.tools))
        };
        measured
            .input_tokens
            .saturating_add(added)
            .saturating_add(tools)
    }

    /// `request` was answered with `usage`: later requests that continue it are estimated
    /// from its count. A usage of no input tokens is a provider that reports none. Kept on
    /// every answer of every session, so nothing is counted here (a session without a
    /// window never estimates).
    pub(crate) fn measured(&mut self, request: &ChatRequest, usage: Usage) {
        self.measured = (usage.input_tokens > 0).then(|| Measured {
            input_tokens: usage.input_tokens,
            messages: request.messages.len(),
            tools: Arc::clone(&request.tools),
        });
    }

    /// The whole of `request` by [`BYTES_PER_TOKEN`]: system prompt, messages and tools;
    /// the messages counted before (the first of `request`'s, unless rewritten since) and
    /// the same tools are not read again.
    fn by_bytes(&mut self, request: &ChatRequest) -> u64 {
        let system = request.system.as_deref().map_or(0, |system| {
            bytes_tokens(system.len() as u64).saturating_add(PART_OVERHEAD_TOKENS)
        });
        let (from, counted) = self
            .counted
            .filter(|(messages, _)| *messages <= request.messages.len())
            .unwrap_or_default();
        let messages = request.messages[from..]
            .iter()
            .map(estimate_message_tokens)
            .fold(counted, u64::saturating_add);
        self.counted = Some((request.messages.len(), messages));
        let tools = match &self.tools_counted {
            Some((tools, tokens)) if Arc::ptr_eq(tools, &request.tools) => *tokens,
            _ => {
                let tokens = tools_tokens(&request.tools);
                self.tools_counted = Some((Arc::clone(&request.tools), tokens));
                tokens
            }
        };
        system.saturating_add(messages).saturating_add(tools)
    }

    /// The conversation was shortened (or edited): the messages of the request counted
    /// last are no longer the first of the next, which is estimated whole (and checked
    /// against the image limits whole).
    pub(crate) fn forget(&mut self) {
        self.measured = None;
        self.rewritten();
    }

    /// The messages were handed to code that may change them (a context overflow policy),
    /// which says whether it shortened them: the provider's count stays for it to forget,
    /// the count by bytes and the image check do not.
    pub(crate) fn rewritten(&mut self) {
        self.counted = None;
        self.images_checked = None;
        self.rewrites = self.rewrites.wrapping_add(1);
    }

    /// A count of the rewrites ([`forget`](Self::forget), [`rewritten`](Self::rewritten))
    /// so far: the same count after a run as before it says the run's messages begin with
    /// the ones it was given, unchanged.
    pub(crate) fn rewrites(&self) -> u64 {
        self.rewrites
    }

    /// Whether `messages` are within `limits` without walking them all: their first ones
    /// were checked against the same limits and left within them, and those added since
    /// hold no image. The limits' rules read the request's images alone, and a check leaves
    /// none that another would remove: messages without images change nothing. So a long
    /// run walks only the messages each turn adds, not the whole conversation.
    pub(crate) fn images_within(&self, messages: &[Message], limits: &ImageLimits) -> bool {
        self.images_checked
            .as_ref()
            .is_some_and(|(checked, checked_limits)| {
                checked_limits == limits
                    && messages
                        .get(*checked..)
                        .is_some_and(|added| image_places(added).next().is_none())
            })
    }

    /// `messages` were checked against `limits` and are within them now.
    pub(crate) fn images_checked(&mut self, messages: usize, limits: ImageLimits) {
        self.images_checked = Some((messages, limits));
    }
}

/// `bytes` as tokens, rounded up.
fn bytes_tokens(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// The declared tools' JSON as tokens, each with its overhead.
fn tools_tokens(tools: &ToolDeclarations) -> u64 {
    tools.iter().fold(0, |tokens, tool| {
        tokens
            .saturating_add(bytes_tokens(serialized_len(tool) as u64))
            .saturating_add(PART_OVERHEAD_TOKENS)
    })
}

/// The tokens the context window guard of a session built
/// [`with_context_window`](super::AgentSessionBuilder::with_context_window) counts for
/// `message`: its text, its calls' names, ids and arguments (or, for an answer kept in its
/// provider's words, those words when larger) and its results' contents at one token per 3
/// UTF-8 bytes, an image at the most any provider counts for its size (at most 1,600; 1,600
/// when its size is unknown), and 4 for the message and each of
/// its calls and results. It is what removing `message` takes off the guard's estimate of a
/// request counted by its bytes ([`ContextEstimate`](super::ContextEstimate)), so that a
/// [`ContextOverflow`](super::ContextOverflow) policy can shorten by as much as the estimate
/// passes the window. Tokenizers read about 4 bytes of English a token: the count errs long.
pub fn estimate_message_tokens(message: &Message) -> u64 {
    let (bytes, parts) = match message {
        Message::User { text, images } => {
            let pictures = images.iter().fold(0_u64, |tokens, image| {
                tokens.saturating_add(image_tokens(image))
            });
            return bytes_tokens(text.len() as u64)
                .saturating_add(PART_OVERHEAD_TOKENS)
                .saturating_add(pictures);
        }
        Message::Assistant {
            text,
            calls,
            provider_turn,
            ..
        } => {
            let written =
                calls
                    .iter()
                    .fold(text.as_deref().map_or(0, str::len) as u64, |bytes, call| {
                        let arguments = call.as_written.as_deref().map_or_else(
                            || serialized_len(&call.arguments) as u64,
                            |written| written.len() as u64,
                        );
                        bytes
                            + (call.id.len() + call.name.len()) as u64
                            + call.thought_signature.as_deref().map_or(0, str::len) as u64
                            + arguments
                    });
            // The provider that wrote the turn is sent its entries instead (thinking
            // included); another provider, the text and calls: the larger counts.
            let entries = provider_turn
                .as_ref()
                .map_or(0, |turn| serialized_len(&turn.entries) as u64);
            (written.max(entries), 1 + calls.len() as u64)
        }
        Message::ToolResults { results } => return results_tokens(results),
    };
    bytes_tokens(bytes).saturating_add(parts.saturating_mul(PART_OVERHEAD_TOKENS))
}

/// A tool-results message of `results` as tokens, as [`estimate_message_tokens`] counts it:
/// each result's call id, name, error detail and content, its images at
/// [`image_tokens`], and the overhead of the message and of each result.
pub(crate) fn results_tokens(results: &[ToolResultMessage]) -> u64 {
    let mut pictures = 0_u64;
    let bytes = results.iter().fold(0, |bytes, result| {
        let content = match &result.result.content {
            UserModelContent::Text(text) => text.len() as u64,
            UserModelContent::JsonText(text) => text.as_str().len() as u64,
            UserModelContent::Parts(parts) => parts_bytes(parts, &mut pictures),
            // The value as it serialises, the images at their tokens, not their base64.
            UserModelContent::JsonWithImages(json) => {
                serialized_len(json.value()) as u64 + parts_bytes(json.parts(), &mut pictures)
            }
            // JSON, and whatever a later kind is: as it serialises.
            other => serialized_len(other) as u64,
        };
        let detail = result.result.error_detail.as_deref().map_or(0, str::len);
        bytes + (result.call_id.len() + result.name.len() + detail) as u64 + content
    });
    let parts = 1 + results.len() as u64;
    bytes_tokens(bytes)
        .saturating_add(parts.saturating_mul(PART_OVERHEAD_TOKENS))
        .saturating_add(pictures)
}

/// The bytes of `parts`' texts, each image's [`image_tokens`] added to `pictures` instead.
fn parts_bytes(parts: &[ContentPart], pictures: &mut u64) -> u64 {
    parts.iter().fold(0, |bytes, part| match part {
        ContentPart::Text { text } => bytes + text.len() as u64,
        ContentPart::Image(image) => {
            *pictures = pictures.saturating_add(image_tokens(image));
            bytes
        }
        // A later kind: as it serialises.
        other => bytes + serialized_len(other) as u64,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolsmith_core::{Args, ToolArguments, ToolCallResult, ToolDefinition};

    use super::*;
    use crate::model::ModelCall;

    fn request(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            model: "m".into(),
            messages,
            ..ChatRequest::default()
        }
    }

    /// A tool-results message with one result of `content`.
    fn result(content: &str) -> Message {
        Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: "c1".into(),
                name: "read".into(),
                result: ToolCallResult::text(content),
            }],
        }
    }

    #[test]
    fn without_a_count_the_whole_request_is_counted_by_bytes() {
        let mut request = request(vec![Message::user("x".repeat(300))]);
        request.system = Some("s".repeat(30));
        // 300 bytes: 100 tokens, 30: 10, and each part's overhead.
        assert_eq!(
            TokenEstimate::default().estimate(&request),
            100 + 10 + 2 * PART_OVERHEAD_TOKENS
        );
        // Rounded up: one byte is a token.
        let one = self::request(vec![Message::user("x")]);
        assert_eq!(
            TokenEstimate::default().estimate(&one),
            1 + PART_OVERHEAD_TOKENS
        );
        // A script of three bytes a character: a token a character.
        let japanese = self::request(vec![Message::user("日本語")]);
        assert_eq!(
            TokenEstimate::default().estimate(&japanese),
            3 + PART_OVERHEAD_TOKENS
        );
    }

    #[test]
    fn an_image_counts_a_fixed_number_of_tokens_not_its_base64() {
        // A PNG of 300 kB: 400,000 bytes of base64, which by bytes would be 133,334 tokens.
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.resize(300_000, 0);
        let image = toolsmith_core::Image::from_bytes("image/png", &png).unwrap();
        let asked = Message::user_with_images("what is this?", vec![image.clone()]);
        // "what is this?": 13 bytes, 5 tokens.
        assert_eq!(
            TokenEstimate::default().estimate(&request(vec![asked])),
            5 + PART_OVERHEAD_TOKENS + IMAGE_TOKENS
        );
        let shown = Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: "c1".into(),
                name: "read".into(),
                result: ToolCallResult::parts(vec![
                    toolsmith_core::ContentPart::text("r".repeat(294)),
                    toolsmith_core::ContentPart::Image(image.clone()),
                    toolsmith_core::ContentPart::Image(image.clone()),
                ]),
            }],
        };
        // `c1`, `read` and 294 bytes: 100 tokens; the message, its result, two images.
        assert_eq!(
            TokenEstimate::default().estimate(&request(vec![shown])),
            100 + 2 * PART_OVERHEAD_TOKENS + 2 * IMAGE_TOKENS
        );
        // Beside a structured value, likewise: the value's JSON, then the image's tokens.
        let value = json!({"t": "r".repeat(286)});
        let beside = Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: "c1".into(),
                name: "read".into(),
                result: ToolCallResult::json_with_images(value.clone(), [image]),
            }],
        };
        assert_eq!(value.to_string().len(), 294);
        assert_eq!(
            TokenEstimate::default().estimate(&request(vec![beside])),
            100 + 2 * PART_OVERHEAD_TOKENS + IMAGE_TOKENS
        );
    }

    /// A PNG whose header says `width` x `height` (no pixels: only the header is read).
    fn png(width: u32, height: u32) -> toolsmith_core::Image {
        let mut file = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        file.extend_from_slice(&width.to_be_bytes());
        file.extend_from_slice(&height.to_be_bytes());
        file.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        toolsmith_core::Image::from_bytes("image/png", &file).unwrap()
    }

    #[test]
    fn an_image_of_known_size_counts_the_most_a_provider_counts_for_it() {
        // An icon: Anthropic 53, OpenAI one tile 255, Gemini 258.
        assert_eq!(image_tokens(&png(200, 200)), 258);
        // 1000 x 800: Anthropic 1,067; OpenAI 4 tiles 765; Gemini 4 tiles 1,032.
        assert_eq!(image_tokens(&png(1000, 800)), 1_067);
        // A screenshot: Gemini's 8 tiles (2,064) pass the bound, which stays the most.
        assert_eq!(image_tokens(&png(2560, 1440)), IMAGE_TOKENS);
        // A thin strip: Anthropic 492 (1568 x 235), OpenAI 4 tiles 765, Gemini 6 tiles 1,548.
        assert_eq!(image_tokens(&png(4000, 600)), 1_548);
        // A size unknown: the bound.
        let unknown = toolsmith_core::Image::from_bytes("image/png", b"\x89PNG\r\n\x1a\n").unwrap();
        assert_eq!(image_tokens(&unknown), IMAGE_TOKENS);
        // In a message, each image by its own size.
        let asked = Message::user_with_images("hi", vec![png(200, 200), png(1000, 800)]);
        assert_eq!(
            estimate_message_tokens(&asked),
            1 + PART_OVERHEAD_TOKENS + 258 + 1_067
        );
    }

    #[test]
    fn calls_results_and_tools_count_by_their_json() {
        let arguments = ToolArguments::try_from(json!({"path": "a.txt"})).unwrap();
        let call = Message::assistant_calls(None, vec![ModelCall::new("c1", "read", arguments)]);
        // `{"path":"a.txt"}` (16 bytes), `c1`, `read`: 22 bytes, 8 tokens; the message
        // and its call.
        assert_eq!(
            TokenEstimate::default().estimate(&request(vec![call])),
            8 + 2 * PART_OVERHEAD_TOKENS
        );
        // `c1`, `read` and 294 bytes: 100 tokens; the message and its result.
        let content = "r".repeat(294);
        assert_eq!(
            TokenEstimate::default().estimate(&request(vec![result(&content)])),
            100 + 2 * PART_OVERHEAD_TOKENS
        );
        let mut with_tool = request(Vec::new());
        let definition = ToolDefinition::new("read", "Read a file.", Args::empty());
        with_tool.tools = Arc::new(ToolDeclarations {
            shed: None,
            tools: vec![toolsmith_core::Tool::SingleCommand(definition)],
        });
        let json = serde_json::to_string(&with_tool.tools.tools[0]).unwrap();
        assert_eq!(
            TokenEstimate::default().estimate(&with_tool),
            (json.len() as u64).div_ceil(3) + PART_OVERHEAD_TOKENS
        );
    }

    #[test]
    fn after_a_count_only_what_was_added_is_estimated() {
        let mut sent = request(vec![Message::user("x".repeat(3000))]);
        let mut estimate = TokenEstimate::default();
        estimate.measured(&sent, Usage::new(700, 20));
        // The same request: the provider's count, not the bytes' 1000.
        assert_eq!(estimate.estimate(&sent), 700);
        // The answer and a result added: counted by their bytes on top.
        sent.messages.push(Message::assistant("y".repeat(30)));
        sent.messages.push(result(&"r".repeat(294)));
        assert_eq!(
            estimate.estimate(&sent),
            700 + 10 + 100 + 3 * PART_OVERHEAD_TOKENS
        );
        // Tools declared since count too.
        let definition = ToolDefinition::new("read", "Read a file.", Args::empty());
        let tools = Arc::new(ToolDeclarations {
            shed: None,
            tools: vec![toolsmith_core::Tool::SingleCommand(definition)],
        });
        let added = tools_tokens(&tools);
        sent.tools = tools;
        assert_eq!(
            estimate.estimate(&sent),
            700 + 10 + 100 + 3 * PART_OVERHEAD_TOKENS + added
        );
    }

    #[test]
    fn a_shortened_conversation_is_estimated_whole_again() {
        let mut sent = request(vec![
            Message::user("x".repeat(3000)),
            Message::assistant("y".repeat(30)),
            Message::user("z".repeat(30)),
        ]);
        let mut estimate = TokenEstimate::default();
        estimate.measured(&sent, Usage::new(700, 20));
        // Shortened: the count no longer holds (it was of the dropped messages too).
        sent.messages.drain(..2);
        estimate.forget();
        assert_eq!(estimate.estimate(&sent), 10 + PART_OVERHEAD_TOKENS);
        // Shortened without dropping a message (a result emptied): only forgetting the
        // count tells.
        let mut emptied = request(vec![
            Message::user("x".repeat(30)),
            result(&"r".repeat(3000)),
        ]);
        estimate.measured(&emptied, Usage::new(1010, 20));
        if let Message::ToolResults { results } = &mut emptied.messages[1] {
            results[0].result = ToolCallResult::text("");
        }
        estimate.forget();
        assert_eq!(
            estimate.estimate(&emptied),
            10 + PART_OVERHEAD_TOKENS + 2 + 2 * PART_OVERHEAD_TOKENS
        );
        // Fewer messages than were counted: not a continuation, estimated whole, even
        // unforgotten.
        estimate.measured(
            &request(vec![Message::user("a"), Message::user("b")]),
            Usage::new(9, 1),
        );
        assert_eq!(estimate.estimate(&sent), 10 + PART_OVERHEAD_TOKENS);
    }

    #[test]
    fn without_a_provider_s_count_only_the_messages_added_are_read_again() {
        let mut sent = request(vec![Message::user("x".repeat(300))]);
        sent.system = Some("s".repeat(30));
        let mut estimate = TokenEstimate::default();
        assert_eq!(
            estimate.estimate(&sent),
            100 + 10 + 2 * PART_OVERHEAD_TOKENS
        );
        // A message changed in place behind the estimate's back is not read again: the
        // first message's count is kept, and only the one added is read.
        sent.messages[0] = Message::user("x".repeat(3000));
        sent.messages.push(result(&"r".repeat(294)));
        assert_eq!(
            estimate.estimate(&sent),
            100 + 10 + 100 + 4 * PART_OVERHEAD_TOKENS
        );
        // Once the change is told, the whole request is read again.
        estimate.rewritten();
        assert_eq!(
            estimate.estimate(&sent),
            1000 + 10 + 100 + 4 * PART_OVERHEAD_TOKENS
        );
        // A provider that reports no input tokens leaves the count as it was.
        estimate.measured(&sent, Usage::default());
        sent.messages.push(Message::assistant("y".repeat(30)));
        assert_eq!(
            estimate.estimate(&sent),
            1000 + 10 + 100 + 10 + 5 * PART_OVERHEAD_TOKENS
        );
    }

    #[test]
    fn the_count_continued_by_bytes_is_the_whole_request_s() {
        let definition = ToolDefinition::new("read", "Read a file.", Args::empty());
        let tools = Arc::new(ToolDeclarations {
            shed: None,
            tools: vec![toolsmith_core::Tool::SingleCommand(definition)],
        });
        let mut sent = request(vec![Message::user("read a.txt")]);
        let mut estimate = TokenEstimate::default();
        for turn in 0..6 {
            let arguments = ToolArguments::try_from(json!({"path": "a.txt"})).unwrap();
            sent.messages.push(Message::assistant_calls(
                None,
                vec![ModelCall::new(format!("c{turn}"), "read", arguments)],
            ));
            sent.messages.push(result(&"r".repeat(100 * turn)));
            if turn == 3 {
                // Other tools declared: counted anew.
                sent.tools = Arc::clone(&tools);
            }
            assert_eq!(
                estimate.estimate(&sent),
                TokenEstimate::default().estimate(&sent),
                "turn {turn}"
            );
        }
        // Fewer messages than counted: the whole request.
        sent.messages.truncate(3);
        assert_eq!(
            estimate.estimate(&sent),
            TokenEstimate::default().estimate(&sent)
        );
    }

    #[test]
    fn only_the_messages_added_since_the_image_check_are_read_and_any_image_asks_again() {
        let limits = ImageLimits::openai();
        let mut messages = vec![
            Message::user_with_images("look", vec![png(100, 100)]),
            result(&"r".repeat(30)),
        ];
        let mut estimate = TokenEstimate::default();
        // Never checked: the messages must be walked.
        assert!(!estimate.images_within(&messages, &limits));
        estimate.images_checked(messages.len(), limits);
        assert!(estimate.images_within(&messages, &limits));
        // Messages without images added: still within, without a walk of the first.
        messages.push(Message::assistant("y"));
        messages.push(result(&"r".repeat(30)));
        assert!(estimate.images_within(&messages, &limits));
        // Other limits (a fallback's next model) ask again.
        assert!(!estimate.images_within(&messages, &ImageLimits::anthropic()));
        // An image added, in a user message or a result: asked again.
        let mut with_user_image = messages.clone();
        with_user_image.push(Message::user_with_images("and this", vec![png(9000, 10)]));
        assert!(!estimate.images_within(&with_user_image, &limits));
        let mut with_result_image = messages.clone();
        with_result_image.push(Message::ToolResults {
            results: vec![ToolResultMessage {
                call_id: "c2".into(),
                name: "shot".into(),
                result: ToolCallResult::parts(vec![ContentPart::Image(png(9000, 10))]),
            }],
        });
        assert!(!estimate.images_within(&with_result_image, &limits));
        // Fewer messages than were checked: not a continuation.
        assert!(!estimate.images_within(&messages[..1], &limits));
        // Shortened, edited, or handed to a policy: asked again.
        estimate.forget();
        assert!(!estimate.images_within(&messages, &limits));
        estimate.images_checked(messages.len(), limits);
        estimate.rewritten();
        assert!(!estimate.images_within(&messages, &limits));
        // A provider's count survives a policy's hands; not a forgetting.
        estimate.measured(&request(messages.clone()), Usage::new(700, 20));
        estimate.rewritten();
        assert_eq!(estimate.estimate(&request(messages)), 700);
    }

    #[test]
    fn a_provider_that_reports_no_input_tokens_leaves_the_bytes_to_count() {
        let sent = request(vec![Message::user("x".repeat(300))]);
        let mut estimate = TokenEstimate::default();
        estimate.measured(&sent, Usage::default());
        assert_eq!(estimate.estimate(&sent), 100 + PART_OVERHEAD_TOKENS);
    }

    #[test]
    fn an_answer_kept_in_its_provider_s_words_counts_the_larger_form() {
        let mut answer = Message::assistant("short");
        if let Message::Assistant { provider_turn, .. } = &mut answer {
            *provider_turn = Some(crate::model::ProviderTurn {
                provider: toolsmith_core::provider::Provider::Anthropic,
                entries: vec![json!({"type": "thinking", "thinking": "t".repeat(600)})],
            });
        }
        let entries = r#"[{"type":"thinking","thinking":""}]"#.len() as u64 + 600;
        assert_eq!(
            TokenEstimate::default().estimate(&request(vec![answer])),
            entries.div_ceil(3) + PART_OVERHEAD_TOKENS
        );
    }
}
