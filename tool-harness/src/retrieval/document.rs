//! [`Document`]: one retrieved piece of text, its score and metadata.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A retrieved document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Document {
    /// The document's text.
    pub content: String,
    /// How relevant it is to the query (higher is better; comparable within one result).
    pub score: f64,
    /// Whatever the store keeps about it (source, title, page, …).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

impl Document {
    /// A document with `content` and `score`, and no metadata.
    pub fn new(content: impl Into<String>, score: f64) -> Self {
        Self {
            content: content.into(),
            score,
            metadata: Map::new(),
        }
    }

    /// The same document with one more metadata entry.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
}
