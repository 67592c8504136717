//! Which text of a refused request was too long: OpenAI's refusal of an embeddings request
//! longer than the model's context ("This model's maximum context length is 8192 tokens,
//! however you requested 9000 tokens …") does not say which of its inputs it was, so the
//! embedder asks again with halves of the request until one text is left.

use toolsmith_core::ServiceError;

use super::{OpenAiEmbedder, PATH};
use crate::model::ModelError;

/// How a request of some texts was answered, for the search.
enum Answer {
    Embedded,
    TooLong(ModelError),
}

impl OpenAiEmbedder {
    /// The error of a request of `texts` (texts `first` onwards of `all`) that the server
    /// refused as `refused`, too long: it names the first text refused alone, found by
    /// asking for halves (at most two requests a halving, each of at most half the texts
    /// before it, so about twice the batch's texts in all, and only on this failure). When
    /// every text passes alone, the request was too long only as a whole (servers also bound
    /// a request's total tokens), and the error says so, with a smaller batch as the cure.
    /// A halving that fails otherwise (a rate limit, a lost connection) ends the search with
    /// the first refusal, saying why the text was not found.
    pub(super) async fn too_long_text(
        &self,
        first: usize,
        texts: &[String],
        all: usize,
        refused: ModelError,
    ) -> ServiceError {
        let mut refused = refused;
        // Texts `start..end` are refused together.
        let (mut start, mut end) = (0, texts.len());
        while end - start > 1 {
            let middle = start + (end - start) / 2;
            let halves = [(start, middle), (middle, end)];
            let mut narrowed = false;
            for (from, to) in halves {
                match self.answer(&texts[from..to]).await {
                    Ok(Answer::Embedded) => {}
                    Ok(Answer::TooLong(error)) => {
                        (start, end, refused) = (from, to, error);
                        narrowed = true;
                        break;
                    }
                    Err(error) => {
                        let reason = format!(
                            "{refused} (the request of texts {} to {} of {all}; asking again \
                             to find which text is too long failed: {error})",
                            first + start,
                            first + end - 1,
                        );
                        return ServiceError::with_source("embedder", reason, refused);
                    }
                }
            }
            if !narrowed {
                let reason = format!(
                    "{refused} (texts {} to {} of {all} are accepted one by one but not in one \
                     request: send fewer texts a request, `batch_size`)",
                    first + start,
                    first + end - 1,
                );
                return ServiceError::with_source("embedder", reason, refused);
            }
        }
        let text = &texts[start];
        let reason = format!(
            "{refused} (text {} of {all}, {} bytes, is too long for the model: split it)",
            first + start,
            text.len(),
        );
        ServiceError::with_source("embedder", reason, refused)
    }

    /// Whether the server embeds `texts` in one request or refuses them as too long; any
    /// other failure is the error.
    async fn answer(&self, texts: &[String]) -> Result<Answer, ModelError> {
        let answered = self.transport.post_json(PATH, &self.body(texts)).await;
        match answered.map_err(|error| self.transport.hiding_key(error)) {
            Ok(_) => Ok(Answer::Embedded),
            Err(error @ ModelError::ContextTooLong { .. }) => Ok(Answer::TooLong(error)),
            Err(error) => Err(error),
        }
    }
}
