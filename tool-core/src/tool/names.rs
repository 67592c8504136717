//! The rule tool and command names follow: what OpenAI and Anthropic accept.

/// The longest name providers accept.
pub const MAX_NAME_LEN: usize = 64;

/// The name of the built-in meta-tool; no other tool may take it.
pub const SHED_TOOL_NAME: &str = "shed";

/// Checks a tool or command name against `^[a-zA-Z0-9_-]{1,64}$`; the error says what is
/// wrong with it.
///
/// ```
/// use toolsmith::check_name;
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
    if let Some((at, c)) = name.char_indices().find(|&(_, c)| !is_name_char(c)) {
        return Err(format!(
            "'{name}' is not a valid tool name: {c:?} at byte {at} is not allowed (use letters, digits, '_' and '-')"
        ));
    }
    Ok(())
}

/// Whether `c` may stand in a tool name as providers take it (`[a-zA-Z0-9_-]`; Anthropic
/// takes call ids of the same characters).
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether two names (of tools, commands or arguments) are equal. Names are mostly a word or
/// two: up to 16 bytes they are compared here, which costs less than the call to `bcmp` that
/// `==` makes: from 4 bytes as two loads a side that cover every byte between them, below
/// that byte by byte.
#[inline]
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // The two loads overlap when the name is shorter than both together.
    match n {
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// The `N` bytes of `bytes` from `at`, as one value to compare.
#[inline(always)]
fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut word = [0; N];
    word.copy_from_slice(&bytes[at..at + N]);
    word
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

    #[test]
    fn names_compare_as_strings_do() {
        let long = "a_rather_long_argument_name";
        for (a, b) in [
            ("", ""),
            ("a", "a"),
            ("a", "b"),
            ("a", "ab"),
            ("abc", "abc"),
            ("abc", "abd"),
            ("abc", "bbc"),
            ("bash", "bash"),
            ("bash", "bask"),
            ("add_syn", "add_syc"),
            ("add_sync", "add_sync"),
            ("add_sync", "add_sunc"),
            ("add_async", "add_asynd"),
            ("sixteen_bytes_ab", "sixteen_bytes_ab"),
            ("sixteen_bytes_ab", "sixteen_bytes_ac"),
            ("seventeen_bytes_a", "seventeen_bytes_a"),
            ("seventeen_bytes_a", "seventeen_bytes_b"),
            (long, long),
            ("é", "e"),
        ] {
            assert_eq!(same_name(a, b), a == b, "{a:?} {b:?}");
        }
    }
}
