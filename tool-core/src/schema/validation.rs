//! Argument validation: schemas compiled once, on a tool's first call (registration only
//! checks that they compile, see `schema/first_use.rs`), and checked before every call.
//!
//! Validation is also where the lenient spellings are repaired: when a call fails only
//! because a number or boolean came as a string (`"42"`), or because an optional argument was
//! sent as `null` (as strict renderings make models do), the arguments are repaired in place
//! and checked again. Valid calls take the fast path: one `is_valid` over the borrowed value.
//!
//! String `format`s are asserted, unknown ones ignored: a tool that declares `uuid` reads a
//! UUID, so a malformed one is the model's mistake to correct, not the tool's to meet.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;

use indexmap::IndexSet;
use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, Validator};
use serde_json::Value;

use crate::schema::f32_range::with_f32_range;
use crate::schema::flat_schema::FlatSchema;
use crate::tool::echo::cut_to;
use crate::tool::nesting::{TooDeep, check_depth};
use crate::{COMMAND_ARGUMENT, Tool, ToolArguments, ToolError};

/// How many violations an error message lists before it says how many more there were.
const MAX_LISTED_VIOLATIONS: usize = 8;
/// How long one violation's text may be before it is cut (instances can be large).
pub(crate) const MAX_VIOLATION_CHARS: usize = 240;

/// A schema compiled for validation.
#[derive(Debug, Clone)]
pub(crate) struct CompiledSchema {
    validator: Arc<Validator>,
    /// The fast acceptance check, for flat schemas of scalar properties.
    flat: Option<Arc<FlatSchema>>,
    /// The source schema, where "did you mean" hints look up the accepted property names.
    schema: Arc<Value>,
}

impl CompiledSchema {
    /// Compiles `schema`; the error says why it is not a usable JSON Schema.
    ///
    /// An `f32` is checked against its range ([`with_f32_range`]), which the reader keeps
    /// and the declared schema does not say.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        let checked = with_f32_range(schema);
        jsonschema::options()
            .should_validate_formats(true)
            .should_ignore_unknown_formats(true)
            .build(&checked)
            .map(|validator| Self {
                validator: Arc::new(validator),
                flat: FlatSchema::compile(&checked).map(Arc::new),
                schema: Arc::new(schema.clone()),
            })
            .map_err(|err| err.to_string())
    }

    /// Checks `arguments`; when they pass only once lenient spellings are repaired, returns
    /// the repaired copy. On failure the reason lists every violation with its JSON path.
    #[inline]
    pub(crate) fn check(&self, arguments: &ToolArguments) -> Result<Option<ToolArguments>, String> {
        if self.certainly_accepts(arguments) {
            return Ok(None);
        }
        self.check_thoroughly(arguments)
    }

    /// Whether the fast check is sure that `arguments` are valid as sent.
    #[inline]
    fn certainly_accepts(&self, arguments: &ToolArguments) -> bool {
        self.flat
            .as_ref()
            .is_some_and(|flat| flat.certainly_accepts(arguments.as_value()))
    }

    /// [`check`](Self::check) with the full validator, for arguments the fast check is not
    /// sure of: out of line, so that the common case stays small. Arguments nested deeper
    /// than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) are refused before the validator (which
    /// recurses once per level) sees them; the fast check passes none (it looks one level
    /// down, and leaves every array and object it is not sure of to this check).
    #[inline(never)]
    fn check_thoroughly(&self, arguments: &ToolArguments) -> Result<Option<ToolArguments>, String> {
        let value = arguments.as_value();
        check_depth(value).map_err(|too_deep| too_deep.in_arguments_at(value))?;
        if self.validator.is_valid(value) {
            return Ok(None);
        }
        let repairs = self.repairs(value);
        if repairs.is_empty() {
            return Err(self.describe(value));
        }
        let mut repaired = arguments.clone();
        apply(&mut repaired, &repairs);
        if self.validator.is_valid(repaired.as_value()) {
            return Ok(Some(repaired));
        }
        // Some repairs did not suffice. A `null` whose removal left a required value missing
        // was not an absent optional value: put it back, so that the report names it as the
        // `null` it was ("/title: null is not of type …") rather than as missing, and names
        // none of the nulls that were rightly read as absent.
        let required_nulls = self.nulls_still_required(repaired.as_value(), &repairs);
        if !required_nulls.is_empty() {
            let kept: Vec<Repair> = repairs
                .into_iter()
                .filter(|r| !matches!(r, Repair::RemoveNull(path) if required_nulls.contains(path)))
                .collect();
            repaired = arguments.clone();
            apply(&mut repaired, &kept);
        }
        Err(self.describe(repaired.as_value()))
    }

    /// Checks a value as it is (no repairs): for a tool's result against its `returns` schema.
    /// A value nested deeper than [`MAX_JSON_DEPTH`](crate::MAX_JSON_DEPTH) is refused unread.
    pub(crate) fn verify(&self, value: &Value) -> Result<(), String> {
        check_depth(value).map_err(|too_deep| format!("the value is {too_deep}"))?;
        if self.validator.is_valid(value) {
            Ok(())
        } else {
            Err(self.describe(value))
        }
    }

    /// The repairs that would fix the errors of `instance`: scalars spelled as strings, and
    /// `null`s that stand for absent values. A `null` where the schema wants something else
    /// is read as absent, whatever the keyword that refused it (`type`, `oneOf` of `const`s,
    /// `enum`, `$ref`, `allOf`, an unlisted property), at any depth and inside the branches of
    /// `anyOf` / `oneOf`: strict renderings make every optional property required and
    /// nullable, so a strict model sends `null` for each value it leaves out. Whether a
    /// removed `null` was in fact required shows when the repaired value is checked again.
    fn repairs(&self, instance: &Value) -> Vec<Repair> {
        let mut repairs = IndexSet::new();
        for error in self.validator.iter_errors(instance) {
            collect_repairs(&error, &mut repairs);
        }
        repairs.into_iter().collect()
    }

    /// The paths of removed `null`s that the repaired value now misses as required
    /// properties, at the top level or inside the branches of `anyOf` / `oneOf` (a set:
    /// arguments may hold thousands).
    fn nulls_still_required(&self, repaired: &Value, repairs: &[Repair]) -> HashSet<String> {
        let mut missing = Vec::new();
        for error in self.validator.iter_errors(repaired) {
            collect_missing(&error, &mut missing);
        }
        let removed: HashSet<&str> = repairs
            .iter()
            .filter_map(|r| match r {
                Repair::RemoveNull(path) => Some(path.as_str()),
                Repair::Replace(..) => None,
            })
            .collect();
        missing
            .into_iter()
            .filter(|path| removed.contains(path.as_str()))
            .collect()
    }

    /// Every violation of `instance`, with its path.
    fn describe(&self, instance: &Value) -> String {
        let mut out = String::new();
        let mut count = 0;
        for error in self.validator.iter_errors(instance) {
            count += 1;
            if count > MAX_LISTED_VIOLATIONS {
                continue;
            }
            if !out.is_empty() {
                out.push_str("; ");
            }
            let path = error.instance_path().as_str();
            if !path.is_empty() {
                out.push_str(path);
                out.push_str(": ");
            }
            match choice_detail(&error) {
                // A choice of constants says so as an `enum` does, not as a `oneOf`.
                Some(Choice::NotOneOf(message)) => out.push_str(&message),
                Some(Choice::Closest(wanted)) => {
                    let message = error.to_string();
                    out.push_str(&cut_to(&message, MAX_VIOLATION_CHARS));
                    let _ = write!(out, " ({wanted})");
                }
                None => {
                    let message = error.to_string();
                    out.push_str(&cut_to(&message, MAX_VIOLATION_CHARS));
                }
            }
            if let ValidationErrorKind::AdditionalProperties { unexpected } = error.kind() {
                let hint = crate::manager::suggestion::unexpected_properties_hint(
                    &self.schema,
                    error.schema_path().as_str(),
                    path,
                    unexpected,
                );
                // A hint per unexpected argument: cut as the message is, its parenthesis
                // closed.
                match cut_to(&hint, MAX_VIOLATION_CHARS) {
                    Cow::Borrowed(whole) => out.push_str(whole),
                    Cow::Owned(cut) => {
                        out.push_str(&cut);
                        out.push(')');
                    }
                }
            }
        }
        if count > MAX_LISTED_VIOLATIONS {
            let _ = write!(out, "; and {} more", count - MAX_LISTED_VIOLATIONS);
        }
        if out.is_empty() {
            out.push_str("the arguments do not match the schema");
        }
        out
    }
}

/// The error of a call to a command group naming a command it lacks (`other`, quoted cut as
/// a violation's value is): validation's, and the generated dispatch's for a call made
/// without validation.
pub fn unknown_command(tool: &str, other: &str, listed: &str) -> ToolError {
    let other = format!("{other:?}");
    let other = cut_to(&other, MAX_VIOLATION_CHARS);
    ToolError::invalid_arguments(
        tool,
        format!("/{COMMAND_ARGUMENT}: unknown command {other}; valid commands are {listed}"),
    )
}

/// Kept once each, in the order found (several branches may find the same one; arguments
/// may need thousands).
#[derive(Debug, PartialEq, Eq, Hash)]
enum Repair {
    Replace(String, Value),
    RemoveNull(String),
}

/// The errors of each of an error's `anyOf` / `oneOf` branches; none for another error.
fn branches<'e>(error: &'e ValidationError<'_>) -> &'e [Vec<ValidationError<'static>>] {
    match error.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            context
        }
        _ => &[],
    }
}

/// The errors inside an error's `anyOf` / `oneOf` branches, where a repair may also apply.
fn branch_errors<'e>(
    error: &'e ValidationError<'_>,
) -> impl Iterator<Item = &'e ValidationError<'static>> {
    branches(error).iter().flatten()
}

/// What a failed `anyOf` / `oneOf` wanted, which its own message ("not valid under any of the
/// schemas") does not say.
enum Choice {
    /// Each branch is a constant (an enum whose variants have descriptions): the message
    /// that replaces it, worded as an `enum`'s ("\"medium\" is not one of \"fast\" or
    /// \"slow\"").
    NotOneOf(String),
    /// The violations of the one branch closest to the value (a tagged enum's variant whose
    /// tag matched), to follow the message.
    Closest(String),
}

/// What the failed choice `error` wanted, when that can be told ([`Choice`]).
fn choice_detail(error: &ValidationError<'_>) -> Option<Choice> {
    let branches = branches(error);
    if branches.is_empty() {
        return None;
    }
    let at = error.instance_path().as_str();
    if let Some(values) = allowed_values(error).filter(|v| !v.is_empty()) {
        let instance = error.instance().to_string();
        let start = format!(
            "{} is not one of ",
            cut_to(&instance, MAX_VIOLATION_CHARS / 2)
        );
        let listed = listed_whole(&values, MAX_VIOLATION_CHARS.saturating_sub(start.len()));
        return Some(Choice::NotOneOf(start + &listed));
    }
    // The branches whose constants all matched (a tagged variant whose tag did); of several,
    // the ones that failed only inside the value (an externally tagged variant whose key did).
    let matched = |e: &ValidationError<'_>| {
        !matches!(
            e.kind(),
            ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. }
        )
    };
    let below = |e: &ValidationError<'_>| {
        e.instance_path()
            .as_str()
            .strip_prefix(at)
            .is_some_and(|rest| rest.starts_with('/'))
    };
    let mut closest: Vec<&Vec<ValidationError<'static>>> = branches
        .iter()
        .filter(|errors| !errors.is_empty() && errors.iter().all(matched))
        .collect();
    if closest.len() > 1 {
        closest.retain(|errors| errors.iter().all(below));
    }
    let [errors] = closest.as_slice() else {
        return None;
    };
    let listed: Vec<String> = errors
        .iter()
        .take(MAX_LISTED_VIOLATIONS)
        .map(|e| {
            let message = e.to_string();
            let message = cut_to(&message, MAX_VIOLATION_CHARS);
            format!("{}: {message}", e.instance_path().as_str())
        })
        .collect();
    Some(Choice::Closest(format!(
        "as the closest of them: {}",
        listed.join("; ")
    )))
}

/// `values` as "a, b or c" within about `room` characters: whole values, as many as fit, then
/// "or N more" (a value cut in its middle would read as one the schema allows).
fn listed_whole(values: &[String], room: usize) -> String {
    let Some((last, first)) = values.split_last() else {
        return String::new();
    };
    let all = if first.is_empty() {
        last.clone()
    } else {
        format!("{} or {last}", first.join(", "))
    };
    if all.len() <= room {
        return all;
    }
    let mut listed = String::new();
    let mut shown = 0;
    for value in values {
        let more = format!(" or {} more", values.len() - shown - 1);
        if shown > 0 && listed.len() + 2 + value.len() + more.len() > room {
            break;
        }
        if shown > 0 {
            listed.push_str(", ");
        }
        // The first value is shown however long, cut as any quoted value is.
        listed.push_str(&cut_to(value, room / 2));
        shown += 1;
    }
    let _ = write!(listed, " or {} more", values.len() - shown);
    listed
}

/// The values a failed `anyOf` / `oneOf` allows, when each of its branches is a constant,
/// `null`, or a choice of such: an enum whose variants have descriptions, and an `Option` of
/// one (its choice through a `$ref`, or null), whose failure said nothing of either.
fn allowed_values(error: &ValidationError<'_>) -> Option<Vec<String>> {
    let at = error.instance_path().as_str();
    let mut values = Vec::new();
    for errors in branches(error) {
        let here = || errors.iter().filter(|e| e.instance_path().as_str() == at);
        let allowed = here()
            .find_map(|e| match e.kind() {
                ValidationErrorKind::Constant { expected_value } => {
                    Some(vec![expected_value.to_string()])
                }
                _ => None,
            })
            .or_else(|| {
                here().find_map(|e| match e.kind() {
                    ValidationErrorKind::AnyOf { .. }
                    | ValidationErrorKind::OneOfNotValid { .. } => allowed_values(e),
                    _ => None,
                })
            })
            .or_else(|| {
                here().find_map(|e| match e.kind() {
                    ValidationErrorKind::Type {
                        kind: TypeKind::Single(JsonType::Null),
                    } => Some(vec!["null".to_owned()]),
                    _ => None,
                })
            })?;
        values.extend(allowed);
    }
    Some(values)
}

fn collect_repairs(error: &ValidationError<'_>, repairs: &mut IndexSet<Repair>) {
    let mut push = |repair: Repair| {
        repairs.insert(repair);
    };
    let path = error.instance_path().as_str();
    match (error.kind(), &**error.instance()) {
        // A `null` for an argument the schema does not list is an absent argument (a strict
        // rendering of a command group makes models send the other commands' arguments as
        // `null`).
        (ValidationErrorKind::AdditionalProperties { unexpected }, Value::Object(map)) => {
            for name in unexpected
                .iter()
                .filter(|n| map.get(*n) == Some(&Value::Null))
            {
                let key = name.replace('~', "~0").replace('/', "~1");
                push(Repair::RemoveNull(format!("{path}/{key}")));
            }
        }
        // A `null` for a declared property (not an entry of a map, which has no absent
        // entries to mean) is the property absent.
        (_, Value::Null) if !path.is_empty() && at_declared_property(error) => {
            push(Repair::RemoveNull(path.to_owned()));
        }
        (ValidationErrorKind::Type { kind }, Value::String(text)) => {
            let wants = |ty: JsonType| match kind {
                TypeKind::Single(single) => *single == ty,
                TypeKind::Multiple(set) => set.contains(ty),
            };
            if let Some(value) = parse_scalar(text, &wants) {
                push(Repair::Replace(path.to_owned(), value));
            }
        }
        _ => {}
    }
    for inner in branch_errors(error) {
        collect_repairs(inner, repairs);
    }
}

/// Whether the schema that `error` is about is a property's that `properties` declares:
/// the last step of its evaluation path into a part of the instance is `properties/<name>`, not
/// `additionalProperties` or `patternProperties` (a map's entries) nor an array's items.
fn at_declared_property(error: &ValidationError<'_>) -> bool {
    // The path as evaluated (through each `$ref`), not the keyword's place in the document.
    let path = error.evaluation_path();
    let mut segments = path.as_str().split('/').skip(1);
    let mut last_step = None;
    while let Some(segment) = segments.next() {
        match segment {
            // The next segment is a name or a pattern, never a keyword.
            "properties" | "patternProperties" | "prefixItems" => {
                last_step = Some(segment);
                segments.next();
            }
            "additionalProperties"
            | "unevaluatedProperties"
            | "items"
            | "additionalItems"
            | "unevaluatedItems"
            | "contains" => last_step = Some(segment),
            // Branches and definitions are named by an index or a name: skipped so that a
            // property called `items` is not taken for the keyword.
            "anyOf" | "oneOf" | "allOf" | "$defs" | "definitions" | "dependentSchemas" => {
                segments.next();
            }
            _ => {}
        }
    }
    last_step == Some("properties")
}

/// The paths of the properties that `required` errors (here or in branches) say are missing.
fn collect_missing(error: &ValidationError<'_>, missing: &mut Vec<String>) {
    if let ValidationErrorKind::Required {
        property: Value::String(name),
    } = error.kind()
    {
        let key = name.replace('~', "~0").replace('/', "~1");
        missing.push(format!("{}/{key}", error.instance_path().as_str()));
    }
    for inner in branch_errors(error) {
        collect_missing(inner, missing);
    }
}

fn apply(arguments: &mut ToolArguments, repairs: &[Repair]) {
    let root = arguments.value_mut();
    // The `null`s to remove, by the object that holds them: each object is then rewritten
    // once, keeping its order (one `shift_remove` per member would move the rest each time).
    let mut removed: HashMap<&str, HashSet<String>> = HashMap::new();
    for repair in repairs {
        match repair {
            Repair::Replace(path, value) => {
                if let Some(slot) = root.pointer_mut(path) {
                    *slot = value.clone();
                }
            }
            Repair::RemoveNull(path) => {
                let Some((parent, key)) = path.rsplit_once('/') else {
                    continue;
                };
                let key = key.replace("~1", "/").replace("~0", "~");
                removed.entry(parent).or_default().insert(key);
            }
        }
    }
    for (parent, keys) in removed {
        // Only an object member can be absent; a `null` item of an array stays.
        if let Some(Value::Object(map)) = root.pointer_mut(parent) {
            map.retain(|key, _| !keys.contains(key));
        }
    }
}

/// Reads a scalar spelled as a string, as the schema wants it.
fn parse_scalar(text: &str, wants: &dyn Fn(JsonType) -> bool) -> Option<Value> {
    let t = text.trim();
    if wants(JsonType::Integer) || wants(JsonType::Number) {
        if let Ok(i) = t.parse::<i64>() {
            return Some(Value::from(i));
        }
        if let Ok(u) = t.parse::<u64>() {
            return Some(Value::from(u));
        }
        if let Ok(f) = t.parse::<f64>()
            && f.is_finite()
            && (wants(JsonType::Number) || f.fract() == 0.0 && holds_exactly(t, f))
        {
            return serde_json::Number::from_f64(f).map(Value::Number);
        }
    }
    if wants(JsonType::Boolean) {
        match t.to_ascii_lowercase().as_str() {
            "true" => return Some(Value::Bool(true)),
            "false" => return Some(Value::Bool(false)),
            _ => {}
        }
    }
    None
}

/// Whether `f`, read from `text`, is the integer `text` writes, when it writes one too wide
/// for 64 bits (which only a float carries): rounded, it would be read as another integer.
fn holds_exactly(text: &str, f: f64) -> bool {
    // `as` saturates: a float rounded up to 2^127 (or 2^128) would pass for `i128::MAX`.
    match (text.parse::<i128>(), text.parse::<u128>()) {
        (Ok(written), _) => f < 2f64.powi(127) && f as i128 == written,
        (_, Ok(written)) => f < 2f64.powi(128) && f as u128 == written,
        // Not an integer literal (`1e3`, `4.0`): the float is what it writes.
        _ => true,
    }
}

/// The validators of one tool: its schema, or for a command group one schema per command.
#[derive(Debug, Clone)]
pub(crate) enum ArgumentValidator {
    Single(CompiledSchema),
    Commands(Vec<(String, CompiledSchema)>),
}

impl ArgumentValidator {
    /// Compiles the validators of `tool`. The error names the command whose schema failed.
    pub(crate) fn compile(tool: &Tool) -> Result<Self, (Option<String>, String)> {
        match tool {
            Tool::SingleCommand(def) => CompiledSchema::compile(&def.arguments.tree())
                .map(Self::Single)
                .map_err(|reason| (None, reason)),
            Tool::MultiCommands(_, commands) => commands
                .iter()
                .map(|command| {
                    let schema = with_command_property(command.arguments.to_value(), &command.name)
                        .map_err(|reason| (Some(command.name.clone()), reason))?;
                    CompiledSchema::compile(&schema)
                        .map(|compiled| (command.name.clone(), compiled))
                        .map_err(|reason| (Some(command.name.clone()), reason))
                })
                .collect::<Result<_, _>>()
                .map(Self::Commands),
        }
    }

    /// Checks a call's arguments; `tool` names the tool in the error. Gives the arguments the
    /// tool is to receive: those sent when they are valid as they are (no copy), or their
    /// repaired copy.
    ///
    /// The usual call (one schema, arguments the fast check accepts as sent) is decided here,
    /// inlined into the caller; everything else is out of line, so that the usual call pays
    /// neither a call nor the large frame of the rest.
    #[inline]
    pub(crate) fn check<'a>(
        &self,
        tool: &str,
        arguments: &'a ToolArguments,
    ) -> Result<Cow<'a, ToolArguments>, ToolError> {
        if let Self::Single(schema) = self
            && schema.certainly_accepts(arguments)
        {
            return Ok(Cow::Borrowed(arguments));
        }
        self.check_beyond_flat(tool, arguments)
    }

    /// [`check`](Self::check) of what the fast check alone did not accept.
    #[inline(never)]
    fn check_beyond_flat<'a>(
        &self,
        tool: &str,
        arguments: &'a ToolArguments,
    ) -> Result<Cow<'a, ToolArguments>, ToolError> {
        let checked = match self {
            // The fast check has already answered for it.
            Self::Single(schema) => schema.check_thoroughly(arguments),
            Self::Commands(commands) => {
                let listed = || {
                    commands
                        .iter()
                        .map(|(name, _)| format!("'{name}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let chosen = match arguments.get(COMMAND_ARGUMENT) {
                    None | Some(Value::Null) => {
                        return Err(ToolError::invalid_arguments(
                            tool,
                            format!(
                                "missing required argument '{COMMAND_ARGUMENT}': choose one of {}",
                                listed()
                            ),
                        ));
                    }
                    Some(Value::String(name)) => name,
                    // Not printed below when it is too deep to print.
                    Some(other) if check_depth(other).is_err() => {
                        return Err(ToolError::invalid_arguments(
                            tool,
                            TooDeep.in_arguments_at(arguments.as_value()),
                        ));
                    }
                    Some(other) => {
                        let other = other.to_string();
                        let other = cut_to(&other, MAX_VIOLATION_CHARS);
                        return Err(ToolError::invalid_arguments(
                            tool,
                            format!(
                                "/{COMMAND_ARGUMENT}: expected a command name, got {other}; choose one of {}",
                                listed()
                            ),
                        ));
                    }
                };
                match commands.iter().find(|(name, _)| name == chosen) {
                    Some((_, schema)) => schema.check(arguments),
                    // The model's text is quoted cut, as a violation's is.
                    None => {
                        return Err(unknown_command(tool, chosen, &listed()));
                    }
                }
            }
        };
        match checked {
            Ok(None) => Ok(Cow::Borrowed(arguments)),
            Ok(Some(repaired)) => Ok(Cow::Owned(repaired)),
            Err(reason) => Err(ToolError::invalid_arguments(tool, reason)),
        }
    }
}

/// A command's schema with the `command` discriminator added, so that a call (which carries
/// `command`) validates against it as it is.
fn with_command_property(mut schema: Value, command: &str) -> Result<Value, String> {
    let Some(object) = schema.as_object_mut() else {
        return Err("a command's argument schema must be an object schema".to_owned());
    };
    let properties = object
        .entry("properties")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(properties) = properties.as_object_mut() else {
        return Err("`properties` must be an object".to_owned());
    };
    if properties.contains_key(COMMAND_ARGUMENT) {
        return Err(format!(
            "the argument name '{COMMAND_ARGUMENT}' is reserved in a command group: it selects the command"
        ));
    }
    properties.insert(
        COMMAND_ARGUMENT.to_owned(),
        serde_json::json!({ "const": command }),
    );
    match object.get_mut("required") {
        Some(Value::Array(required)) => required.push(Value::String(COMMAND_ARGUMENT.to_owned())),
        _ => {
            object.insert("required".to_owned(), serde_json::json!([COMMAND_ARGUMENT]));
        }
    }
    Ok(schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    fn compiled(schema: Value) -> CompiledSchema {
        CompiledSchema::compile(&schema).unwrap()
    }

    fn args(v: Value) -> ToolArguments {
        ToolArguments::try_from(v).unwrap()
    }

    #[test]
    fn an_f32_past_its_range_is_refused_as_the_reader_refuses_it() {
        // The declared schema (schemars': `format: float`) says no range; the reader refuses
        // a number that would round to an infinite `f32`, so validation does too.
        let schema = compiled(json!({"type": "object", "properties": {
            "ratio": {"type": "number", "format": "float"},
            "weights": {"type": "array", "items": {"type": ["number", "null"], "format": "float"}},
            "ranged": {"type": "number", "format": "float", "minimum": 0.5, "maximum": 2},
            "wide": {"type": "number", "format": "double"}}}));
        for (sent, at) in [
            (json!({"ratio": 1e39}), "/ratio"),
            (json!({"ratio": -1e39}), "/ratio"),
            (json!({"weights": [1.0, null, 3.5e38]}), "/weights/2"),
            (json!({"ranged": 3}), "/ranged"),
        ] {
            let err = schema.check(&args(sent.clone())).unwrap_err();
            assert!(err.contains(at), "{sent}: {err}");
        }
        // `f32::MAX` as serde writes it, the last number below the limit, and `f64`s pass.
        for sent in [
            json!({"ratio": 3.4028235e38}),
            json!({"ratio": -340_282_356_779_733_623_858_607_532_500_980_858_880.0}),
            json!({"weights": [null, 1.5]}),
            json!({"wide": 1e300}),
        ] {
            assert!(schema.check(&args(sent.clone())).is_ok(), "{sent}");
        }
    }

    #[test]
    fn lists_every_violation_with_its_path() {
        let s = compiled(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0},
                "name": {"type": "string", "minLength": 1}
            },
            "required": ["count", "name"]
        }));
        let err = s
            .check(&args(json!({"count": -1, "name": ""})))
            .unwrap_err();
        assert_eq!(
            err,
            "/count: -1 is less than the minimum of 0; /name: \"\" is shorter than 1 character"
        );
        let err = s.check(&args(json!({"count": 1}))).unwrap_err();
        assert_eq!(err, "\"name\" is a required property");
    }

    #[test]
    fn repairs_scalars_sent_as_strings() {
        let s = compiled(json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
                "nested": {"type": "object", "properties": {"k": {"type": ["integer", "null"]}}},
                "s": {"type": "string"}
            }
        }));
        let a = args(json!({"n": "42", "x": "2.5", "b": "true", "nested": {"k": " 7 "}, "s": "9"}));
        let repaired = s.check(&a).unwrap().expect("repaired");
        assert_eq!(
            repaired.as_value(),
            &json!({"n": 42, "x": 2.5, "b": true, "nested": {"k": 7}, "s": "9"})
        );
        let err = s.check(&args(json!({"n": "4.5"}))).unwrap_err();
        assert_eq!(err, "/n: \"4.5\" is not of type \"integer\"");
        let repaired = s
            .check(&args(json!({"n": "4.0"})))
            .unwrap()
            .expect("repaired");
        assert_eq!(repaired.get("n"), Some(&json!(4.0)));
        // Valid arguments are not copied.
        assert!(s.check(&args(json!({"n": 4}))).unwrap().is_none());
    }

    #[test]
    fn integers_wider_than_64_bits_are_repaired_only_when_exact() {
        let s = compiled(json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}, "x": {"type": "number"}}
        }));
        let repaired = s
            .check(&args(json!({"n": "100000000000000000000"})))
            .unwrap()
            .expect("repaired");
        assert_eq!(repaired.get("n"), Some(&json!(1e20)));
        // As a float it would be another number: refused rather than rounded.
        let err = s
            .check(&args(json!({"n": "123456789012345678901"})))
            .unwrap_err();
        assert_eq!(
            err,
            "/n: \"123456789012345678901\" is not of type \"integer\""
        );
        for rounded_up in [i128::MAX.to_string(), u128::MAX.to_string()] {
            assert!(s.check(&args(json!({"n": rounded_up}))).is_err());
        }
        // A number may be rounded.
        let repaired = s
            .check(&args(json!({"x": "123456789012345678901"})))
            .unwrap()
            .expect("repaired");
        assert_eq!(repaired.get("x"), Some(&json!(123456789012345678901.0)));
    }

    #[test]
    fn a_failed_choice_says_what_its_branches_wanted() {
        let s = compiled(json!({"type": "object", "properties": {
            // An enum whose variants have descriptions: a `oneOf` of constants.
            "mode": {"oneOf": [
                {"type": "string", "const": "fast", "description": "Fast."},
                {"type": "string", "const": "slow", "description": "Slow."}
            ]},
            // An internally tagged enum.
            "shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "const": "A"},
                    "n": {"type": "integer", "maximum": 10}}, "required": ["kind", "n"]},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "B"},
                    "s": {"type": "string"}}, "required": ["kind", "s"]}
            ]},
            // An untagged one: no branch is closer than another.
            "either": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}
        }}));
        let err = s.check(&args(json!({"mode": "medium"}))).unwrap_err();
        assert_eq!(err, "/mode: \"medium\" is not one of \"fast\" or \"slow\"");
        let many = compiled(json!({"type": "object", "properties": {"level": {"oneOf": [
            {"const": 1, "description": "Low."},
            {"const": 2, "description": "Middle."},
            {"const": 3, "description": "High."}
        ]}}}));
        let err = many.check(&args(json!({"level": 4}))).unwrap_err();
        assert_eq!(err, "/level: 4 is not one of 1, 2 or 3");
        // Too many to list within a violation's length: whole values, then how many more.
        let long: Vec<Value> = (0..40)
            .map(|n| json!({"const": format!("value_number_{n}"), "description": "A value."}))
            .collect();
        let long = compiled(json!({"type": "object", "properties": {"v": {"oneOf": long}}}));
        let err = long.check(&args(json!({"v": "other"}))).unwrap_err();
        let listed = err.strip_prefix("/v: \"other\" is not one of ").unwrap();
        let (shown, more) = listed.rsplit_once(" or ").unwrap();
        let shown: Vec<&str> = shown.split(", ").collect();
        assert!(shown.len() > 5, "{err}");
        for (n, value) in shown.iter().enumerate() {
            assert_eq!(*value, format!("\"value_number_{n}\""), "{err}");
        }
        assert_eq!(more, format!("{} more", 40 - shown.len()), "{err}");
        assert!(err.len() <= MAX_VIOLATION_CHARS + 10, "{}", err.len());
        // An optional such enum (`Option<Unit>`: its choice, or null) lists null too.
        let unit = json!({"oneOf": [
            {"const": "celsius", "description": "C."},
            {"const": "fahrenheit", "description": "F."}
        ]});
        let optional = compiled(json!({"type": "object",
            "properties": {"unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]}},
            "$defs": {"Unit": unit}}));
        let err = optional
            .check(&args(json!({"unit": "kelvin"})))
            .unwrap_err();
        assert_eq!(
            err,
            "/unit: \"kelvin\" is not one of \"celsius\", \"fahrenheit\" or null"
        );
        let plain = compiled(json!({"type": "object", "properties": {"unit": {"anyOf": [
            {"const": "c"}, {"const": "f"}, {"type": "null"}
        ]}}}));
        let err = plain.check(&args(json!({"unit": 3}))).unwrap_err();
        assert_eq!(err, "/unit: 3 is not one of \"c\", \"f\" or null");
        let err = s
            .check(&args(json!({"shape": {"kind": "A", "n": 11}})))
            .unwrap_err();
        assert_eq!(
            err,
            "/shape: {\"kind\":\"A\",\"n\":11} is not valid under any of the schemas listed in \
             the 'oneOf' keyword (as the closest of them: /shape/n: 11 is greater than the \
             maximum of 10)"
        );
        let err = s.check(&args(json!({"shape": {"kind": "B"}}))).unwrap_err();
        assert!(
            err.ends_with("(as the closest of them: /shape: \"s\" is a required property)"),
            "{err}"
        );
        let err = s.check(&args(json!({"either": -1}))).unwrap_err();
        assert_eq!(
            err,
            "/either: -1 is not valid under any of the schemas listed in the 'anyOf' keyword"
        );
    }

    #[test]
    fn optional_nulls_are_dropped_required_nulls_reported() {
        let s = compiled(json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
            "required": ["a"],
            "additionalProperties": false
        }));
        let repaired = s.check(&args(json!({"a": "1", "b": null}))).unwrap();
        assert_eq!(repaired.expect("repaired").as_value(), &json!({"a": 1}));
        // Only the null that cannot be read as absent is reported.
        let err = s.check(&args(json!({"a": null, "b": null}))).unwrap_err();
        assert_eq!(err, "/a: null is not of type \"integer\"");
    }

    #[test]
    fn nulls_are_absent_under_every_optional_shape() {
        let s = compiled(json!({
            "type": "object",
            "$defs": {
                "Level": {"oneOf": [{"const": "low"}, {"const": "high"}]},
                "Box": {
                    "type": "object",
                    "properties": {"w": {"type": "integer"}, "tag": {"$ref": "#/$defs/Level"}},
                    "required": ["w"]
                }
            },
            "properties": {
                "name": {"type": "string"},
                "by_ref": {"$ref": "#/$defs/Level"},
                "all_of": {"allOf": [{"$ref": "#/$defs/Level"}]},
                "any_of": {"anyOf": [{"type": "integer"}, {"const": "auto"}]},
                "constant": {"const": 7},
                "listed": {"enum": ["a", "b"]},
                "nested": {"$ref": "#/$defs/Box"},
                "boxes": {"type": "array", "items": {"$ref": "#/$defs/Box"}}
            },
            "required": ["name"],
            "additionalProperties": false
        }));
        let sent = json!({
            "name": "n", "by_ref": null, "all_of": null, "any_of": null, "constant": null,
            "listed": null, "nested": {"w": "3", "tag": null}, "boxes": [{"w": 1, "tag": null}]
        });
        let repaired = s.check(&args(sent)).unwrap().expect("repaired");
        assert_eq!(
            repaired.as_value(),
            &json!({"name": "n", "nested": {"w": 3}, "boxes": [{"w": 1}]})
        );
        // Required values sent as null are reported as such, and nothing else is.
        let err = s
            .check(&args(
                json!({"name": null, "by_ref": null, "boxes": [{"w": null, "tag": null}]}),
            ))
            .unwrap_err();
        assert_eq!(
            err,
            "/name: null is not of type \"string\"; /boxes/0/w: null is not of type \"integer\""
        );
        // A null item of an array is a value, not an absent one.
        let items = compiled(json!({
            "type": "object",
            "properties": {"v": {"type": "array", "items": {"type": "integer"}}}
        }));
        let err = items.check(&args(json!({"v": [1, null]}))).unwrap_err();
        assert_eq!(err, "/v/1: null is not of type \"integer\"");
    }

    #[test]
    fn arguments_nested_too_deep_are_refused_before_the_validator() {
        use crate::tool::nesting::testing::{nested, on_small_stack};
        on_small_stack(|| {
            // An open flat schema (the fast check), and one only the validator checks.
            for schema in [
                json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
                json!({"type": "object", "properties": {"x": {"type": "array"}}}),
            ] {
                let s = compiled(schema);
                let deep = ToolArguments::from_iter([("n", json!(1)), ("x", nested(10_000))]);
                let err = s.check(&deep).unwrap_err();
                assert_eq!(
                    err,
                    "the arguments are nested deeper than 128 levels, in '/x'; send them with less nesting"
                );
                // The argument's name as a pointer names it; one level within the bound
                // (the arguments object is the first) names none.
                let odd = ToolArguments::from_iter([("a/b~", nested(128))]);
                assert!(s.check(&odd).unwrap_err().contains("in '/a~1b~0';"));
                assert!(
                    s.check(&ToolArguments::from_iter([("x", nested(127))]))
                        .is_ok()
                );
                assert!(s.verify(deep.as_value()).is_err());
                // Within the limit, checked as before.
                let within = ToolArguments::from_iter([("x", nested(100))]);
                assert!(s.check(&within).is_ok());
            }
        });
    }

    /// Repairs are collected, checked against what is still required and applied in time
    /// linear in their number (these took seconds each, quadratic: a client may send
    /// thousands).
    #[test]
    fn many_repairs_take_linear_time() {
        const N: usize = 20_000;
        let numbers = compiled(json!({"type": "object",
            "properties": {"v": {"type": "array", "items": {"type": "integer"}}}}));
        let sent: Vec<Value> = (0..N).map(|i| json!(i.to_string())).collect();
        let repaired = numbers.check(&args(json!({"v": sent}))).unwrap().unwrap();
        assert_eq!(repaired.get("v").unwrap()[N - 1], json!(N - 1));

        let required = compiled(
            json!({"type": "object", "properties": {"v": {"type": "array",
            "items": {"type": "object", "properties": {"w": {"type": "integer"}}, "required": ["w"]}}}}),
        );
        let sent: Vec<Value> = (0..N).map(|_| json!({"w": null})).collect();
        let err = required.check(&args(json!({"v": sent}))).unwrap_err();
        assert!(err.starts_with("/v/0/w: null is not of type"), "{err}");

        let closed = compiled(
            json!({"type": "object", "properties": {"a": {"type": "integer"}},
            "additionalProperties": false}),
        );
        let mut sent = Map::new();
        sent.insert("a".to_owned(), json!(1));
        for i in 0..N {
            sent.insert(format!("x{i}"), Value::Null);
        }
        sent.insert("z".to_owned(), json!(2.5));
        let err = closed
            .check(&ToolArguments::from(sent.clone()))
            .unwrap_err();
        assert!(err.contains("'z' was unexpected"), "{err}");
        sent.shift_remove("z");
        let repaired = closed.check(&ToolArguments::from(sent)).unwrap().unwrap();
        assert_eq!(repaired.as_value(), &json!({"a": 1}));
    }

    #[test]
    fn hints_for_many_unexpected_arguments_are_cut() {
        let s = compiled(
            json!({"type": "object", "properties": {"alpha": {"type": "integer"}},
            "additionalProperties": false}),
        );
        let sent: Map<String, Value> = (0..1_000).map(|i| (format!("alph{i}"), json!(1))).collect();
        let err = s.check(&ToolArguments::from(sent)).unwrap_err();
        assert!(
            err.contains("(for 'alph0', did you mean 'alpha'?;"),
            "{err}"
        );
        assert!(err.ends_with("…)"), "{err}");
        assert!(
            err.chars().count() <= 2 * MAX_VIOLATION_CHARS + 8,
            "{}",
            err.len()
        );
    }

    #[test]
    fn a_large_command_value_is_not_echoed_whole() {
        use crate::{Args, ToolDefinition};
        let group = Tool::MultiCommands(
            "g".to_owned(),
            vec![ToolDefinition::new("add", "Add.", Args::empty())],
        );
        let validator = ArgumentValidator::compile(&group).unwrap();
        let long = "x".repeat(100_000);
        let many: Vec<u32> = (0..100_000).collect();
        for command in [json!(long), json!(many)] {
            let sent = args(json!({"command": command}));
            let err = validator.check("g", &sent).unwrap_err().to_string();
            assert!(err.chars().count() < 400, "{}", err.len());
            assert!(err.ends_with("'add'"), "{err}");
        }
    }

    #[test]
    fn long_error_lists_are_capped() {
        let s = compiled(json!({"type": "array", "items": {"type": "integer"}}));
        let many: Vec<Value> = (0..20).map(|i| json!(format!("v{i}"))).collect();
        let err = s.describe(&Value::Array(many));
        assert!(err.ends_with("; and 12 more"), "{err}");
    }

    #[test]
    fn bad_schemas_do_not_compile() {
        let err = CompiledSchema::compile(&json!({"type": "frobnicate"})).unwrap_err();
        assert!(!err.is_empty());
        let err = CompiledSchema::compile(&json!({"type": "string", "pattern": "(["})).unwrap_err();
        assert!(!err.is_empty());
    }
}
