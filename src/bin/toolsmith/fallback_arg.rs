//! `run --fallback API:MODEL[@URL]`: a model to ask when the one before it is down, as the
//! command line names it. Its URL may carry a user and a key (`https://user:key@host/v1`),
//! which no message of the command quotes.

use std::ffi::OsStr;
use std::fmt;

use clap::ValueEnum as _;
use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use toolsmith::harness::redacted_url;

use crate::cli::ModelApi;

/// A model of `run --fallback`: its API, the model's name, and a base URL if given.
#[derive(Clone, PartialEq, Eq)]
pub struct Fallback {
    /// The API the model is asked through.
    pub api: ModelApi,
    /// The model's name, as its API names it.
    pub model: String,
    /// The API's base URL, when not its own (or its `*_BASE_URL` variable's).
    pub base_url: Option<String>,
}

/// The URL shown without its user and key: `Debug` output may be logged.
impl fmt::Debug for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fallback")
            .field("api", &self.api)
            .field("model", &self.model)
            .field("base_url", &self.base_url.as_deref().map(redacted_url))
            .finish()
    }
}

/// Reads a `--fallback` value ([`parse_fallback`]). Its own parser rather than a function
/// one: clap quotes the value in a function parser's error, and the value's URL may hold a
/// key; this one's error quotes it without.
#[derive(Debug, Clone, Copy)]
pub struct FallbackParser;

impl TypedValueParser for FallbackParser {
    type Value = Fallback;

    fn parse_ref(
        &self,
        command: &clap::Command,
        _: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Fallback, clap::Error> {
        let read = match value.to_str() {
            Some(text) => parse_fallback(text),
            None => Err("a --fallback value is not UTF-8".to_owned()),
        };
        read.map_err(|reason| {
            command
                .clone()
                .error(ErrorKind::ValueValidation, format!("--fallback: {reason}"))
        })
    }
}

/// `API:MODEL` or `API:MODEL@URL`: the API is before the first `:` (a model's name may hold
/// more, as Ollama's `llama3:8b`), the URL from the first `@` followed by a scheme's `://`
/// (a model's name may hold an `@`, as `team@model`; a URL's user and key one more). The
/// URL must be `http://` or `https://` (in any case) with a host; a model's name holds no
/// spaces; an `@` must be followed by something. The value is quoted in an error without
/// the user and key of its URL.
fn parse_fallback(text: &str) -> Result<Fallback, String> {
    let apis = "openai-chat, openai-responses, anthropic or gemini";
    let shown = redacted_url(text);
    let Some((api, rest)) = text.split_once(':') else {
        return Err(format!("expected API:MODEL (API: {apis}), got {shown:?}"));
    };
    let api = ModelApi::from_str(api, true)
        .map_err(|_| format!("unknown API {api:?} in {shown:?}: expected {apis}"))?;
    let (model, base_url) = match url_at(rest) {
        Some(at) => {
            let url = &rest[at + 1..];
            let (scheme, after) = url.split_once("://").unwrap_or_default();
            if !["http", "https"]
                .iter()
                .any(|known| scheme.eq_ignore_ascii_case(known))
            {
                return Err(format!(
                    "the URL after the `@` in {shown:?} must start with http:// or https://"
                ));
            }
            if after.rsplit('@').next().is_none_or(|host| {
                host.split(['/', '?', '#'])
                    .next()
                    .is_none_or(|host| host.trim().is_empty())
            }) {
                return Err(format!("the URL after the `@` in {shown:?} names no host"));
            }
            (&rest[..at], Some(url.to_owned()))
        }
        None if rest.ends_with('@') => {
            return Err(format!(
                "no URL after the `@` in {shown:?}: give API:MODEL@http(s)://HOST…, or no `@`"
            ));
        }
        None => (rest, None),
    };
    if model.trim().is_empty() {
        return Err(format!("no model named after the API in {shown:?}"));
    }
    if model.contains(char::is_whitespace) {
        return Err(format!(
            "the model {model:?} in {shown:?} has a space: a model's name has no spaces \
             (and a URL goes after an `@`, starting with http:// or https://)"
        ));
    }
    Ok(Fallback {
        api,
        model: model.to_owned(),
        base_url,
    })
}

/// Where the URL of `rest` (what follows `API:`) begins: its first `@` followed by a
/// scheme (letters, digits, `+`, `-`, `.`) and `://`.
fn url_at(rest: &str) -> Option<usize> {
    rest.match_indices('@').map(|(at, _)| at).find(|&at| {
        rest[at + 1..].split_once("://").is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fallback_is_an_api_a_model_and_perhaps_a_url() {
        let read = |text: &str| parse_fallback(text);
        assert_eq!(
            read("openai-chat:gpt-4.1-mini"),
            Ok(Fallback {
                api: ModelApi::OpenaiChat,
                model: "gpt-4.1-mini".into(),
                base_url: None,
            })
        );
        // A model's name may hold `:` and `@`; only a URL after an `@` is one.
        assert_eq!(
            read("OpenAI-Chat:llama3:8b@http://localhost:11434/v1"),
            Ok(Fallback {
                api: ModelApi::OpenaiChat,
                model: "llama3:8b".into(),
                base_url: Some("http://localhost:11434/v1".into()),
            })
        );
        assert_eq!(
            read("anthropic:team@model").map(|fallback| fallback.model),
            Ok("team@model".to_owned())
        );
        // A URL's user and key are the URL's, whatever `@` they hold.
        assert_eq!(
            read("anthropic:team@model@HTTPS://me:k@y@proxy.test/v1"),
            Ok(Fallback {
                api: ModelApi::Anthropic,
                model: "team@model".into(),
                base_url: Some("HTTPS://me:k@y@proxy.test/v1".into()),
            })
        );
        for (wrong, says) in [
            ("gpt-4.1-mini", "expected API:MODEL"),
            ("bedrock:claude", "unknown API \"bedrock\""),
            ("gemini:", "no model named"),
            ("gemini: @https://example.test", "no model named"),
            ("gemini:m@", "no URL after the `@`"),
            (
                "gemini:m@ftp://example.test",
                "must start with http:// or https://",
            ),
            ("gemini:m@https://", "names no host"),
            ("gemini:m@https://key@/v1", "names no host"),
            ("gemini:m@not a url", "has a space"),
        ] {
            let error = read(wrong).unwrap_err();
            assert!(error.contains(says), "{wrong:?}: {error}");
        }
    }

    #[test]
    fn no_error_or_debug_output_quotes_a_url_s_user_and_key() {
        for wrong in [
            "bedrock:m@https://me:sk-1@host/v1",
            "gemini:m@ftp://me:sk-1@host/v1",
            "gemini:m@https://me:sk-1@/v1",
            "m@https://me:sk-1@host",
        ] {
            let error = parse_fallback(wrong).unwrap_err();
            assert!(!error.contains("sk-1"), "{wrong:?}: {error}");
        }
        let read = parse_fallback("gemini:m@https://me:sk-1@host/v1").unwrap();
        assert_eq!(read.base_url.as_deref(), Some("https://me:sk-1@host/v1"));
        let debug = format!("{read:?}");
        assert!(
            debug.contains("https://host/v1") && !debug.contains("sk-1"),
            "{debug}"
        );
        assert_eq!(redacted_url("no URL at all"), "no URL at all");
        assert_eq!(
            redacted_url("x@http://u:k@h:8080?q=a@b"),
            "x@http://h:8080?q=…"
        );
    }
}
