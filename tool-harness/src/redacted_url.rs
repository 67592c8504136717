//! URLs as errors, `Debug` and `Display` output show them: without the user name, password
//! and query values a URL may carry (`https://user:key@host/`, `?api_key=…`), since such
//! output is logged.

use std::borrow::Cow;

/// What a query value is shown as.
const HIDDEN: &str = "…";

/// `url` without the user name and password it may carry (`https://user:key@host/v1` as
/// `https://host/v1`) and with its query's values hidden (`?key=sk-1&v=2` as `?key=…&v=…`),
/// for an error, a log line or `Debug` output; a URL that has none of them as it is. Text
/// holding a URL (`openai-chat:model@https://user:key@host/v1`) loses what follows its
/// first `://` up to the `@` that ends the password, and the values of the query after it.
///
/// A password may hold an unencoded `/` (`http://u:1234/word@host/v1`), which its text
/// cannot tell from a path; a path may hold an `@` (`https://host/@team/mcp`,
/// `…/models/claude-sonnet-4@20250514:rawPredict`). In a URL that parses, the password ends
/// at the last `@` of its first path segment, else at the last `@` before the path. An
/// `@` starting that segment ends it only after a port and a name that is no address
/// (`http://u:1234/@host` loses `u:1234/@`; `https://host/@team/mcp`,
/// `http://localhost:8080/@team/mcp` and `https://api.test:8443/@team/mcp` are kept); an `@`
/// in a later segment never does. A password holding two `/` is shown. A URL that does not
/// parse (`http://u:se?cret@host`, whose password holds a `?`; `http://u:pass/word@host`,
/// whose port would be `pass`) loses everything up to its last `@`.
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
    let host_start = password_end(url, scheme_end).map_or(start, |at| at + 1);
    let authority_end = url[host_start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |end| host_start + end);
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

/// Where the user and password of the URL whose scheme ends at `scheme_end` (its `://`)
/// end: the `@` after them, if any, by the rule [`redacted_url`] gives. A URL's text cannot
/// say where an unencoded `/`, `?` or `#` in a password ends it; the rule hides the forms
/// that parse with such a password (`u:1234/pw@host`) while keeping the `@` of real paths.
fn password_end(text: &str, scheme_end: usize) -> Option<usize> {
    let start = scheme_end + 3;
    // The scheme: the letters, digits, `+`, `-` and `.` before the `://`. It starts after
    // the character before them, which may take several bytes (`éhttp://`).
    let scheme_start = text[..scheme_end]
        .char_indices()
        .rfind(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .map_or(0, |(at, c)| at + c.len_utf8());
    if reqwest::Url::parse(&text[scheme_start..]).is_err() {
        return text[start..].rfind('@').map(|at| start + at);
    }
    let before_query = text[start..]
        .find(['?', '#'])
        .map_or(text.len(), |at| start + at);
    let authority_end = text[start..before_query]
        .find('/')
        .map_or(before_query, |at| start + at);
    let in_authority = text[start..authority_end].rfind('@').map(|at| start + at);
    if authority_end == before_query {
        return in_authority;
    }
    let segment_start = authority_end + 1;
    let segment_end = text[segment_start..before_query]
        .find('/')
        .map_or(before_query, |at| segment_start + at);
    let host = &text[in_authority.map_or(start, |at| at + 1)..authority_end];
    match text[segment_start..segment_end].rfind('@') {
        Some(at) if at > 0 || port_after_no_address(host) => Some(segment_start + at),
        _ => in_authority,
    }
}

/// Whether `authority` (a URL's host and port) reads as a user name and the digits that
/// start a password: a port after a name that is no address. A name with a `.`, an IP
/// address in brackets or `localhost` is taken for the host it names.
fn port_after_no_address(authority: &str) -> bool {
    let Some((name, port)) = authority.rsplit_once(':') else {
        return false;
    };
    port.bytes().all(|b| b.is_ascii_digit())
        && !name.is_empty()
        && !name.contains(['.', '[', ']'])
        && !name.eq_ignore_ascii_case("localhost")
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
        // One that does not parse, up to its last `@`: where its password ends cannot be
        // known (it may hold a `?`).
        assert_eq!(redacted_url("ftp://user:s3@cret@[::1/v1?a=b@c"), "ftp://c");
    }

    #[test]
    fn a_password_holding_a_slash_a_question_mark_or_a_hash_is_left_out() {
        // The user and password were taken to end at the first `/`, `?` or `#`: a URL whose
        // password held one (unencoded) was quoted whole.
        for (url, shown) in [
            // Does not parse (the port would be `secret`).
            ("http://u:secret/pw@127.0.0.1:1/v1", "http://127.0.0.1:1/v1"),
            // Parses, with `u` its host and `1234` its port.
            ("http://u:1234/pw@api.test/v1?k=s", "http://api.test/v1?k=…"),
            ("https://t0k/en@api.test/v1", "https://api.test/v1"),
            // Parses too: `u` its host, `1234` its port, `@host` its path.
            ("http://u:1234/@host/v1", "http://host/v1"),
            ("http://a@u:1234/@host/v1", "http://host/v1"),
            ("http://u:se?cret@127.0.0.1:1/v1", "http://127.0.0.1:1/v1"),
            ("http://u:se#cret@127.0.0.1:1/v1", "http://127.0.0.1:1/v1"),
            (
                "openai-chat:m@http://u:secret/pw@h:1/v1",
                "openai-chat:m@http://h:1/v1",
            ),
        ] {
            assert_eq!(redacted_url(url), shown, "{url}");
        }
    }

    #[test]
    fn an_at_sign_starting_a_path_segment_or_in_the_query_is_kept() {
        for url in [
            "https://server.test/@team/tools/mcp",
            "https://server.test/@team/tools/mcp?v=",
            "http://127.0.0.1:8080/@me/mcp#a@b",
        ] {
            assert_eq!(redacted_url(url), url);
        }
        assert_eq!(
            redacted_url("https://u:p@server.test/@team/mcp?to=a@b"),
            "https://server.test/@team/mcp?to=…"
        );
    }

    #[test]
    fn an_at_sign_after_the_first_path_segment_is_kept() {
        // A model's version on Vertex AI: the URL was shown as `https://20250514:rawPredict`.
        let vertex = "https://x-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/\
                      anthropic/models/claude-sonnet-4@20250514:rawPredict";
        assert_eq!(redacted_url(vertex), vertex);
        assert_eq!(
            redacted_url(&vertex.replacen("https://", "https://u:p@", 1)),
            vertex
        );
        for url in [
            "http://localhost:8080/v1/models/claude@20250514:rawPredict",
            "https://server.smithery.ai/@owner/name/mcp",
            "http://localhost:8080/@owner/name/mcp",
            "http://10.0.0.1:8080/@owner/name/mcp",
            "https://server.test:8443/@owner/name/mcp",
        ] {
            assert_eq!(redacted_url(url), url);
        }
        assert_eq!(
            redacted_url("http://u:p@localhost:8080/@owner/mcp"),
            "http://localhost:8080/@owner/mcp"
        );
    }

    #[test]
    fn text_with_a_multi_byte_character_before_the_scheme_is_read_without_a_panic() {
        // The scheme's start was taken one byte after the character before it: inside `é`.
        assert_eq!(redacted_url("éhttp://u:p@h/v1"), "éhttp://h/v1");
        assert_eq!(redacted_url("éhttp://x"), "éhttp://x");
        assert_eq!(
            redacted_url("modèle→http://u:p@h/v1?k=1"),
            "modèle→http://h/v1?k=…"
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

    proptest::proptest! {
        /// Any text, URLs built of the characters that matter to the reading (`:`, `/`,
        /// `@`, `?`, `#`, `&`, `=`, digits, letters of several bytes) among them: no panic,
        /// and a password placed in a URL never shows.
        #[test]
        fn no_text_panics_and_no_password_shows(
            text in "\\PC{0,40}",
            before in "[a-zé.+-]{0,4}",
            user in "[a-z0-9]{0,4}",
            path in "[a-z0-9/@:?#&=é.]{0,16}",
        ) {
            let _ = redacted_url(&text);
            let url = format!("{before}http://{user}:pW9zQ@host.test:8080/{path}");
            let shown = redacted_url(&url);
            proptest::prop_assert!(!shown.contains("pW9zQ"), "{url} shown as {shown}");
        }
    }
}
