//! [`ToolArgs`]: reading a call's arguments whichever way the backend spelled them.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::manager::suggestion::missing_argument_hint;
use crate::reading::struct_fields::struct_fields;
use crate::schema::validation::MAX_VIOLATION_CHARS;
use crate::tool::arguments::json_type_name;
use crate::tool::echo::cut_to;
use crate::tool::nesting::{TooDeep, check_depth};
use crate::{Args, ToolArguments, ToolError, lenient};

/// A reader over one call's arguments, for hand-written tools.
///
/// Numbers and booleans are accepted as the JSON value or as a string holding it (`"42"`,
/// `"true"`), as text-based backends send them. A missing or ill-typed argument is
/// [`ToolError::InvalidArguments`] naming the tool, the argument and what was expected.
///
/// ```
/// use toolsmith::{ToolArgs, ToolArguments};
/// use serde_json::json;
///
/// let arguments: ToolArguments = serde_json::from_value(json!({
///     "path": "src/main.rs", "offset": "10", "verbose": "true"
/// })).unwrap();
/// let args = ToolArgs::new("read", &arguments);
/// assert_eq!(args.str("path").unwrap(), "src/main.rs");
/// assert_eq!(args.usize("offset").unwrap(), 10);
/// assert!(args.bool("verbose").unwrap());
/// assert_eq!(args.opt_i64("limit").unwrap(), None);
///
/// let err = args.i64("limit").unwrap_err();
/// assert_eq!(err.to_string(), "Invalid arguments for tool 'read': missing required argument 'limit'");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ToolArgs<'a> {
    tool: &'a str,
    arguments: &'a ToolArguments,
}

/// A type that can be read from a call's whole argument object.
///
/// Every `DeserializeOwned` type is one (read leniently); `#[derive(ToolArgs)]` implements it
/// for argument structs and command enums, together with their schema.
pub trait FromToolArgs: Sized {
    /// Reads the value from the arguments.
    fn from_tool_args(args: &ToolArgs<'_>) -> Result<Self, ToolError>;
}

impl<T: DeserializeOwned> FromToolArgs for T {
    fn from_tool_args(args: &ToolArgs<'_>) -> Result<Self, ToolError> {
        lenient::from_value(args.arguments.as_value())
            .map_err(|err| args.arguments_error(err, struct_fields::<T>))
    }
}

impl ToolArgs<'_> {
    /// The error of reading the whole arguments ([`FromToolArgs`]): out of line and not
    /// generic, so that it is compiled once rather than for each type read. `fields` gives
    /// the names of the fields the type reads, asked only for a missing field's hint.
    #[inline(never)]
    fn arguments_error(
        &self,
        mut err: lenient::LenientError,
        fields: fn() -> Option<&'static [&'static str]>,
    ) -> ToolError {
        // serde's message quotes the value (a string of any size): not echoed whole.
        if let Cow::Owned(cut) = cut_to(&err.message, MAX_VIOLATION_CHARS) {
            err.message = cut;
        }
        // A field of the arguments themselves missing (serde says "missing field `name`"):
        // an argument sent under a name close to it that no field has is named.
        let missing = err
            .message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.strip_suffix('`'));
        if let (true, Some(missing), Some(fields)) = (err.path.is_empty(), missing, fields()) {
            let unknown = self
                .arguments
                .as_map()
                .keys()
                .map(String::as_str)
                .filter(|sent| !fields.contains(sent));
            let hint = missing_argument_hint(missing, unknown);
            err.message.push_str(&hint);
        }
        ToolError::invalid_arguments(self.tool, err)
    }
}

/// An argument type that knows its own schema: implemented by `#[derive(ToolArgs)]` on a
/// struct, and asked of the type of an `#[args]` parameter of a command of a `#[tool_fn]`
/// group (a function's `#[args]` type is asked for its [`ToolShape`](crate::ToolShape),
/// which every `ArgsSchema` type has).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no schema of a tool's whole arguments: derive `ToolArgs` on it",
    label = "this type needs `#[derive(ToolArgs)]` (on a struct with named fields)",
    note = "`#[derive(toolsmith::ToolArgs)]` on a struct gives the schema of its fields as a tool's arguments (`ArgsSchema`) and their reading (`FromToolArgs`)",
    note = "a type deriving `serde::Deserialize` and `schemars::JsonSchema` is one argument, not the whole arguments: a `#[tool_fn]` parameter without `#[args]` takes it so",
    note = "a command enum deriving `ToolArgs` has commands (`ToolCommands`), not one object of arguments: it can be the whole arguments of a `#[tool_fn]` function, which it makes a command group, but not of one command of a group"
)]
pub trait ArgsSchema {
    /// The JSON Schema of the arguments (an object schema).
    fn args_schema() -> Args;
}

impl<'a> ToolArgs<'a> {
    /// A reader over `arguments` of a call to `tool`.
    #[inline]
    pub fn new(tool: &'a str, arguments: &'a ToolArguments) -> Self {
        Self { tool, arguments }
    }

    /// The tool these arguments were sent to.
    #[inline]
    pub fn tool(&self) -> &'a str {
        self.tool
    }

    /// The arguments themselves.
    #[inline]
    pub fn arguments(&self) -> &'a ToolArguments {
        self.arguments
    }

    fn missing(&self, name: &str) -> ToolError {
        ToolError::invalid_arguments(self.tool, format!("missing required argument '{name}'"))
    }

    fn wrong(&self, name: &str, expected: &str, found: &Value) -> ToolError {
        let shown = match found {
            Value::String(s) => format!("{s:?}"),
            // Not printed: printing recurses once per level.
            other if check_depth(other).is_err() => {
                format!("{} {TooDeep}", json_type_name(other))
            }
            other => format!("{} {other}", json_type_name(other)),
        };
        // A value of any size may come: it is not echoed whole.
        let shown = cut_to(&shown, MAX_VIOLATION_CHARS);
        ToolError::invalid_arguments(
            self.tool,
            format!(
                "/{}: expected {expected}, got {shown}",
                escape_pointer(name)
            ),
        )
    }

    /// The argument `name`, or `None` when it is absent or `null`.
    #[inline]
    pub fn opt_value(&self, name: &str) -> Option<&'a Value> {
        self.arguments.get(name).filter(|v| !v.is_null())
    }

    /// The argument `name`, which must be present.
    pub fn value(&self, name: &str) -> Result<&'a Value, ToolError> {
        self.opt_value(name).ok_or_else(|| self.missing(name))
    }

    /// A required string argument.
    pub fn str(&self, name: &str) -> Result<&'a str, ToolError> {
        self.opt_str(name)?.ok_or_else(|| self.missing(name))
    }

    /// An optional string argument.
    pub fn opt_str(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        match self.opt_value(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(name, "a string", other)),
        }
    }

    /// A required integer argument.
    pub fn i64(&self, name: &str) -> Result<i64, ToolError> {
        self.opt_i64(name)?.ok_or_else(|| self.missing(name))
    }

    /// An optional integer argument.
    pub fn opt_i64(&self, name: &str) -> Result<Option<i64>, ToolError> {
        // The JSON integer itself is the common case; the lenient reader handles the rest.
        if let Some(Value::Number(n)) = self.opt_value(name)
            && let Some(i) = n.as_i64()
        {
            return Ok(Some(i));
        }
        self.read(name, "an integer")
    }

    /// A required non-negative integer argument.
    pub fn usize(&self, name: &str) -> Result<usize, ToolError> {
        self.opt_usize(name)?.ok_or_else(|| self.missing(name))
    }

    /// An optional non-negative integer argument.
    pub fn opt_usize(&self, name: &str) -> Result<Option<usize>, ToolError> {
        self.read(name, "a non-negative integer")
    }

    /// A required number argument.
    pub fn f64(&self, name: &str) -> Result<f64, ToolError> {
        self.opt_f64(name)?.ok_or_else(|| self.missing(name))
    }

    /// An optional number argument.
    pub fn opt_f64(&self, name: &str) -> Result<Option<f64>, ToolError> {
        if let Some(Value::Number(n)) = self.opt_value(name)
            && let Some(f) = n.as_f64()
        {
            return Ok(Some(f));
        }
        self.read(name, "a number")
    }

    /// A required boolean argument.
    pub fn bool(&self, name: &str) -> Result<bool, ToolError> {
        self.opt_bool(name)?.ok_or_else(|| self.missing(name))
    }

    /// An optional boolean argument.
    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, ToolError> {
        if let Some(Value::Bool(b)) = self.opt_value(name) {
            return Ok(Some(*b));
        }
        self.read(name, "a boolean")
    }

    /// A required argument of any deserialisable type, read leniently.
    pub fn get<T: DeserializeOwned>(&self, name: &str) -> Result<T, ToolError> {
        self.opt_get(name)?.ok_or_else(|| self.missing(name))
    }

    /// An optional argument of any deserialisable type, read leniently.
    pub fn opt_get<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ToolError> {
        self.opt_value(name)
            .map(|value| self.read_field(name, value))
            .transpose()
    }

    fn read<T: DeserializeOwned>(
        &self,
        name: &str,
        expected: &str,
    ) -> Result<Option<T>, ToolError> {
        match self.opt_value(name) {
            None => Ok(None),
            Some(value) => lenient::scalar_from_value(value)
                .map(Some)
                .map_err(|_| self.wrong(name, expected, value)),
        }
    }

    /// Reads the whole argument object into `T` (any `DeserializeOwned` type, or a type with
    /// `#[derive(ToolArgs)]`), leniently; an error names the path of the offending value.
    pub fn parse<T: FromToolArgs>(&self) -> Result<T, ToolError> {
        T::from_tool_args(self)
    }
}

/// Escapes a property name for use as a JSON-pointer segment.
pub(crate) fn escape_pointer(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains(['~', '/']) {
        name.replace('~', "~0").replace('/', "~1").into()
    } else {
        name.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    fn args(v: Value) -> ToolArguments {
        ToolArguments::try_from(v).unwrap()
    }

    #[test]
    fn reads_each_spelling() {
        let a = args(json!({
            "i": 3, "is": " -4 ", "u": "5", "f": "2.5", "fi": 7,
            "b": true, "bs": "false", "s": "text", "n": null
        }));
        let r = ToolArgs::new("t", &a);
        assert_eq!(r.i64("i").unwrap(), 3);
        assert_eq!(r.i64("is").unwrap(), -4);
        assert_eq!(r.usize("u").unwrap(), 5);
        assert_eq!(r.f64("f").unwrap(), 2.5);
        assert_eq!(r.f64("fi").unwrap(), 7.0);
        assert!(r.bool("b").unwrap());
        assert!(!r.bool("bs").unwrap());
        assert_eq!(r.str("s").unwrap(), "text");
        assert_eq!(r.opt_str("n").unwrap(), None);
        assert_eq!(r.opt_value("n"), None);
        assert_eq!(r.opt_value("s"), Some(&json!("text")));
    }

    #[test]
    fn wrong_types_name_argument_and_expectation() {
        let a = args(json!({"s": 5, "i": "abc", "u": -1, "b": "maybe", "f": [1]}));
        let r = ToolArgs::new("calc", &a);
        let msg = |e: ToolError| e.to_string();
        assert_eq!(
            msg(r.str("s").unwrap_err()),
            "Invalid arguments for tool 'calc': /s: expected a string, got integer 5"
        );
        assert_eq!(
            msg(r.i64("i").unwrap_err()),
            "Invalid arguments for tool 'calc': /i: expected an integer, got \"abc\""
        );
        assert!(msg(r.usize("u").unwrap_err()).contains("/u: expected a non-negative integer"));
        assert!(msg(r.bool("b").unwrap_err()).contains("/b: expected a boolean"));
        assert!(msg(r.f64("f").unwrap_err()).contains("/f: expected a number, got array [1]"));
        assert_eq!(
            msg(r.str("absent").unwrap_err()),
            "Invalid arguments for tool 'calc': missing required argument 'absent'"
        );
        assert_eq!(
            r.i64("i").unwrap_err().kind(),
            crate::ToolErrorKind::InvalidArguments
        );
    }

    #[test]
    fn a_wrong_argument_s_path_escapes_its_name() {
        let a = args(json!({"a/b": "x", "c~d": 1}));
        let r = ToolArgs::new("t", &a);
        assert_eq!(
            r.i64("a/b").unwrap_err().to_string(),
            "Invalid arguments for tool 't': /a~1b: expected an integer, got \"x\""
        );
        assert!(r.str("c~d").unwrap_err().to_string().contains(": /c~0d: "));
        // As `get` (through `read_field`) writes it.
        assert!(
            r.get::<u8>("a/b")
                .unwrap_err()
                .to_string()
                .contains(": /a~1b: ")
        );
    }

    #[test]
    fn a_large_wrong_value_is_not_echoed_whole() {
        #[derive(Debug, Deserialize)]
        struct Small {
            #[allow(dead_code)]
            n: u8,
        }
        let long = "x".repeat(100_000);
        let many: Vec<u32> = (0..100_000).collect();
        let a = args(json!({"s": many, "n": long}));
        let r = ToolArgs::new("t", &a);
        for err in [
            r.str("s").unwrap_err(),
            r.i64("n").unwrap_err(),
            r.get::<u8>("n").unwrap_err(),
            r.field::<Vec<String>>("s").unwrap_err(),
            r.parse::<Small>().unwrap_err(),
        ] {
            let message = err.to_string();
            assert!(message.chars().count() < 400, "{}", message.len());
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Query {
        text: String,
        top_k: Option<u32>,
        filters: Vec<Filter>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Filter {
        field: String,
        min: f64,
    }

    #[test]
    fn parse_reads_whole_structs_leniently() {
        let a = args(json!({"text": "q", "top_k": "3", "filters": [{"field": "a", "min": "1.5"}]}));
        let q: Query = ToolArgs::new("search", &a).parse().unwrap();
        assert_eq!(q.top_k, Some(3));
        assert_eq!(q.filters[0].min, 1.5);

        let a = args(json!({"text": "q", "filters": [{"field": "a", "min": "low"}]}));
        let err = ToolArgs::new("search", &a).parse::<Query>().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("Invalid arguments for tool 'search': /filters/0/min: "),
            "{err}"
        );
        let err = ToolArgs::new("search", &args(json!({})))
            .parse::<Query>()
            .unwrap_err();
        assert!(err.to_string().contains("missing field `text`"), "{err}");
    }

    #[test]
    fn a_missing_field_names_an_unknown_argument_sent_under_a_close_name() {
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct Search {
            query_text: String,
            top_k: Option<u32>,
        }
        let read = |v: Value| {
            ToolArgs::new("search", &args(v))
                .parse::<Search>()
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            read(json!({"query_text": "q", "topK": 3})),
            "Invalid arguments for tool 'search': missing field `queryText` \
             (for 'query_text', did you mean 'queryText'?)"
        );
        // Nothing sent close to it: the message is serde's alone.
        assert_eq!(
            read(json!({"weather": "q"})),
            "Invalid arguments for tool 'search': missing field `queryText`"
        );
        // A name close to it that is a field is not offered for it.
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Names {
            name: String,
            names: Vec<String>,
        }
        let err = ToolArgs::new("t", &args(json!({"names": []})))
            .parse::<Names>()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid arguments for tool 't': missing field `name`"
        );
        // A name sent of any length is not echoed whole.
        let long = format!("queryText{}", "x".repeat(100_000));
        let message = read(json!({ long: "q" }));
        assert!(message.contains("(for 'queryTextxxx"), "{message}");
        assert!(message.ends_with("…)"), "{message}");
        assert!(message.chars().count() < 400, "{}", message.len());
    }

    #[test]
    fn get_reads_one_typed_argument() {
        let a = args(json!({"ids": ["1", 2], "bad": [{"x": 1}]}));
        let r = ToolArgs::new("t", &a);
        assert_eq!(r.get::<Vec<u64>>("ids").unwrap(), [1, 2]);
        assert_eq!(r.opt_get::<Vec<u64>>("none").unwrap(), None);
        let err = r.get::<Vec<u64>>("bad").unwrap_err();
        assert!(err.to_string().contains("/bad/0: invalid type"), "{err}");
    }
}
