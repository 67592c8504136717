//! Messages that cannot be read (too large, too deep, not JSON, not JSON-RPC): which request
//! they answer, read from their envelope without reading their body, and how a client's call
//! learns that its answer was unreadable instead of waiting for its time limit.

use rmcp::ServiceError;
use rmcp::model::ErrorData;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde_json::Value;

use super::server::cut;

/// The key, in an error's `data`, that marks an answer this side could not read (the error
/// was made here, not sent by the peer).
pub(crate) const UNREADABLE_ANSWER: &str = "toolsmith_unreadable_answer";

/// The members of a message's top-level object that can be read without reading the rest:
/// enough to tell which request an unreadable message answers.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Envelope {
    /// The `id`, when it is a string or an integer.
    pub id: Option<Value>,
    /// Where the `id` member's value is in the bytes read, whatever it is: for a reader that
    /// reads it as a type of its own, without reading the whole message again.
    pub id_at: Option<std::ops::Range<usize>>,
    /// Whether the object has a `result` or an `error` member.
    pub has_outcome: bool,
    /// Whether the object has a `method` member.
    pub has_method: bool,
}

impl Envelope {
    /// Reads the top-level members of `bytes` (one JSON object, possibly cut short) without
    /// descending into their values: nesting is skipped by counting brackets, so no depth
    /// or length makes this recurse or allocate more than the id. Stops at the first byte
    /// that does not fit an object.
    pub(crate) fn of(bytes: &[u8]) -> Self {
        let mut envelope = Self::default();
        let mut at = skip_whitespace(bytes, 0);
        if bytes.get(at) != Some(&b'{') {
            return envelope;
        }
        at += 1;
        loop {
            at = skip_whitespace(bytes, at);
            if bytes.get(at) != Some(&b'"') {
                return envelope;
            }
            let Some(key_end) = string_end(bytes, at) else {
                return envelope;
            };
            let key = &bytes[at + 1..key_end - 1];
            at = skip_whitespace(bytes, key_end);
            if bytes.get(at) != Some(&b':') {
                return envelope;
            }
            // Known by its key, even when its value is cut short.
            match key {
                b"result" | b"error" => envelope.has_outcome = true,
                b"method" => envelope.has_method = true,
                _ => {}
            }
            let value_start = skip_whitespace(bytes, at + 1);
            let Some(value_end) = value_end(bytes, value_start) else {
                return envelope;
            };
            if key == b"id" {
                envelope.id = request_id(&bytes[value_start..value_end]);
                envelope.id_at = Some(value_start..value_end);
            }
            at = skip_whitespace(bytes, value_end);
            match bytes.get(at) {
                Some(b',') => at += 1,
                _ => return envelope,
            }
        }
    }

    /// The id of this message when it is a request (a `method`, no `result` or `error`)
    /// whose id could be read: a request the peer waits to have answered.
    pub(crate) fn request(&self) -> Option<&Value> {
        (self.has_method && !self.has_outcome)
            .then_some(self.id.as_ref())
            .flatten()
    }

    /// Whether this message is an answer: a `result` or an `error`, no `method`.
    pub(crate) fn is_answer(&self) -> bool {
        self.has_outcome && !self.has_method
    }

    /// The id of the request this message answers, when it is an answer (a `result` or an
    /// `error`, no `method`) whose id could be read.
    pub(crate) fn answered_request(&self) -> Option<&Value> {
        self.is_answer().then_some(self.id.as_ref()).flatten()
    }
}

fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The index just past the string that opens at `start` (a `"`), if it closes.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    loop {
        match bytes.get(at)? {
            b'\\' => at += 2,
            b'"' => return Some(at + 1),
            _ => at += 1,
        }
    }
}

/// The index just past the value that starts at `start`, if it ends within `bytes`.
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let mut depth = 0_usize;
            let mut at = start;
            loop {
                match bytes.get(at)? {
                    b'"' => {
                        at = string_end(bytes, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            let length = bytes[start..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
            Some(start + length)
        }
    }
}

/// A JSON-RPC request id (a string or an integer) from its text.
fn request_id(text: &[u8]) -> Option<Value> {
    // A string or a number: no nesting for serde_json to descend into.
    let value: Value = serde_json::from_slice(text).ok()?;
    is_request_id(&value).then_some(value)
}

/// What is wrong with a JSON-RPC message's envelope, field by field, if anything.
pub(crate) fn envelope_problem(message: &Value) -> Option<String> {
    let kind = |value: &Value| match value {
        Value::Null => "null".to_owned(),
        Value::Bool(_) => "a boolean".to_owned(),
        Value::Number(n) => format!("the number {n}"),
        // Cut: the client's string may be megabytes long.
        Value::String(s) => format!("the string {:?}", cut(s)),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    };
    let Some(object) = message.as_object() else {
        return Some(format!(
            "a message must be an object, not {}",
            kind(message)
        ));
    };
    match object.get("jsonrpc") {
        Some(Value::String(version)) if version == "2.0" => {}
        Some(other) => return Some(format!("`jsonrpc` must be \"2.0\", not {}", kind(other))),
        None => return Some("`jsonrpc` is missing (it must be \"2.0\")".to_owned()),
    }
    if let Some(id) = object.get("id") {
        if !is_request_id(id) {
            return Some(format!(
                "`id` must be a string or an integer, not {}",
                kind(id)
            ));
        }
        // An integer past i64 is an id to answer under, but not one rmcp reads.
        if id.is_u64() && !id.is_i64() {
            return Some(format!(
                "`id` must be a string or an integer from {} to {}, not {}",
                i64::MIN,
                i64::MAX,
                kind(id)
            ));
        }
    }
    if let Some(method) = object.get("method")
        && !method.is_string()
    {
        return Some(format!("`method` must be a string, not {}", kind(method)));
    }
    if !["method", "result", "error"]
        .iter()
        .any(|member| object.contains_key(*member))
    {
        return Some(
            "a message needs a `method` (a request or a notification), or a `result` or an \
             `error` (a response)"
                .to_owned(),
        );
    }
    if let Some(params) = object.get("params") {
        if !params.is_object() {
            return Some(format!("`params` must be an object, not {}", kind(params)));
        }
        if let Some(meta) = params.get("_meta")
            && !meta.is_object()
        {
            return Some(format!(
                "`params._meta` must be an object, not {}",
                kind(meta)
            ));
        }
    }
    None
}

/// Whether `id` has a JSON-RPC request id's type: a string or an integer.
pub(crate) fn is_request_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// The error a client's call gets when its answer could not be read: `code` and `message`
/// say why, `data` marks it as made here ([`UNREADABLE_ANSWER`]).
pub(crate) fn unreadable_answer(id: Value, code: i64, message: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": code,
            "message": message,
            "data": {UNREADABLE_ANSWER: true},
        },
    })
}

/// The method of the stand-in [`unreadable_request`]: a request of the server's this client
/// could not read, which its handler answers with the error its params carry.
pub(crate) const UNREADABLE_REQUEST: &str = "toolsmith/unreadable_request";

/// A readable stand-in for a request of the server's (of id `id`) that this client could not
/// read: over streamable HTTP the client answers requests through rmcp, which answers only
/// what it has read; its handler answers this one with `code` and `message`, under `id`.
/// Dropped, the request would go unanswered and the server would wait for it.
pub(crate) fn unreadable_request(id: Value, code: i64, message: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": UNREADABLE_REQUEST,
        "params": {"code": code, "message": message},
    })
}

/// Why a call's answer could not be read, when `error` says it could not: an answer that
/// this client's transport could not read (stdio: [`unreadable_answer`]; streamable HTTP:
/// a body or event that is too large, too deep, not JSON or not a message), rather than a
/// connection that failed.
pub(crate) fn unreadable_reason(error: &ServiceError) -> Option<String> {
    match error {
        ServiceError::McpError(data) if is_marked(data) => Some(data.message.to_string()),
        ServiceError::TransportSend(error) => {
            let http = error
                .error
                .downcast_ref::<StreamableHttpError<reqwest::Error>>()?;
            match http {
                StreamableHttpError::UnexpectedServerResponse(_)
                | StreamableHttpError::Deserialize(_)
                | StreamableHttpError::ResponseBodyTooLarge { .. }
                | StreamableHttpError::UnexpectedContentType(_) => Some(http.to_string()),
                _ => None,
            }
        }
        _ => None,
    }
}

fn is_marked(data: &ErrorData) -> bool {
    data.data
        .as_ref()
        .and_then(|data| data.get(UNREADABLE_ANSWER))
        .is_some_and(|marked| marked == &Value::Bool(true))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Envelope;

    #[test]
    fn reads_the_envelope_around_a_body_it_does_not_read() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"x":{}1{}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let envelope = Envelope::of(deep.as_bytes());
        assert_eq!(envelope.id, Some(json!(7)));
        assert_eq!(envelope.answered_request(), Some(&json!(7)));

        // Cut short after the id (the head of a message over the size limit).
        let head = br#"{"jsonrpc":"2.0", "id" : "call-\"3\"", "result": {"content": [{"text": "ab"#;
        assert_eq!(
            Envelope::of(head).answered_request(),
            Some(&json!("call-\"3\""))
        );
        // The id after the body, brackets inside strings.
        let after = br#"{"error": {"message": "]]}}[["}, "id": 12}"#;
        assert_eq!(Envelope::of(after).answered_request(), Some(&json!(12)));
    }

    #[test]
    fn finds_no_answered_request_where_there_is_none() {
        for text in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping","result":1}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            br#"{"jsonrpc":"2.0","result":{},"id":{"a":1}}"#,
            br#"{"jsonrpc":"2.0","result":{},"id":1.5}"#,
            br#"{"jsonrpc":"2.0","result":{"#,
            b"not json",
            b"[1, 2]",
            b"",
            br#"{"id" 3, "result": 1}"#,
        ] {
            assert_eq!(
                Envelope::of(text).answered_request(),
                None,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        // A request's id is read too (a server answers an unreadable request with it).
        let request =
            br#"{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"arguments":[[[[[["#;
        let envelope = Envelope::of(request);
        assert_eq!(envelope.request(), Some(&json!("r1")));
        assert_eq!(envelope.answered_request(), None);
        assert_eq!(
            (envelope.id, envelope.has_method),
            (Some(json!("r1")), true)
        );
        // Neither a request nor an answer: both members, or a notification.
        for text in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"ping","result":1}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"#,
        ] {
            assert_eq!(Envelope::of(text).request(), None);
        }
    }
}
