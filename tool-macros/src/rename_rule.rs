//! [`RenameRule`]: serde's `rename_all` cases, applied as serde applies them, so that a
//! type's arguments are named as its `Serialize` output names its fields.

/// One of the cases `#[serde(rename_all = "...")]` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenameRule {
    /// `lowercase`
    Lower,
    /// `UPPERCASE`
    Upper,
    /// `PascalCase`
    Pascal,
    /// `camelCase`
    Camel,
    /// `snake_case`
    Snake,
    /// `SCREAMING_SNAKE_CASE`
    ScreamingSnake,
    /// `kebab-case`
    Kebab,
    /// `SCREAMING-KEBAB-CASE`
    ScreamingKebab,
}

/// Each rule with the name serde gives it.
const RULES: [(&str, RenameRule); 8] = [
    ("lowercase", RenameRule::Lower),
    ("UPPERCASE", RenameRule::Upper),
    ("PascalCase", RenameRule::Pascal),
    ("camelCase", RenameRule::Camel),
    ("snake_case", RenameRule::Snake),
    ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
    ("kebab-case", RenameRule::Kebab),
    ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
];

impl RenameRule {
    /// The rule serde names `name`; the error lists the names it takes.
    pub fn from_name(name: &str) -> Result<Self, String> {
        RULES
            .iter()
            .find(|(rule_name, _)| *rule_name == name)
            .map(|(_, rule)| *rule)
            .ok_or_else(|| {
                let names: Vec<String> = RULES.iter().map(|(n, _)| format!("\"{n}\"")).collect();
                format!(
                    "unknown case {name:?} for `rename_all`; serde's cases are {}",
                    names.join(", ")
                )
            })
    }

    /// A field's name (written in snake_case) under this rule.
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            Self::Lower | Self::Snake => field.to_owned(),
            Self::Upper | Self::ScreamingSnake => field.to_ascii_uppercase(),
            Self::Pascal => words_joined(field),
            Self::Camel => lower_first(&words_joined(field)),
            Self::Kebab => field.replace('_', "-"),
            Self::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// A variant's name (written in PascalCase) under this rule.
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            Self::Pascal => variant.to_owned(),
            Self::Lower => variant.to_ascii_lowercase(),
            Self::Upper => variant.to_ascii_uppercase(),
            Self::Camel => lower_first(variant),
            Self::Snake => words_split(variant, '_'),
            Self::ScreamingSnake => words_split(variant, '_').to_ascii_uppercase(),
            // serde turns the snake case's every underscore into a hyphen, those the name
            // had too (`Add_Fact` is `add--fact`).
            Self::Kebab => words_split(variant, '_').replace('_', "-"),
            Self::ScreamingKebab => words_split(variant, '_')
                .to_ascii_uppercase()
                .replace('_', "-"),
        }
    }
}

/// `first_name` → `FirstName`: each word after an underscore capitalised, the underscores
/// dropped.
fn words_joined(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut word_start = true;
    for c in snake.chars() {
        if c == '_' {
            word_start = true;
        } else if word_start {
            out.push(c.to_ascii_uppercase());
            word_start = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `FirstName` → `first_name` (with `separator`): serde splits before every capital but the
/// first, so `HTTPGet` is `h_t_t_p_get`, unlike the derive's own naming of commands.
fn words_split(pascal: &str, separator: char) -> String {
    let mut out = String::with_capacity(pascal.len() + 4);
    for (i, c) in pascal.chars().enumerate() {
        if i > 0 && c.is_uppercase() {
            out.push(separator);
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The name with its first character in lower case.
fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_ascii_lowercase().to_string() + chars.as_str()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_renamed_as_serde_renames_them() {
        let cases = [
            ("lowercase", "max_hits"),
            ("UPPERCASE", "MAX_HITS"),
            ("PascalCase", "MaxHits"),
            ("camelCase", "maxHits"),
            ("snake_case", "max_hits"),
            ("SCREAMING_SNAKE_CASE", "MAX_HITS"),
            ("kebab-case", "max-hits"),
            ("SCREAMING-KEBAB-CASE", "MAX-HITS"),
        ];
        for (name, expected) in cases {
            let rule = RenameRule::from_name(name).unwrap();
            assert_eq!(rule.apply_to_field("max_hits"), expected, "{name}");
        }
        assert_eq!(RenameRule::Camel.apply_to_field("q"), "q");
    }

    #[test]
    fn variants_are_renamed_as_serde_renames_them() {
        let cases = [
            ("lowercase", "addfact"),
            ("UPPERCASE", "ADDFACT"),
            ("PascalCase", "AddFact"),
            ("camelCase", "addFact"),
            ("snake_case", "add_fact"),
            ("SCREAMING_SNAKE_CASE", "ADD_FACT"),
            ("kebab-case", "add-fact"),
            ("SCREAMING-KEBAB-CASE", "ADD-FACT"),
        ];
        for (name, expected) in cases {
            let rule = RenameRule::from_name(name).unwrap();
            assert_eq!(rule.apply_to_variant("AddFact"), expected, "{name}");
        }
        assert_eq!(RenameRule::Snake.apply_to_variant("GetURL"), "get_u_r_l");
        assert_eq!(RenameRule::Kebab.apply_to_variant("Add_Fact"), "add--fact");
        assert_eq!(
            RenameRule::ScreamingKebab.apply_to_variant("Add_fact"),
            "ADD-FACT"
        );
    }

    #[test]
    fn an_unknown_case_lists_serde_cases() {
        let err = RenameRule::from_name("camelcase").unwrap_err();
        assert!(err.starts_with("unknown case \"camelcase\""), "{err}");
        assert!(err.contains("\"camelCase\""), "{err}");
    }
}
