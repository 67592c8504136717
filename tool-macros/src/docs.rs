//! Doc comments: the text the model sees as a tool's or an argument's description.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Attribute, Expr, Lit, LitStr, Meta};

use crate::errors::Errors;
use crate::spelled::spelled;

/// A tool's, a command's or a group's description as the generated code writes it.
#[derive(Clone)]
pub enum Description {
    /// Text read here: the doc comments, or `description = "..."`.
    Text(String),
    /// Docs written by a macro (`#[doc = include_str!("search.md")]`), which a proc macro
    /// cannot read: the doc attributes joined by `concat!` where the tool is compiled, then
    /// trimmed. No `# Arguments` section is taken out of them ([`fn_doc`]).
    Written(TokenStream),
}

impl Description {
    /// Whether the description says nothing (a macro's text counts as something).
    pub fn is_blank(&self) -> bool {
        match self {
            Self::Text(text) => text.trim().is_empty(),
            Self::Written(_) => false,
        }
    }
}

impl ToTokens for Description {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            Self::Text(text) => text.to_tokens(tokens),
            Self::Written(expr) => expr.to_tokens(tokens),
        }
    }
}

/// The value of a `#[doc = …]` attribute, if `attr` is one.
fn doc_value(attr: &Attribute) -> Option<&Expr> {
    match &attr.meta {
        Meta::NameValue(nv) if nv.path.is_ident("doc") => Some(&nv.value),
        _ => None,
    }
}

/// The text of a doc attribute's string, with the space after `///` removed (and the `*`
/// that starts each line of a `/** … */` comment, as rustdoc removes it).
fn doc_line(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    undecorated(&lines)
        .iter()
        .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines of a block doc comment without the `*` each starts with (` * text`), when the
/// first line (after `/**`) is blank and every other line but blank ones at the end starts with
/// one, at one column; other lines as they are (a `#[doc = "..."]` string written with a list
/// on its own lines keeps it).
fn undecorated<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    if !lines.first().is_some_and(|line| line.trim().is_empty()) {
        return lines.to_vec();
    }
    let (mut first, mut last) = (1, lines.len());
    while first < last && lines[first].trim().is_empty() {
        first += 1;
    }
    while last > first && lines[last - 1].trim().is_empty() {
        last -= 1;
    }
    let decorated = &lines[first..last];
    let star_at = |line: &str| {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        line[indent..].starts_with('*').then_some(indent)
    };
    let Some(Some(column)) = decorated.first().map(|line| star_at(line)) else {
        return lines.to_vec();
    };
    if !decorated.iter().all(|line| star_at(line) == Some(column)) {
        return lines.to_vec();
    }
    // The lines around the decorated ones are blank.
    lines
        .iter()
        .enumerate()
        .map(|(index, line)| {
            if (first..last).contains(&index) {
                &line[column + 1..]
            } else {
                ""
            }
        })
        .collect()
}

/// The docs as a [`Description::Written`] when a macro writes any of them: each attribute in
/// order, a line apart, as rustdoc joins them.
fn written_docs(attrs: &[Attribute]) -> Option<TokenStream> {
    let values: Vec<&Expr> = attrs.iter().filter_map(doc_value).collect();
    if !values.iter().any(|value| !matches!(value, Expr::Lit(_))) {
        return None;
    }
    let mut pieces = Vec::with_capacity(values.len() * 2);
    for (index, value) in values.iter().enumerate() {
        if index > 0 {
            pieces.push(quote!("\n"));
        }
        pieces.push(match value {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Str(text) => {
                    LitStr::new(&doc_line(&text.value()), text.span()).to_token_stream()
                }
                other => other.to_token_stream(),
            },
            other => other.to_token_stream(),
        });
    }
    Some(quote!(::core::concat!(#(#pieces),*).trim()))
}

/// A function's doc (a tool's or a command's): read and split ([`split_fn_doc`]), or the
/// expression that writes it when a macro writes part of it. A `# Arguments` heading in the
/// `///` lines of such a doc is an error there: the section cannot be taken out of text
/// the macro cannot read, and would otherwise reach the model in the description while its
/// arguments went undescribed.
pub fn fn_doc(attrs: &[Attribute], errors: &mut Errors) -> FnDoc {
    let Some(expr) = written_docs(attrs) else {
        return split_fn_doc(doc_text(attrs));
    };
    let heading = attrs.iter().find(|attr| {
        doc_value(attr).is_some_and(|value| match value {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Str(text) => text.value().lines().any(is_arguments_heading),
                _ => false,
            },
            _ => false,
        })
    });
    if let Some(heading) = heading {
        errors.spanned(
            heading,
            "a `# Arguments` list is not read from a doc a macro writes part of; describe each argument with `///` on it or `#[arg(description = \"...\")]`",
        );
    }
    FnDoc {
        description: Some(Description::Written(expr)),
        arguments: Vec::new(),
    }
}

/// Whether `line` is the heading of a rustdoc `# Arguments` section (any level).
fn is_arguments_heading(line: &str) -> bool {
    line.trim().strip_prefix('#').is_some_and(|heading| {
        heading
            .trim_start_matches('#')
            .trim()
            .eq_ignore_ascii_case("arguments")
    })
}

/// An `impl` block's doc (a group's description), read, or written by a macro.
pub fn item_doc(attrs: &[Attribute]) -> Option<Description> {
    written_docs(attrs)
        .map(Description::Written)
        .or_else(|| doc_text(attrs).map(Description::Text))
}

/// What a doc that goes into a schema built as text describes: its error says what to
/// write instead.
#[derive(Clone, Copy)]
pub enum SchemaDoc {
    /// A parameter or a field: an argument.
    Argument,
    /// A variant of a command enum: a command, but one described in the enum's schema.
    Variant,
}

/// An argument's, a field's or a variant's doc. Those go into a schema the macro builds
/// as text, so docs written by a macro are an error there, at the attribute.
pub fn argument_doc(attrs: &[Attribute], part: SchemaDoc, errors: &mut Errors) -> Option<String> {
    for attr in attrs {
        if let Some(value) = doc_value(attr)
            && !matches!(value, Expr::Lit(_))
        {
            let message = match part {
                SchemaDoc::Argument => {
                    "a doc written by a macro is read on a tool, a command or a group only; write an argument's description as `/// text` or `#[arg(description = \"...\")]`"
                }
                // A variant is a command too: the message must not say commands read it.
                SchemaDoc::Variant => {
                    "a doc written by a macro is not read on a command enum's variant, whose description goes into the enum's schema as text; write the command's description as `/// text` or `#[arg(description = \"...\")]`"
                }
            };
            errors.spanned(attr, message);
            return None;
        }
    }
    doc_text(attrs)
}

/// The text of the `#[doc]` attributes (`///` comments), with the one space rustdoc puts
/// after `///` removed and surrounding blank lines trimmed; `None` when there is none.
pub fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter_map(doc_value)
        .filter_map(|value| match value {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Str(text) => Some(doc_line(&text.value())),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// A function's doc split into the description and the per-argument descriptions of a
/// rustdoc `# Arguments` section (`* `name` - text`), which is left out of the description.
pub struct FnDoc {
    /// The description without the arguments section.
    pub description: Option<Description>,
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
        if trimmed.starts_with('#') {
            in_arguments = is_arguments_heading(trimmed);
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
        description: (!description.is_empty()).then_some(Description::Text(description)),
        arguments,
    }
}

/// Parses "`name` - text" (also "`name`: text", "`name` — text", and each without the
/// backticks).
fn argument_item(item: &str) -> Option<(String, String)> {
    let (name, rest) = match item.strip_prefix('`') {
        Some(rest) => rest.split_once('`')?,
        None => {
            let end = item
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(item.len());
            let (name, rest) = item.split_at(end);
            let separated = rest.trim_start().starts_with(['-', ':', '—', '–']);
            if name.is_empty() || !separated {
                return None;
            }
            (name, rest)
        }
    };
    let desc = rest
        .trim_start()
        .trim_start_matches(['-', ':', '—', '–'])
        .trim();
    Some((name.trim().to_owned(), desc.to_owned()))
}

/// Reports each item of a function's `# Arguments` list that names none of its parameters
/// (`parameters`, by their names without `r#`): its text is left out of the description and
/// describes nothing, so the model would never read it. Pointed at the doc line naming it.
/// With an `#[args]` parameter (of type `whole`), whose type's fields are the arguments, the
/// error says where their descriptions go.
pub fn check_arguments_list(
    attrs: &[Attribute],
    arguments: &[(String, String)],
    parameters: &[String],
    whole: Option<&syn::Type>,
    errors: &mut Errors,
) {
    for (name, _) in arguments {
        // `self` may be described too (a command's receiver), as describing it harms nothing.
        if parameters.contains(name) || name == "self" {
            continue;
        }
        let names_it = |text: &str| {
            text.lines().any(|line| {
                line.trim()
                    .strip_prefix(['*', '-'])
                    .map(|item| item.trim_start().trim_start_matches('`'))
                    .is_some_and(|item| {
                        item.strip_prefix(name.as_str()).is_some_and(|rest| {
                            !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                        })
                    })
            })
        };
        let line = attrs.iter().find(|attr| {
            doc_value(attr).is_some_and(|value| match value {
                Expr::Lit(lit) => match &lit.lit {
                    Lit::Str(text) => names_it(&text.value()),
                    _ => false,
                },
                _ => false,
            })
        });
        let message = match whole {
            Some(whole) => format!(
                "the `# Arguments` list describes `{name}`, which is no parameter of this function: the description would reach the model nowhere; the arguments are the fields of the `#[args]` parameter's type `{}` (of its variants, for a command enum), described by their own doc comments (or `#[arg(description = \"...\")]`): move the text there",
                spelled(whole)
            ),
            None => format!(
                "the `# Arguments` list describes `{name}`, which is no parameter of this function: the description would reach the model nowhere; name a parameter, or move the text out of the list"
            ),
        };
        match line {
            Some(line) => errors.spanned(line, message),
            None => errors.spanned(attrs.first(), message),
        }
    }
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
        let Some(Description::Text(description)) = doc.description else {
            panic!("a description read as text");
        };
        assert_eq!(
            description,
            "Adds numbers.\n\nMore text.\n\n# Errors\nNever."
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
    fn an_argument_named_without_backticks_is_read() {
        let doc = split_fn_doc(Some(
            "Adds.\n\n# Arguments\n\n* a - The first.\n* b: The second.\n* see the notes"
                .to_owned(),
        ));
        assert_eq!(
            doc.arguments,
            [
                ("a".to_owned(), "The first.".to_owned()),
                ("b".to_owned(), "The second.".to_owned())
            ]
        );
    }

    #[test]
    fn block_comments_lose_their_stars() {
        let attrs: Vec<Attribute> = vec![syn::parse_quote!(
            #[doc = "\n * Remembers a fact.\n *\n *   Indented.\n "]
        )];
        assert_eq!(
            doc_text(&attrs).as_deref(),
            Some("Remembers a fact.\n\n  Indented.")
        );
        // One line, lines not all starting with a star, or a first line of text: as written.
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[doc = " * not a list"]),
            syn::parse_quote!(#[doc = "\n First.\n * second\n "]),
            syn::parse_quote!(#[doc = "Steps:\n* one\n* two"]),
        ];
        assert_eq!(
            doc_text(&attrs).as_deref(),
            Some("* not a list\n\nFirst.\n* second\n\nSteps:\n* one\n* two")
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

    #[test]
    fn an_arguments_list_among_docs_a_macro_writes_is_an_error() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[doc = " Searches."]),
            syn::parse_quote!(#[doc = " # Arguments"]),
            syn::parse_quote!(#[doc = " * `query` - What to find."]),
            syn::parse_quote!(#[doc = include_str!("search.md")]),
        ];
        let mut errors = Errors::default();
        let doc = fn_doc(&attrs, &mut errors);
        let error = errors.finish().expect_err("the list cannot be read");
        assert!(error.to_string().contains("`# Arguments` list is not read"));
        assert!(matches!(doc.description, Some(Description::Written(_))));
        // Without a macro's doc, the list is read and left out of the description.
        let mut errors = Errors::default();
        let doc = fn_doc(&attrs[..3], &mut errors);
        assert!(errors.finish().is_ok());
        assert_eq!(
            doc.arguments,
            vec![("query".to_owned(), "What to find.".to_owned())]
        );
    }

    #[test]
    fn docs_a_macro_writes_are_joined_where_the_tool_is_compiled() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[doc = " Searches."]),
            syn::parse_quote!(#[doc = include_str!("search.md")]),
        ];
        let mut errors = Errors::default();
        let doc = fn_doc(&attrs, &mut errors);
        assert!(errors.finish().is_ok());
        let Some(Description::Written(expr)) = doc.description else {
            panic!("a description written by a macro");
        };
        assert_eq!(
            expr.to_string(),
            quote!(::core::concat!("Searches.", "\n", include_str!("search.md")).trim())
                .to_string()
        );
        assert!(doc.arguments.is_empty());

        let mut errors = Errors::default();
        assert_eq!(argument_doc(&attrs, SchemaDoc::Argument, &mut errors), None);
        assert!(errors.finish().is_err());
        let mut errors = Errors::default();
        assert_eq!(
            argument_doc(&attrs[..1], SchemaDoc::Argument, &mut errors).as_deref(),
            Some("Searches.")
        );
        assert!(errors.finish().is_ok());
    }
}
