//! Doc comments: the text the model sees as a tool's or an argument's description.

use syn::{Attribute, Expr, Lit, Meta};

/// The text of the `#[doc]` attributes (`///` comments), with the one space rustdoc puts
/// after `///` removed and surrounding blank lines trimmed; `None` when there is none.
pub fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let Expr::Lit(lit) = &nv.value
            && let Lit::Str(text) = &lit.lit
        {
            for line in text.value().lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// A function's doc split into the description and the per-argument descriptions of a
/// rustdoc `# Arguments` section (`* `name` - text`), which is left out of the description.
pub struct FnDoc {
    /// The description without the arguments section.
    pub description: Option<String>,
    /// `(argument, description)` pairs from the arguments section.
    pub arguments: Vec<(String, String)>,
}

/// Splits a function's doc text (see [`FnDoc`]).
pub fn split_fn_doc(text: Option<String>) -> FnDoc {
    let Some(text) = text else {
        return FnDoc {
            description: None,
            arguments: Vec::new(),
        };
    };
    let mut kept = Vec::new();
    let mut arguments: Vec<(String, String)> = Vec::new();
    let mut in_arguments = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(heading) = trimmed.strip_prefix('#') {
            in_arguments = heading
                .trim_start_matches('#')
                .trim()
                .eq_ignore_ascii_case("arguments");
            if in_arguments {
                continue;
            }
        }
        if !in_arguments {
            kept.push(line);
            continue;
        }
        if let Some(item) = trimmed
            .strip_prefix("* ")
            .or_else(|| trimmed.strip_prefix("- "))
        {
            if let Some((name, desc)) = argument_item(item) {
                arguments.push((name, desc));
            }
        } else if !trimmed.is_empty()
            && let Some((_, desc)) = arguments.last_mut()
        {
            // A continuation line of the previous item.
            desc.push(' ');
            desc.push_str(trimmed);
        }
    }
    let description = kept.join("\n").trim().to_owned();
    FnDoc {
        description: (!description.is_empty()).then_some(description),
        arguments,
    }
}

/// Parses "`name` - text" (also "`name`: text", "`name` — text").
fn argument_item(item: &str) -> Option<(String, String)> {
    let rest = item.strip_prefix('`')?;
    let (name, rest) = rest.split_once('`')?;
    let desc = rest
        .trim_start()
        .trim_start_matches(['-', ':', '—', '–'])
        .trim();
    Some((name.trim().to_owned(), desc.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_section_is_split_out() {
        let doc = split_fn_doc(Some(
            "Adds numbers.\n\nMore text.\n\n# Arguments\n\n* `a` - The first\n  number.\n* `b`: The second.\n\n# Errors\nNever."
                .to_owned(),
        ));
        assert_eq!(
            doc.description.as_deref(),
            Some("Adds numbers.\n\nMore text.\n\n# Errors\nNever.")
        );
        assert_eq!(
            doc.arguments,
            [
                ("a".to_owned(), "The first number.".to_owned()),
                ("b".to_owned(), "The second.".to_owned())
            ]
        );
    }

    #[test]
    fn docs_are_trimmed() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[doc = " Line one."]),
            syn::parse_quote!(#[doc = "  indented"]),
            syn::parse_quote!(#[doc = ""]),
        ];
        assert_eq!(doc_text(&attrs).as_deref(), Some("Line one.\n indented"));
        assert_eq!(doc_text(&[]), None);
    }
}
