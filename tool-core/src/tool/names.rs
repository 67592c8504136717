//! The rule tool and command names follow: what OpenAI and Anthropic accept.

/// The longest name providers accept.
pub const MAX_NAME_LEN: usize = 64;

/// The name of the built-in meta-tool; no other tool may take it.
pub const SHED_TOOL_NAME: &str = "shed";

/// Checks a tool or command name against `^[a-zA-Z0-9_-]{1,64}$`; the error says what is
/// wrong with it.
///
/// ```
/// use toolsmith_core::check_name;
///
/// assert!(check_name("read_file").is_ok());
/// assert_eq!(
///     check_name("read file").unwrap_err(),
///     "'read file' is not a valid tool name: ' ' at byte 4 is not allowed (use letters, digits, '_' and '-')"
/// );
/// ```
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a tool name must not be empty".to_owned());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "'{name}' is not a valid tool name: it is {} bytes long, the limit is {MAX_NAME_LEN}",
            name.len()
        ));
    }
    if let Some((at, c)) = name
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "'{name}' is not a valid tool name: {c:?} at byte {at} is not allowed (use letters, digits, '_' and '-')"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_provider_names_only() {
        for ok in ["a", "read_file", "get-weather", "X9", &"a".repeat(64)] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a.b", "a b", "ünï", "a/b", &"a".repeat(65), "tool()"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
