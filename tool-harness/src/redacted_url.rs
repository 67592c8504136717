//! URLs as errors, `Debug` and `Display` output show them: without the user name, password
//! and query values a URL may carry (`https://user:key@host/`, `?api_key=…`), since such
//! output is logged.

use std::borrow::Cow;

/// What a query value is shown as.
const HIDDEN: &str = "…";

/// `url` without the user name and password it may carry (`https://user:key@host/v1` as
/// `https://host/v1`) and with its query's values hidden (`?key=sk-1&v=2` as `?key=…&v=…`),
/// for an error, a log line or `Debug` output; a URL that has none of them as it is. Text
/// that is not one URL (a URL that does not parse, or a value holding one, as
/// `openai-chat:model@https://user:key@host/v1`) loses what follows its first `://` up to
/// the last `@` before the next `/`, `?` or `#`, and the values of the query after it.
///
/// ```
/// use toolsmith::harness::redacted_url;
///
/// assert_eq!(redacted_url("https://me:sk-1@api.test/v1"), "https://api.test/v1");
/// assert_eq!(
///     redacted_url("openai-chat:llama3@http://me:sk-1@localhost:11434/v1"),
///     "openai-chat:llama3@http://localhost:11434/v1"
/// );
/// assert_eq!(redacted_url("https://api.test/mcp?api_key=sk-1&to=a@b"), "https://api.test/mcp?api_key=…&to=…");
/// assert_eq!(redacted_url("https://api.test/v1#part"), "https://api.test/v1#part");
/// ```
pub fn redacted_url(url: &str) -> Cow<'_, str> {
    let Some(scheme_end) = url.find("://") else {
        return Cow::Borrowed(url);
    };
    let start = scheme_end + 3;
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |end| start + end);
    // The user and password: what the authority holds before its last `@`.
    let host_start = url[start..authority_end]
        .rfind('@')
        .map_or(start, |at| start + at + 1);
    // The query: after the first `?` before any `#`, up to the `#`.
    let fragment = url[authority_end..]
        .find('#')
        .map_or(url.len(), |at| authority_end + at);
    let query = url[authority_end..fragment]
        .find('?')
        .map(|at| authority_end + at + 1);
    if host_start == start && query.is_none() {
        return Cow::Borrowed(url);
    }
    let mut shown = String::with_capacity(url.len());
    shown.push_str(&url[..start]);
    match query {
        None => shown.push_str(&url[host_start..]),
        Some(query) => {
            shown.push_str(&url[host_start..query]);
            for (index, pair) in url[query..fragment].split('&').enumerate() {
                if index > 0 {
                    shown.push('&');
                }
                match pair.split_once('=') {
                    Some((name, value)) if !value.is_empty() => {
                        shown.push_str(name);
                        shown.push('=');
                        shown.push_str(HIDDEN);
                    }
                    _ => shown.push_str(pair),
                }
            }
            shown.push_str(&url[fragment..]);
        }
    }
    Cow::Owned(shown)
}

/// `text`, an error's that quotes `url` (as `reqwest`'s do: "error sending request for url
/// (…)"), with `url` shown as [`redacted_url`] shows it.
pub(crate) fn with_url_redacted(text: String, url: Option<&str>) -> String {
    match url {
        Some(url) if !url.is_empty() && text.contains(url) => text.replace(url, &redacted_url(url)),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::redacted_url;

    #[test]
    fn a_user_and_password_are_left_out_and_nothing_else_changes() {
        assert_eq!(
            redacted_url("https://user:s3cret@api.example.com/v1"),
            "https://api.example.com/v1"
        );
        assert_eq!(
            redacted_url("http://token@127.0.0.1:8080/mcp"),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(
            redacted_url("http://127.0.0.1:8080/mcp"),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(redacted_url("not a url"), "not a url");
        // A URL that does not parse, as a refusal quotes it.
        assert_eq!(
            redacted_url("https://user:s3cret@host name/v1"),
            "https://host name/v1"
        );
        assert_eq!(
            redacted_url("ftp://user:s3@cret@[::1/v1?a=b@c"),
            "ftp://[::1/v1?a=…"
        );
    }

    #[test]
    fn query_values_are_hidden_and_their_names_kept() {
        assert_eq!(
            redacted_url("https://api.test/mcp?key=sk-1&flag&empty=&v=2#top"),
            "https://api.test/mcp?key=…&flag&empty=&v=…#top"
        );
        assert_eq!(
            redacted_url("http://u:p@h:1/?token=t"),
            "http://h:1/?token=…"
        );
        // A `?` in the fragment is no query.
        assert_eq!(redacted_url("https://h/p#a?b=c"), "https://h/p#a?b=c");
    }

    #[test]
    fn an_error_quoting_the_url_quotes_it_redacted() {
        let url = "http://127.0.0.1:1/mcp?key=sk-1";
        let text = format!("error sending request for url ({url}): Connection refused");
        assert_eq!(
            super::with_url_redacted(text, Some(url)),
            "error sending request for url (http://127.0.0.1:1/mcp?key=…): Connection refused"
        );
        assert_eq!(
            super::with_url_redacted("no url here".to_owned(), Some(url)),
            "no url here"
        );
    }
}
