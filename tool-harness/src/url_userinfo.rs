//! URLs as errors, `Debug` and `Display` output show them: without the user name and password
//! a URL may carry (`https://user:key@host/`), since such output is logged.

use std::borrow::Cow;

/// `url` without a user name or password in it; a URL that has neither, or that does not
/// parse, as it is.
pub(crate) fn without_userinfo(url: &str) -> Cow<'_, str> {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            Cow::Owned(parsed.to_string())
        }
        _ => Cow::Borrowed(url),
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
    }
}
