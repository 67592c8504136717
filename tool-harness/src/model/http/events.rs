//! [`EventStream`]: the server-sent events of a streamed answer, read as the WHATWG
//! `EventSource` reads them, within the clients' bounds: no more than
//! [`MAX_RESPONSE_BYTES`] in all, and no wait for more bytes longer than the time limit.
//!
//! Read here rather than with a crate: the one in the dependency tree ends the stream on
//! lines the specification says to pass over (a second `event:`, an unknown field), and
//! loses llama.cpp's `error:` lines with the server's message.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::Value;
use toolsmith_core::value_from_str;

use super::MAX_RESPONSE_BYTES;
use super::transport::quote;
use crate::error_causes::with_causes;
use crate::model::ModelError;

/// One event: its `event:` name, if it had one, and its data lines joined.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Event {
    name: Option<String>,
    data: String,
}

/// The events in a stream of bytes, as they complete.
#[derive(Debug, Default)]
struct EventParser {
    /// The line read so far.
    line: Vec<u8>,
    /// Whether the last byte ended a line with `\r`: a `\n` right after it ends nothing.
    after_cr: bool,
    /// Whether a line was read yet (the first may start with a byte-order mark).
    started: bool,
    /// The event being read: its name, and its data lines (`None` until one came).
    name: Option<String>,
    data: Option<String>,
    /// The events read whole, oldest first.
    ready: VecDeque<Event>,
    /// Why the stream cannot be read on (a line that is not UTF-8), found after the events
    /// in `ready`: they are given first, so that what a stream gives does not depend on
    /// where the network cut it. Nothing after it is read.
    broken: Option<String>,
}

impl EventParser {
    /// Reads `bytes`, the next piece of the stream: its events complete into `ready`, and a
    /// line that cannot be read stops the reading there ([`next_event`](Self::next_event)
    /// gives the error once the events before it are taken).
    fn feed(&mut self, mut bytes: &[u8]) {
        // An empty piece says nothing, not even that a `\r` before it ended its line alone.
        if bytes.is_empty() || self.broken.is_some() {
            return;
        }
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        while let Some(end) = memchr::memchr2(b'\r', b'\n', bytes) {
            self.line.extend_from_slice(&bytes[..end]);
            if let Err(reason) = self.end_line() {
                self.broken = Some(reason);
                return;
            }
            let crlf = bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n');
            let after = end + if crlf { 2 } else { 1 };
            // A `\r` alone at the end of the piece may be the first half of a `\r\n`; one
            // whose `\n` came with it is a whole line end.
            self.after_cr = bytes[end] == b'\r' && !crlf && after == bytes.len();
            bytes = &bytes[after..];
        }
        self.line.extend_from_slice(bytes);
    }

    /// The oldest event read whole, or, once every event before it was taken, why the
    /// stream could not be read on; `None` while more bytes are needed.
    fn next_event(&mut self) -> Option<Result<Event, String>> {
        match self.ready.pop_front() {
            Some(event) => Some(Ok(event)),
            None => self.broken.clone().map(Err),
        }
    }

    /// The line just read: a field of the event, or the blank line that ends it.
    fn end_line(&mut self) -> Result<(), String> {
        let bytes = std::mem::take(&mut self.line);
        let mut line = std::str::from_utf8(&bytes)
            .map_err(|_| "a line of the event stream is not UTF-8".to_owned())?;
        if !self.started {
            self.started = true;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            // An event without data is not dispatched; its name goes with it.
            let name = self.name.take();
            if let Some(mut data) = self.data.take() {
                data.pop();
                self.ready.push_back(Event { name, data });
            }
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                let data = self.data.get_or_insert_with(String::new);
                data.push_str(value);
                data.push('\n');
            }
            "event" => self.name = Some(value.to_owned()),
            // llama.cpp's server writes a failure as `error: {json}`: read as an event
            // named `error`, which is how the other APIs name theirs.
            "error" => {
                self.name = Some("error".to_owned());
                let data = self.data.get_or_insert_with(String::new);
                data.push_str(value);
                data.push('\n');
            }
            // `id`, `retry`, and fields the specification does not know: nothing a single
            // answer needs.
            _ => {}
        }
        Ok(())
    }
}

/// How many bytes of a body are kept to quote when it held no events.
const KEPT_OPENING: usize = 400;

/// The events of one streamed answer, in order.
pub(crate) struct EventStream {
    /// The response while its body lasts.
    response: Option<reqwest::Response>,
    /// How many bytes of the body were read.
    read: usize,
    /// The body's first bytes (up to [`KEPT_OPENING`]), quoted when it held no events.
    opening: Vec<u8>,
    /// Whether an event was given.
    dispatched: bool,
    /// Whether the body was cut off: its connection failed or closed before its end.
    cut_off: bool,
    parser: EventParser,
    /// What errors call the API.
    name: &'static str,
    idle: Duration,
}

impl EventStream {
    /// The events of `response`'s body; waiting longer than `idle` for more of it is a
    /// [`ModelError::Timeout`].
    pub(crate) fn new(response: reqwest::Response, name: &'static str, idle: Duration) -> Self {
        Self {
            response: Some(response),
            read: 0,
            opening: Vec::new(),
            dispatched: false,
            cut_off: false,
            parser: EventParser::default(),
            name,
            idle,
        }
    }

    /// The whole body when it is one JSON document rather than events (its first byte
    /// past any whitespace is `{` or `[`, which no line of an event stream begins with): a
    /// server that ignored the request for a stream, whatever content type it gave its
    /// answer. `None` when it is events; the bytes read to tell are then the events'
    /// first. Asked before [`next`](Self::next).
    pub(crate) async fn whole_answer(&mut self) -> Result<Option<Vec<u8>>, ModelError> {
        let mut opening = Vec::new();
        // How much of `opening` is known to be blank: each chunk's bytes are looked at once
        // (looking at the whole opening again for each made a body of blanks quadratic).
        let mut blank = 0;
        while self
            .with_next_chunk(appending_to(&mut opening))
            .await?
            .is_some()
        {
            match opening[blank..]
                .iter()
                .find(|byte| !byte.is_ascii_whitespace())
            {
                None => blank = opening.len(),
                Some(b'{' | b'[') => {
                    while self
                        .with_next_chunk(appending_to(&mut opening))
                        .await?
                        .is_some()
                    {}
                    return Ok(Some(opening));
                }
                Some(_) => break,
            }
        }
        self.parser.feed(&opening);
        Ok(None)
    }

    /// The next event's name (`event:`, if it had one) and data read as JSON; `None` when
    /// the stream ends, or at OpenAI's `data: [DONE]`. An event whose data is empty is
    /// passed over, and one not ended by a blank line when the body ends is dropped, as the
    /// specification says.
    pub(crate) async fn next(&mut self) -> Result<Option<(Option<String>, Value)>, ModelError> {
        loop {
            if let Some(event) = self.parser.next_event() {
                let event = event.map_err(|reason| self.malformed(reason))?;
                // An empty `data:` (a proxy's keep-alive) carries no chunk of the answer.
                if event.data.trim().is_empty() {
                    continue;
                }
                self.dispatched = true;
                if event.data.trim() == "[DONE]" {
                    self.response = None;
                    return Ok(None);
                }
                // Bounded in depth and in values, as a whole answer is.
                let data = value_from_str(&event.data).map_err(|err| {
                    self.malformed(format!("an event's data is not JSON ({err})"))
                })?;
                return Ok(Some((event.name, data)));
            }
            let fed = self
                .with_next_chunk(|stream, chunk| {
                    stream.parser.feed(chunk);
                    Ok(())
                })
                .await?;
            if fed.is_none() {
                return Ok(None);
            }
        }
    }

    /// Reads the body's next bytes and gives them to `take`; `None` once the body ended.
    /// The limit is on each wait: bytes that keep coming (a keep-alive comment included)
    /// show the server is still answering.
    async fn with_next_chunk<T>(
        &mut self,
        take: impl FnOnce(&mut Self, &[u8]) -> Result<T, ModelError>,
    ) -> Result<Option<T>, ModelError> {
        let Some(response) = self.response.as_mut() else {
            return Ok(None);
        };
        let chunk = tokio::time::timeout(self.idle, response.chunk())
            .await
            .map_err(|_| ModelError::Timeout {
                provider: self.name.to_owned(),
                after: self.idle,
            })?;
        let chunk = match chunk {
            Ok(Some(chunk)) => chunk,
            Ok(None) => {
                self.response = None;
                return Ok(None);
            }
            Err(err) => {
                self.cut_off = true;
                self.response = None;
                return Err(self.malformed(format!(
                    "the stream was cut off after {} bytes: {}",
                    self.read,
                    with_causes(&err)
                )));
            }
        };
        self.read = self.read.saturating_add(chunk.len());
        if self.read > MAX_RESPONSE_BYTES {
            return Err(self.malformed(format!(
                "the stream is longer than the {} MiB a client reads",
                MAX_RESPONSE_BYTES / (1024 * 1024)
            )));
        }
        let kept = KEPT_OPENING
            .saturating_sub(self.opening.len())
            .min(chunk.len());
        self.opening.extend_from_slice(&chunk[..kept]);
        take(self, &chunk).map(Some)
    }

    /// The [`ModelError::MalformedResponse`] of a stream that ended before its answer
    /// began; when it held no event at all, what the body was instead.
    pub(crate) fn no_answer(&self) -> ModelError {
        let mut reason = "the stream ended before the answer began".to_owned();
        if !self.dispatched {
            let opening = String::from_utf8_lossy(&self.opening);
            match opening.trim() {
                "" if self.read == 0 => reason.push_str(" (the body was empty)"),
                "" => reason.push_str(" (the body held nothing but blank lines)"),
                opening => reason.push_str(&format!(
                    " (the body held no events; it begins: {})",
                    quote(opening, 200)
                )),
            }
        }
        self.malformed(reason)
    }

    /// Whether the body was cut off before its end (the connection failed or closed):
    /// the error [`next`](Self::next) or [`whole_answer`](Self::whole_answer) gave was
    /// that, not a body that breaks the format or the bounds.
    pub(crate) fn was_cut_off(&self) -> bool {
        self.cut_off
    }

    /// A [`ModelError::MalformedResponse`] of this stream.
    pub(crate) fn malformed(&self, reason: impl Into<String>) -> ModelError {
        ModelError::MalformedResponse {
            provider: self.name.to_owned(),
            reason: reason.into(),
        }
    }

    /// The API's name, as errors give it.
    pub(crate) fn provider(&self) -> &'static str {
        self.name
    }
}

/// What [`EventStream::with_next_chunk`] does with a chunk to append it to `bytes`.
fn appending_to(
    bytes: &mut Vec<u8>,
) -> impl FnOnce(&mut EventStream, &[u8]) -> Result<(), ModelError> + '_ {
    |_, chunk| {
        bytes.extend_from_slice(chunk);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The events of `text` fed in pieces of `piece` bytes.
    fn events(text: &str, piece: usize) -> Result<Vec<Event>, String> {
        let mut parser = EventParser::default();
        for chunk in text.as_bytes().chunks(piece) {
            parser.feed(chunk);
        }
        match parser.broken {
            Some(reason) => Err(reason),
            None => Ok(parser.ready.into_iter().collect()),
        }
    }

    fn event(name: Option<&str>, data: &str) -> Event {
        Event {
            name: name.map(str::to_owned),
            data: data.to_owned(),
        }
    }

    #[test]
    fn reads_events_as_the_specification_does_in_any_pieces() {
        let text = "\u{feff}: a comment\r\nevent: first\r\nevent: delta\r\ndata: {\"a\":\r\ndata:1}\r\nid: 7\r\nretry: soon\r\nfoo: bar\r\n\r\ndata\rdata: x\r\rdata: é\n\nevent: none\n\n";
        let expected = vec![
            event(Some("delta"), "{\"a\":\n1}"),
            event(None, "\nx"),
            event(None, "é"),
        ];
        for piece in [1, 2, 3, 7, text.len()] {
            assert_eq!(events(text, piece).unwrap(), expected, "pieces of {piece}");
        }
    }

    #[test]
    fn an_unfinished_event_is_not_dispatched_and_bad_bytes_are_an_error() {
        assert_eq!(events("data: {\"a\": 1}\n", 4).unwrap(), []);
        assert_eq!(
            events("data: \u{0}\n\n", 4).unwrap(),
            [event(None, "\u{0}")]
        );
        // The events before a bad line come first, then its error, and nothing after it.
        let mut parser = EventParser::default();
        parser.feed(b"data: 1\n\ndata: \xff\n");
        parser.feed(b"\ndata: 2\n\n");
        assert_eq!(parser.next_event(), Some(Ok(event(None, "1"))));
        let broken = Err("a line of the event stream is not UTF-8".to_owned());
        assert_eq!(parser.next_event(), Some(broken.clone()));
        assert_eq!(parser.next_event(), Some(broken));
    }

    #[test]
    fn a_piece_ending_in_crlf_leaves_the_next_lf_a_line_end() {
        // The `\n` opening the second piece is the blank line that ends the event.
        let mut parser = EventParser::default();
        for piece in ["data: 1\r\n", "\ndata: 2\r\n", "\n"] {
            parser.feed(piece.as_bytes());
        }
        assert_eq!(parser.ready, [event(None, "1"), event(None, "2")]);
    }

    #[test]
    fn an_empty_piece_between_cr_and_lf_ends_one_line() {
        let mut parser = EventParser::default();
        for piece in ["event: named\r", "", "\ndata: 1\r", "", "\n"] {
            parser.feed(piece.as_bytes());
        }
        // The event is not ended yet: no blank line came, and its name is kept.
        assert_eq!(parser.ready, []);
        parser.feed(b"\r\n");
        assert_eq!(parser.ready, [event(Some("named"), "1")]);
    }

    #[test]
    fn an_error_line_is_an_event_named_error() {
        let text = "data: {\"choices\": []}\n\nerror: {\"code\": 500, \"message\": \"boom\"}\n\n";
        assert_eq!(
            events(text, 5).unwrap(),
            [
                event(None, "{\"choices\": []}"),
                event(Some("error"), "{\"code\": 500, \"message\": \"boom\"}"),
            ]
        );
    }

    /// What event streams are made of: fields, comments, every line end, multi-byte text.
    const FRAGMENTS: [&str; 14] = [
        "data: ",
        "data:",
        "event: named",
        ": keep-alive",
        "id: 1",
        "\r",
        "\n",
        "\r\n",
        "é",
        "日本",
        "🦀",
        "{\"a\": 1}",
        " ",
        ":",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Fed in any pieces, empty ones included, a stream gives the events it gives fed
        /// whole. The pieces are cut between fragments (where a line end is cut from
        /// what follows it), maybe twice (an empty piece), and at any byte.
        #[test]
        fn any_pieces_give_the_events_of_the_whole(
            fragments in proptest::collection::vec(
                (proptest::sample::select(&FRAGMENTS[..]), 0..3usize),
                0..40,
            ),
            offsets in proptest::collection::vec(any::<proptest::sample::Index>(), 0..12),
        ) {
            let mut text = String::new();
            let mut cuts = Vec::new();
            for (fragment, cuts_after) in fragments {
                text.push_str(fragment);
                cuts.extend(std::iter::repeat_n(text.len(), cuts_after));
            }
            let mut whole = EventParser::default();
            whole.feed(text.as_bytes());
            cuts.extend(offsets.iter().map(|at| at.index(text.len() + 1)));
            cuts.sort_unstable();
            let mut pieces = EventParser::default();
            let mut from = 0;
            // A repeated cut gives an empty piece.
            for at in cuts.into_iter().chain([text.len()]) {
                pieces.feed(&text.as_bytes()[from..at]);
                from = at;
            }
            prop_assert_eq!(pieces.ready, whole.ready, "{:?}", text);
        }
    }
}
