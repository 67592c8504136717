//! URLs as errors, `Debug` and `Display` output show them: without the user name and password
//! a URL may carry (`https://user:key@host/`), since such output is logged.

use std::borrow::Cow;

/// `url` without a user name or password in it; a URL that has neither as it is. A URL that
/// does not parse (the very one a refusal quotes) loses what its authority (after the
/// first `://`, up to a `/`, `?` or `#`) holds before its last `@`.
pub(crate) fn without_userinfo(url: &str) -> Cow<'_, str> {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            Cow::Owned(parsed.to_string())
        }
        Ok(_) => Cow::Borrowed(url),
        Err(_) => {
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
