//! Bounds on untrusted JSON: how large one message may be and how deeply it may nest,
//! checked before it is parsed.

/// The largest message read from a peer unless configured otherwise: 8 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// The deepest nesting of arrays and objects read from a peer unless configured otherwise.
/// (Tool schemas nest a few levels; serde_json itself stops at 128.)
pub const DEFAULT_MAX_DEPTH: usize = 64;

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
}

impl Default for JsonLimits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

impl JsonLimits {
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

    /// Checks that `json` nests no deeper than allowed, in one pass over its bytes (brackets
    /// inside strings do not count; core's scan, the one a model's arguments go through).
    /// Says where it went too deep.
    pub fn check_depth(&self, json: &[u8]) -> Result<(), String> {
        match toolsmith_core::json_text_too_deep(json, self.max_depth) {
            Some(at) => Err(format!(
                "the message nests deeper than {} levels (at byte {at})",
                self.max_depth
            )),
            None => Ok(()),
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
}
