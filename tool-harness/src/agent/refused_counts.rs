//! [`RefusedCounts`]: the token counts a provider's refusal of a request longer than the
//! model's context window states, read from its message so that
//! [`DropOldestExchanges`](super::DropOldestExchanges) shortens by about as much as the
//! request passed the window.

/// What a refusal says the request took and what the model allows, in the provider's
/// tokens. Read from the messages of
/// [`ModelError::ContextTooLong`](crate::model::ModelError::ContextTooLong) as the APIs write
/// them:
///
/// - Anthropic: "prompt is too long: 209353 tokens > 199999 maximum", and "input length and
///   `max_tokens` exceed context limit: 199759 + 8192 > 200000, …" (the output the request
///   reserves counted in);
/// - OpenAI's Chat Completions, and the servers that speak it (vLLM, DeepSeek): "This
///   model's maximum context length is 8192 tokens. However, your messages resulted in 8227
///   tokens…", "… However, you requested 8203 tokens (7691 in the messages, 512 in the
///   completion)…", and the older "… is 4097 tokens, however you requested 4162 tokens
///   (162 in your prompt; 4000 for the completion)…";
/// - Gemini: "The input token count (1200293) exceeds the maximum number of tokens allowed
///   (1048576)."
///
/// Any other message (OpenAI's Responses "Your input exceeds the context window of this
/// model", Anthropic's 413 "Request exceeds the maximum size") gives no counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RefusedCounts {
    /// The tokens the request took, with the output it reserved where the message counts
    /// that.
    pub(crate) requested: u64,
    /// The model's context window, as the message states it.
    pub(crate) limit: u64,
}

impl RefusedCounts {
    /// The counts `message` states, when it is one of the shapes read and says more was
    /// requested than allowed (counts that do not explain the refusal size nothing).
    pub(crate) fn read(message: &str) -> Option<Self> {
        let message = message.to_ascii_lowercase();
        let counts = anthropic_prompt(&message)
            .or_else(|| anthropic_with_output(&message))
            .or_else(|| openai(&message))
            .or_else(|| gemini(&message))?;
        (counts.requested > counts.limit).then_some(counts)
    }

    /// How many tokens the request passed the window by.
    pub(crate) fn excess(&self) -> u64 {
        self.requested.saturating_sub(self.limit)
    }
}

/// "prompt is too long: 209353 tokens > 199999 maximum".
fn anthropic_prompt(message: &str) -> Option<RefusedCounts> {
    let mut numbers = numbers_after(message, "prompt is too long")?;
    Some(RefusedCounts {
        requested: numbers.next()?,
        limit: numbers.next()?,
    })
}

/// "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000".
fn anthropic_with_output(message: &str) -> Option<RefusedCounts> {
    let mut numbers = numbers_after(message, "exceed context limit")?;
    let (input, output) = (numbers.next()?, numbers.next()?);
    Some(RefusedCounts {
        requested: input.saturating_add(output),
        limit: numbers.next()?,
    })
}

/// "maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens"
/// or "… you requested 8203 tokens (…)": the number after the window's is the request's.
fn openai(message: &str) -> Option<RefusedCounts> {
    if !(message.contains("requested") || message.contains("resulted in")) {
        return None;
    }
    let mut numbers = numbers_after(message, "maximum context length is")?;
    let limit = numbers.next()?;
    Some(RefusedCounts {
        requested: numbers.next()?,
        limit,
    })
}

/// "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)".
fn gemini(message: &str) -> Option<RefusedCounts> {
    let requested = numbers_after(message, "input token count")?.next()?;
    let limit = numbers_after(message, "maximum number of tokens allowed")?.next()?;
    Some(RefusedCounts { requested, limit })
}

/// The whole numbers written in `text` after its first `phrase`, in order; `None` without
/// the phrase. A number too large for a `u64` ends them.
fn numbers_after<'a>(text: &'a str, phrase: &str) -> Option<impl Iterator<Item = u64> + 'a> {
    let start = text.find(phrase)? + phrase.len();
    Some(
        text[start..]
            .split(|c: char| !c.is_ascii_digit())
            .filter(|digits| !digits.is_empty())
            .map_while(|digits| digits.parse().ok()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(message: &str) -> Option<(u64, u64)> {
        RefusedCounts::read(message).map(|counts| (counts.requested, counts.limit))
    }

    #[test]
    fn each_provider_s_words_give_their_counts() {
        assert_eq!(
            read("prompt is too long: 209353 tokens > 199999 maximum"),
            Some((209_353, 199_999))
        );
        assert_eq!(
            read(
                "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, \
                 decrease input length or `max_tokens` and try again"
            ),
            Some((207_951, 200_000))
        );
        assert_eq!(
            read(
                "This model's maximum context length is 8192 tokens. However, your messages \
                 resulted in 8227 tokens. Please reduce the length of the messages."
            ),
            Some((8227, 8192))
        );
        assert_eq!(
            read(
                "This model's maximum context length is 131072 tokens. However, you requested \
                 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce \
                 the length of the messages or completion."
            ),
            Some((131_134, 131_072))
        );
        assert_eq!(
            read(
                "This model's maximum context length is 4097 tokens, however you requested \
                 4162 tokens (162 in your prompt; 4000 for the completion). Please reduce your \
                 prompt; or completion length."
            ),
            Some((4162, 4097))
        );
        assert_eq!(
            read(
                "The input token count (1200293) exceeds the maximum number of tokens allowed \
                 (1048576)."
            ),
            Some((1_200_293, 1_048_576))
        );
    }

    #[test]
    fn a_message_without_counts_or_whose_counts_fit_gives_none() {
        for message in [
            "Your input exceeds the context window of this model. Please adjust your input and \
             try again.",
            "Request exceeds the maximum size",
            "prompt is too long",
            "prompt is too long: 199000 tokens > 199999 maximum",
            "prompt is too long: 99999999999999999999999 tokens > 199999 maximum",
            "",
        ] {
            assert_eq!(read(message), None, "{message}");
        }
        assert_eq!(
            RefusedCounts::read("prompt is too long: 209353 tokens > 199999 maximum")
                .map(|counts| counts.excess()),
            Some(9354)
        );
    }
}
