//! Names: the rule tool and command names follow, and the case conversions that derive them.

/// The name of the built-in meta-tool.
pub const RESERVED: &str = "shed";

/// The argument that picks a command in a command group.
pub const COMMAND_ARGUMENT: &str = "command";

/// Checks a tool's name against `^[a-zA-Z0-9_-]{1,64}$` and the reserved name.
pub fn check(name: &str) -> Result<(), String> {
    check_pattern(name, "tool")?;
    if name == RESERVED {
        return Err(format!(
            "the name `{RESERVED}` is reserved for the built-in meta-tool; choose another name"
        ));
    }
    Ok(())
}

/// Checks a command's name against `^[a-zA-Z0-9_-]{1,64}$`. The reserved name is a tool's
/// only: the manager registers a group with a command `shed`, which the call names beside
/// the group's own name.
pub fn check_command(name: &str) -> Result<(), String> {
    check_pattern(name, "command")
}

/// Checks the name of a `what` (a tool, a command) against `^[a-zA-Z0-9_-]{1,64}$`.
fn check_pattern(name: &str, what: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("a {what} name must not be empty"));
    }
    if name.len() > 64 {
        return Err(format!(
            "{what} name `{name}` is {} bytes long; providers accept at most 64 (^[a-zA-Z0-9_-]{{1,64}}$)",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "{what} name `{name}` contains {c:?}; providers accept only letters, digits, '_' and '-' (^[a-zA-Z0-9_-]{{1,64}}$)"
        ));
    }
    Ok(())
}

/// Checks an argument's name against `^[a-zA-Z0-9_.-]{1,64}$`, the property names every
/// provider takes (Anthropic's `input_schema` says so; the others refuse some beyond it).
pub fn check_argument(name: &str) -> Result<(), String> {
    const RULE: &str = "^[a-zA-Z0-9_.-]{1,64}$";
    if name.is_empty() {
        return Err(format!("an argument name must not be empty ({RULE})"));
    }
    if name.len() > 64 {
        return Err(format!(
            "argument name `{name}` is {} bytes long; providers accept at most 64 ({RULE})",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "argument name `{name}` contains {c:?}; providers accept only letters, digits, '_', '-' and '.' ({RULE}); rename it with `#[arg(rename = \"...\")]`"
        ));
    }
    Ok(())
}

/// `add_numbers` → `AddNumbers`.
pub fn pascal_case(snake: &str) -> String {
    snake
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

/// `AddFact` → `add_fact`; a run of capitals is one word (`HTTPClient` → `http_client`,
/// `GetURL` → `get_url`).
pub fn snake_case(pascal: &str) -> String {
    let chars: Vec<char> = pascal.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let previous = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            // A word starts after a lower-case letter or a digit, or at the last capital of a
            // run that a lower-case letter follows (`HTTPClient`: at `C`).
            let starts_word = previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit())
                || previous.is_some_and(char::is_uppercase)
                    && next.is_some_and(|n| n.is_lowercase());
            if starts_word {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(pascal_case("add_numbers"), "AddNumbers");
        assert_eq!(pascal_case("to_uppercase2"), "ToUppercase2");
        assert_eq!(snake_case("AddFact"), "add_fact");
        assert_eq!(snake_case("Clear"), "clear");
        assert_eq!(snake_case("HTTPClient"), "http_client");
        assert_eq!(snake_case("GetURL"), "get_url");
        assert_eq!(snake_case("ParseJSONBody"), "parse_json_body");
        assert_eq!(snake_case("Utf8Text"), "utf8_text");
        assert_eq!(snake_case("A"), "a");
        assert_eq!(snake_case("Already_snake"), "already_snake");
    }

    #[test]
    fn rule() {
        assert!(check("read_file").is_ok());
        assert!(check("a-b").is_ok());
        assert!(check("shed").unwrap_err().contains("reserved"));
        assert!(check("a.b").unwrap_err().contains("'.'"));
        assert!(check(&"a".repeat(65)).unwrap_err().contains("65 bytes"));
        assert_eq!(check_command("shed"), Ok(()));
        assert!(
            check_command("a.b")
                .unwrap_err()
                .starts_with("command name")
        );
    }
}
