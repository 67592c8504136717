//! Bounds on untrusted JSON: how large one message may be, how deeply it may nest and how
//! many values it may hold, checked before it is parsed.

use toolsmith_core::JsonTextExcess;

/// The JSON-RPC error code of a message that is not JSON (or nests too deeply to be read).
pub(crate) const PARSE_ERROR: i64 = -32700;
/// The JSON-RPC error code of JSON that is not a message (or is too large to be read).
pub(crate) const INVALID_REQUEST: i64 = -32600;

/// The largest message read from a peer unless configured otherwise: 8 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// The deepest nesting of arrays and objects read from a peer unless configured otherwise.
/// (Tool schemas nest a few levels; serde_json itself stops at 128.)
pub const DEFAULT_MAX_DEPTH: usize = 64;

/// The most values a server reads in one message from a client unless configured otherwise:
/// 131,072 ([`JsonLimits::for_server`]).
///
/// A client's messages to a server are mostly `tools/call` arguments, and a model's
/// arguments hold fewer values than its answer holds tokens. Each value a server reads takes
/// some 240 bytes on the way through rmcp (measured: 8 MiB of `[0,0,…]` took some 950 MB),
/// so this bound holds one message to about 30 MB where the client bound,
/// [`MAX_JSON_VALUES`](toolsmith_core::MAX_JSON_VALUES), allows some 480 MB, and a server
/// reads from many clients at once.
pub const DEFAULT_SERVER_MAX_VALUES: usize = 128 * 1024;

/// Limits on the JSON read from a peer.
///
/// ```
/// use toolsmith::harness::mcp::JsonLimits;
///
/// let limits = JsonLimits::default().with_max_depth(2);
/// assert!(limits.check_depth(br#"{"a": [1, "[[[["]}"#).is_ok());
/// assert_eq!(
///     limits.check_depth(br#"{"a": [[1]]}"#).unwrap_err(),
///     "the message nests deeper than 2 levels (at byte 7)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonLimits {
    /// The largest message, in bytes.
    pub max_bytes: usize,
    /// The deepest nesting of arrays and objects.
    pub max_depth: usize,
    /// The most values (arrays, objects, strings, numbers, booleans and nulls; not an
    /// object's keys) in one message.
    pub max_values: usize,
}

impl Default for JsonLimits {
    /// 8 MiB ([`DEFAULT_MAX_MESSAGE_BYTES`]), 64 levels ([`DEFAULT_MAX_DEPTH`]) and
    /// [`MAX_JSON_VALUES`](toolsmith_core::MAX_JSON_VALUES) values (2,097,152), the bound on
    /// what Toolsmith reads from a model.
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
            max_values: toolsmith_core::MAX_JSON_VALUES,
        }
    }
}

impl JsonLimits {
    /// The limits a server puts on its clients' messages unless configured otherwise: the
    /// default's bytes and depth, and [`DEFAULT_SERVER_MAX_VALUES`] values (a client reading
    /// a server's listing of many tools needs more).
    ///
    /// ```
    /// use toolsmith::harness::mcp::{DEFAULT_SERVER_MAX_VALUES, JsonLimits};
    ///
    /// let limits = JsonLimits::for_server();
    /// assert_eq!(limits.max_values, DEFAULT_SERVER_MAX_VALUES);
    /// assert_eq!(limits.max_bytes, JsonLimits::default().max_bytes);
    /// // A tool that takes long arrays of numbers: raise it.
    /// let roomy = JsonLimits::for_server().with_max_values(1 << 20);
    /// # assert_eq!(roomy.max_values, 1 << 20);
    /// ```
    #[must_use]
    pub fn for_server() -> Self {
        Self::default().with_max_values(DEFAULT_SERVER_MAX_VALUES)
    }

    /// These limits with another message size.
    #[must_use]
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes.max(1);
        self
    }

    /// These limits with another nesting depth.
    #[must_use]
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth.max(1);
        self
    }

    /// These limits with another number of values per message.
    ///
    /// A byte bound alone does not bound what a message takes once read: each value is 80
    /// bytes or more, however short its text, and rmcp reads a message through serde's
    /// buffer first, so 8 MiB of `[0,0,0,…]` took some 950 MB (measured) in a server.
    ///
    /// ```
    /// use toolsmith::harness::mcp::JsonLimits;
    ///
    /// // An object, an array, `1`, `"x,y"` and `{}`: five values.
    /// let limits = JsonLimits::default().with_max_values(5);
    /// assert!(limits.check(br#"{"a": [1, "x,y"], "b": {}}"#).is_ok());
    /// assert_eq!(
    ///     limits.check(br#"{"a": [1, 2, 3, 4]}"#).unwrap_err(),
    ///     "the message holds more than 5 values (at byte 18)"
    /// );
    /// ```
    #[must_use]
    pub fn with_max_values(mut self, max_values: usize) -> Self {
        self.max_values = max_values.max(1);
        self
    }

    /// Checks that `json` nests no deeper than allowed, in one pass over its bytes (brackets
    /// inside strings do not count; core's scan, the one a model's arguments go through),
    /// and holds no object keyed with one of serde_json's private keys (which it would read as
    /// JSON of its own, at any depth: [`SERDE_JSON_PRIVATE_KEYS`](toolsmith_core::SERDE_JSON_PRIVATE_KEYS)).
    /// Says where it went too deep, or where the key is.
    pub fn check_depth(&self, json: &[u8]) -> Result<(), String> {
        match toolsmith_core::json_text_excess(json, self.max_depth, usize::MAX) {
            Some(excess) => Err(format!("the message {excess}")),
            None => Ok(()),
        }
    }

    /// Checks that `json` nests no deeper, and holds no more values, than allowed, and holds
    /// no object keyed with one of serde_json's private keys: one pass over its bytes that builds nothing
    /// ([`json_text_excess`]), for a message about to be handed to a parser. Says which
    /// limit it went past, and where.
    ///
    /// [`json_text_excess`]: toolsmith_core::json_text_excess
    pub fn check(&self, json: &[u8]) -> Result<(), String> {
        match toolsmith_core::json_text_excess(json, self.max_depth, self.max_values) {
            Some(excess) => Err(format!("the message {excess}")),
            None => Ok(()),
        }
    }

    /// The JSON-RPC error (code and message) for `json` when it goes past a limit of depth
    /// or values: `-32700` (parse error) too deep, as serde_json's own recursion limit is;
    /// `-32600` (invalid request) of too many values, as a message too large is, or of an
    /// object keyed with one of serde_json's private keys.
    pub(crate) fn refusal(&self, json: &[u8]) -> Option<(i64, String)> {
        match toolsmith_core::json_text_excess(json, self.max_depth, self.max_values)? {
            too_deep @ JsonTextExcess::TooDeep { .. } => {
                Some((PARSE_ERROR, format!("Parse error: the message {too_deep}")))
            }
            other => Some((
                INVALID_REQUEST,
                format!("Invalid Request: the message {other}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_only_structure() {
        let limits = JsonLimits::default().with_max_depth(3);
        assert!(limits.check_depth(br#"[[["\"[[[[[["]]]"#).is_ok());
        assert!(limits.check_depth(b"[[[[]]]]").is_err());
        let deep = "[".repeat(10_000);
        assert!(JsonLimits::default().check_depth(deep.as_bytes()).is_err());
    }

    #[test]
    fn values_are_counted_in_the_same_pass() {
        let limits = JsonLimits::default().with_max_values(4).with_max_depth(2);
        assert!(limits.check(br#"[1, "a,b,c", []]"#).is_ok());
        assert_eq!(
            limits.check(b"[1, 2, 3, 4]").unwrap_err(),
            "the message holds more than 4 values (at byte 11)"
        );
        assert_eq!(
            limits.check(b"[[[1]]]").unwrap_err(),
            "the message nests deeper than 2 levels (at byte 2)"
        );
        // The depth check alone counts no values.
        assert!(limits.check_depth(b"[1, 2, 3, 4]").is_ok());
    }
}
