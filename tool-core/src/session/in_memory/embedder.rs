//! [`HashingEmbedder`]: a deterministic bag-of-words embedder.

use async_trait::async_trait;

use crate::shed::analyze;
use crate::tool::stable_hash::fnv1a;
use crate::{Embedder, ServiceError};

/// Embeds a text as its analysed words hashed into a fixed number of dimensions (the
/// "hashing trick"): texts that share words point the same way. No model, no network, the
/// same vectors on every machine: for tests, examples and as a stand-in.
///
/// ```
/// use toolsmith::Embedder;
/// use toolsmith::in_memory::HashingEmbedder;
///
/// let embedder = HashingEmbedder::new(64);
/// let vectors = futures::executor::block_on(
///     embedder.embed(&["read a file".into(), "reading files".into()])).unwrap();
/// assert_eq!(vectors[0], vectors[1]);
/// assert_eq!(vectors[0].len(), 64);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HashingEmbedder {
    dimensions: usize,
}

impl HashingEmbedder {
    /// An embedder into `dimensions` numbers (at least 1).
    pub fn new(dimensions: usize) -> Self {
        Self {
            dimensions: dimensions.max(1),
        }
    }

    /// The vector of one text.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0; self.dimensions];
        analyze(text, |term| {
            let hash = fnv1a(term.as_bytes());
            let slot = (hash % self.dimensions as u64) as usize;
            // A second hash bit picks the sign, so collisions cancel out on average.
            vector[slot] += if hash >> 63 == 0 { 1.0 } else { -1.0 };
        });
        vector
    }
}

impl Default for HashingEmbedder {
    /// 256 dimensions.
    fn default() -> Self {
        Self::new(256)
    }
}

#[async_trait]
impl Embedder for HashingEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        Ok(texts.iter().map(|text| self.embed_one(text)).collect())
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }
}
