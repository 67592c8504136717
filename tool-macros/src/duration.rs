//! Durations written in attributes: `"500ms"`, `"10s"`, `"2m"`.

/// Parses a duration into milliseconds.
pub fn parse_millis(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| {
        format!("`{text}` is not a duration: write a whole number and a unit, e.g. \"500ms\", \"10s\" or \"2m\"")
    })?;
    let factor = match unit.trim() {
        "" => {
            return Err(format!(
                "`{text}` has no unit: write \"{number}ms\", \"{number}s\", \"{number}m\" or \"{number}h\""
            ));
        }
        fraction if fraction.starts_with('.') => {
            return Err(format!(
                "`{text}` is not a whole number: write a smaller unit, e.g. \"1500ms\" for \"1.5s\""
            ));
        }
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        other => {
            return Err(format!(
                "`{other}` is not a duration unit: use \"ms\", \"s\", \"m\" or \"h\" (e.g. \"10s\")"
            ));
        }
    };
    match number.checked_mul(factor) {
        Some(0) => Err("a time limit must be longer than zero".to_owned()),
        Some(millis) => Ok(millis),
        None => Err(format!("`{text}` is too long a duration")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_millis("500ms"), Ok(500));
        assert_eq!(parse_millis("10s"), Ok(10_000));
        assert_eq!(parse_millis("2m"), Ok(120_000));
        assert_eq!(parse_millis("1h"), Ok(3_600_000));
        assert_eq!(
            parse_millis("10").unwrap_err(),
            "`10` has no unit: write \"10ms\", \"10s\", \"10m\" or \"10h\""
        );
        assert!(
            parse_millis("1.5s")
                .unwrap_err()
                .starts_with("`1.5s` is not a whole number"),
        );
        assert!(parse_millis("s").unwrap_err().contains("whole number"));
        assert!(parse_millis("0s").is_err());
        assert!(parse_millis("3 days").is_err());
    }
}
