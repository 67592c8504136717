//! URLs as errors, `Debug` and `Display` output show them: without the user name and password
//! a URL may carry (`https://user:key@host/`), since such output is logged.

use std::borrow::Cow;

/// `url` without the user name and password it may carry (`https://user:key@host/v1` as
/// `https://host/v1`), for an error, a log line or `Debug` output; a URL that has neither as
/// it is. Text that is not one URL (a URL that does not parse, or a value holding one, as
/// `openai-chat:model@https://user:key@host/v1`) loses what follows its first `://` up to
/// the last `@` before the next `/`, `?` or `#`.
///
/// ```
/// use toolsmith::harness::without_userinfo;
///
/// assert_eq!(without_userinfo("https://me:sk-1@api.test/v1"), "https://api.test/v1");
/// assert_eq!(
///     without_userinfo("openai-chat:llama3@http://me:sk-1@localhost:11434/v1"),
///     "openai-chat:llama3@http://localhost:11434/v1"
/// );
/// assert_eq!(without_userinfo("https://api.test/v1?to=a@b"), "https://api.test/v1?to=a@b");
/// ```
pub fn without_userinfo(url: &str) -> Cow<'_, str> {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            Cow::Owned(parsed.to_string())
        }
        // A value that parses as a URL of its own scheme may still hold one with a key.
        _ => {
            let Some(scheme_end) = url.find("://") else {
                return Cow::Borrowed(url);
            };
            let start = scheme_end + 3;
            let authority = url[start..]
                .split(['/', '?', '#'])
                .next()
                .unwrap_or_default();
            match authority.rfind('@') {
                Some(at) => Cow::Owned(format!("{}{}", &url[..start], &url[start + at + 1..])),
                None => Cow::Borrowed(url),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::without_userinfo;

    #[test]
    fn a_user_and_password_are_left_out_and_nothing_else_changes() {
        assert_eq!(
            without_userinfo("https://user:s3cret@api.example.com/v1"),
            "https://api.example.com/v1"
        );
        assert_eq!(
            without_userinfo("http://token@127.0.0.1:8080/mcp"),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(
            without_userinfo("http://127.0.0.1:8080/mcp"),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(without_userinfo("not a url"), "not a url");
        // A URL that does not parse, as a refusal quotes it.
        assert_eq!(
            without_userinfo("https://user:s3cret@host name/v1"),
            "https://host name/v1"
        );
        assert_eq!(
            without_userinfo("ftp://user:s3@cret@[::1/v1?a=b@c"),
            "ftp://[::1/v1?a=b@c"
        );
    }
}
