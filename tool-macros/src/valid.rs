//! Checks on the parsed model: names providers accept, descriptions, no duplicates.

use std::collections::HashMap;

use proc_macro2::Span;

use crate::ast::{ArgField, CommandEnum, ToolFn, ToolGroup, WholeArgs};
use crate::attr::Spanned;
use crate::errors::Errors;
use crate::names;
use crate::spelled::spelled;

fn check_name(name: &Spanned<String>, errors: &mut Errors) {
    if let Err(reason) = names::check(&name.value) {
        errors.at(name.span, reason);
    }
}

fn check_command_name(name: &Spanned<String>, errors: &mut Errors) {
    if let Err(reason) = names::check_command(&name.value) {
        errors.at(name.span, reason);
    }
}

/// `attribute` is where a `description = "..."` key would go for this item (`tool_fn`,
/// `command`, `arg`): a bare `description = "..."` left a newcomer guessing which one.
fn check_description(
    described: bool,
    what: &str,
    attribute: &str,
    span: Span,
    errors: &mut Errors,
) {
    if !described {
        errors.at(
            span,
            format!(
                "{what} has no description: add a doc comment (`/// ...`) or `#[{attribute}(description = \"...\")]`; the model decides when to call it from its description"
            ),
        );
    }
}

/// Two arguments of one tool or command with the same name (after renaming), or an argument
/// named `command` in a command group.
fn check_arguments<'a>(
    fields: impl IntoIterator<Item = &'a ArgField>,
    in_group: bool,
    errors: &mut Errors,
) {
    let mut seen: HashMap<&str, &ArgField> = HashMap::new();
    for field in fields {
        if let Err(reason) = names::check_argument(&field.name.value) {
            errors.at(field.name.span, reason);
        }
        if let Some(first) = seen.get(field.name.value.as_str()) {
            errors.at(
                field.name.span,
                format!(
                    "two arguments are named `{}` (`{}` and `{}`); rename one with `#[arg(rename = \"...\")]`",
                    field.name.value, first.member, field.member
                ),
            );
        } else {
            seen.insert(&field.name.value, field);
        }
        if in_group && field.name.value == names::COMMAND_ARGUMENT {
            errors.at(
                field.name.span,
                "the argument name `command` is reserved in a command group: it picks the command; rename it with `#[arg(rename = \"...\")]`",
            );
        }
    }
}

/// An `#[args]` parameter takes the whole arguments: a second one, or an argument parameter
/// beside it, would be read from the same object as it (each error at that parameter).
fn check_whole_args<'a>(
    whole: &[&WholeArgs],
    fields: impl IntoIterator<Item = &'a ArgField>,
    errors: &mut Errors,
) {
    let Some(first) = whole.first() else {
        return;
    };
    for repeated in &whole[1..] {
        errors.spanned(
            &repeated.marker,
            format!(
                "a second `#[args]` parameter: `{}` takes the call's whole arguments already; make the fields of `{}` fields of `{}`",
                first.ident,
                spelled(&repeated.ty),
                spelled(&first.ty)
            ),
        );
    }
    for field in fields {
        errors.spanned(
            &field.member,
            format!(
                "`{}` is an argument beside the `#[args]` parameter `{}`, which takes the call's whole arguments: make it a field of `{}`, or drop `#[args]`",
                field.member,
                first.ident,
                spelled(&first.ty)
            ),
        );
    }
}

/// Checks a tool function.
pub fn tool_fn(tool: &ToolFn, errors: &mut Errors) {
    check_name(&tool.name, errors);
    check_description(
        tool.attr.description_unread || tool.description.as_ref().is_some_and(|d| !d.is_blank()),
        &format!("tool `{}`", tool.name.value),
        "tool_fn",
        tool.item.sig.ident.span(),
        errors,
    );
    check_arguments(tool.arg_fields(), false, errors);
    check_whole_args(
        &tool.whole_args().collect::<Vec<_>>(),
        tool.arg_fields(),
        errors,
    );
    // A sync function runs inline, on the caller's thread: nothing can stop it at a limit.
    if let Some(timeout) = &tool.attr.timeout_millis
        && tool.attr.blocking.is_none()
        && tool.item.sig.asyncness.is_none()
    {
        errors.at(
            timeout.span,
            "`timeout` cannot limit a sync tool function, which runs inline on the caller's thread: add `blocking` (it then runs on tokio's blocking pool, and the call ends at the limit) or make the function `async`",
        );
    }
    if let Some(span) = tool.attr.blocking
        && tool.item.sig.asyncness.is_some()
    {
        errors.at(
            span,
            "`blocking` runs a sync function on tokio's blocking pool; an `async fn` runs on the runtime already (remove `blocking`, or make the function sync)",
        );
    }
}

/// Checks a command group.
pub fn tool_group(group: &ToolGroup, errors: &mut Errors) {
    check_name(&group.name, errors);
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for command in &group.commands {
        check_command_name(&command.name, errors);
        check_description(
            command.description_unread
                || command.description.as_ref().is_some_and(|d| !d.is_blank()),
            &format!("command `{}`", command.name.value),
            "command",
            command.method.span(),
            errors,
        );
        if seen.contains_key(command.name.value.as_str()) {
            errors.at(
                command.name.span,
                format!(
                    "two commands of `{}` are named `{}`; rename one with `#[command(name = \"...\")]`",
                    group.name.value, command.name.value
                ),
            );
        } else {
            seen.insert(&command.name.value, command.name.span);
        }
        check_arguments(&command.fields, true, errors);
        check_whole_args(
            &command.whole.iter().collect::<Vec<_>>(),
            &command.fields,
            errors,
        );
    }
}

/// Checks an argument struct's fields.
pub fn args_struct(fields: &[ArgField], errors: &mut Errors) {
    check_arguments(fields, false, errors);
}

/// Checks a command enum.
pub fn command_enum(commands: &CommandEnum, errors: &mut Errors) {
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for variant in &commands.variants {
        check_command_name(&variant.name, errors);
        check_description(
            variant
                .description
                .as_ref()
                .is_some_and(|d| !d.trim().is_empty()),
            &format!("command `{}`", variant.name.value),
            "arg",
            variant.ident.span(),
            errors,
        );
        if seen.contains_key(variant.name.value.as_str()) {
            errors.at(
                variant.name.span,
                format!(
                    "two commands are named `{}`; rename one with `#[arg(rename = \"...\")]`",
                    variant.name.value
                ),
            );
        } else {
            seen.insert(&variant.name.value, variant.name.span);
        }
        check_arguments(&variant.fields, true, errors);
    }
}
