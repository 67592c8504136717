//! The BM25F parameters: how much each field counts and how strongly its length is
//! normalised.

use crate::shed::tool_text::{FIELD_COUNT, Field};

/// Per-field weights and length normalisation, and the term-frequency saturation `k1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bm25fParams {
    /// Saturation of the combined term frequency: past a few occurrences, more say little.
    pub(crate) k1: f32,
    /// Weight of an occurrence in each field, by [`Field`] index.
    pub(crate) weight: [f32; FIELD_COUNT],
    /// Length normalisation of each field (0 = none, 1 = full), by [`Field`] index.
    pub(crate) b: [f32; FIELD_COUNT],
}

impl Default for Bm25fParams {
    /// A name is a tool's summary, so a word there is strong evidence; a description is the
    /// main text; a category is broad, shared by many tools; argument names are identifiers
    /// like the name but say what the tool takes, not what it does; argument descriptions
    /// are long and mention other things in passing, so they weigh least.
    fn default() -> Self {
        let mut weight = [0.0; FIELD_COUNT];
        let mut b = [0.0; FIELD_COUNT];
        for (field, w, norm) in [
            (Field::Name, 3.0, 0.5),
            (Field::Description, 1.0, 0.75),
            (Field::Category, 0.5, 0.5),
            (Field::ParameterName, 1.0, 0.75),
            (Field::ParameterDescription, 0.5, 0.75),
        ] {
            weight[field as usize] = w;
            b[field as usize] = norm;
        }
        Self { k1: 1.2, weight, b }
    }
}
