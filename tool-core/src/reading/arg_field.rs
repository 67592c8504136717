//! Reading one argument by name into a typed value: what `#[derive(ToolArgs)]` and
//! `#[tool_fn]` read every field and parameter with.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::reading::tool_args::escape_pointer;
use crate::schema::validation::MAX_VIOLATION_CHARS;
use crate::tool::echo::cut_to;
use crate::{ToolArgs, ToolError, lenient};

impl<'a> ToolArgs<'a> {
    /// The argument `name` read leniently into `T`; an absent (or `null`) argument reads as
    /// `T` from `null`, which is `None` for an `Option` and an error naming the argument
    /// otherwise.
    ///
    /// ```
    /// use toolsmith::{ToolArgs, ToolArguments};
    /// use serde_json::json;
    ///
    /// let arguments = ToolArguments::try_from(json!({"n": "7", "tags": ["a"]})).unwrap();
    /// let args = ToolArgs::new("t", &arguments);
    /// assert_eq!(args.field::<u32>("n").unwrap(), 7);
    /// assert_eq!(args.field::<Option<String>>("note").unwrap(), None);
    /// assert_eq!(
    ///     args.field::<Vec<u8>>("tags").unwrap_err().to_string(),
    ///     "Invalid arguments for tool 't': /tags/0: invalid type: string \"a\", expected u8"
    /// );
    /// assert_eq!(
    ///     args.field::<u32>("missing").unwrap_err().to_string(),
    ///     "Invalid arguments for tool 't': missing required argument 'missing'"
    /// );
    /// ```
    pub fn field<T: DeserializeOwned>(&self, name: &str) -> Result<T, ToolError> {
        match self.opt_value(name) {
            Some(value) => self.read_field(name, value),
            None => self.absent_field(name),
        }
    }

    /// The argument `name` read leniently into `T`, or `default()` when it is absent or
    /// `null`.
    pub fn field_or_else<T: DeserializeOwned>(
        &self,
        name: &str,
        default: impl FnOnce() -> T,
    ) -> Result<T, ToolError> {
        match self.opt_value(name) {
            Some(value) => self.read_field(name, value),
            None => Ok(default()),
        }
    }

    /// The arguments sent with a value (not `null`), in the order they were sent: for reading
    /// every argument in one pass over the map, as `#[derive(ToolArgs)]` and `#[tool_fn]` do,
    /// with [`read_field`](Self::read_field) for each one wanted and
    /// [`absent_field`](Self::absent_field) for each one not found.
    ///
    /// ```
    /// use toolsmith::{ToolArgs, ToolArguments, ToolError};
    /// use serde_json::json;
    ///
    /// fn sum(args: &ToolArgs<'_>) -> Result<i64, ToolError> {
    ///     let (mut a, mut b) = (None, None);
    ///     for (name, value) in args.present() {
    ///         match name {
    ///             "a" => a = Some(args.read_field::<i64>(name, value)?),
    ///             "b" => b = Some(args.read_field::<i64>(name, value)?),
    ///             _ => {}
    ///         }
    ///     }
    ///     let a = match a { Some(a) => a, None => args.absent_field("a")? };
    ///     let b = match b { Some(b) => b, None => args.absent_field("b")? };
    ///     Ok(a + b)
    /// }
    ///
    /// let arguments = ToolArguments::try_from(json!({"b": "2", "a": 1})).unwrap();
    /// assert_eq!(sum(&ToolArgs::new("sum", &arguments)).unwrap(), 3);
    /// let arguments = ToolArguments::try_from(json!({"a": 1, "b": null})).unwrap();
    /// assert_eq!(
    ///     sum(&ToolArgs::new("sum", &arguments)).unwrap_err().to_string(),
    ///     "Invalid arguments for tool 'sum': missing required argument 'b'"
    /// );
    /// ```
    #[inline]
    pub fn present(&self) -> impl Iterator<Item = (&'a str, &'a Value)> + 'a {
        self.arguments()
            .as_map()
            .iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(name, value)| (name.as_str(), value))
    }

    /// `value`, sent as the argument `name`, read leniently into `T`; an error names the
    /// argument and the path inside it.
    #[inline]
    pub fn read_field<T: DeserializeOwned>(
        &self,
        name: &str,
        value: &Value,
    ) -> Result<T, ToolError> {
        lenient::from_value(value).map_err(|err| self.field_error(name, &err))
    }

    /// The error of [`read_field`](Self::read_field): out of line and not generic, so that
    /// it is compiled once rather than for each type read.
    #[inline(never)]
    fn field_error(&self, name: &str, err: &lenient::LenientError) -> ToolError {
        // serde's message quotes the value (a string of any size): not echoed whole.
        let message = cut_to(&err.message, MAX_VIOLATION_CHARS);
        ToolError::invalid_arguments(
            self.tool(),
            format!("/{}{}: {message}", escape_pointer(name), err.path),
        )
    }

    /// The value of the argument `name` when it was not sent (or sent as `null`): `T` read
    /// from `null`, which is `None` for an `Option`, and otherwise an error saying the
    /// argument is missing.
    #[inline]
    pub fn absent_field<T: DeserializeOwned>(&self, name: &str) -> Result<T, ToolError> {
        lenient::from_value(&Value::Null).map_err(|_| {
            ToolError::invalid_arguments(self.tool(), format!("missing required argument '{name}'"))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{ToolArgs, ToolArguments};
    use serde_json::json;

    #[test]
    fn defaults_fill_absent_and_null_only() {
        let arguments = ToolArguments::try_from(json!({"a": null, "b": "2", "c": "x"})).unwrap();
        let args = ToolArgs::new("t", &arguments);
        assert_eq!(args.field_or_else::<u8>("a", || 9).unwrap(), 9);
        assert_eq!(args.field_or_else::<u8>("b", || 9).unwrap(), 2);
        assert_eq!(args.field_or_else::<u8>("z", || 9).unwrap(), 9);
        let err = args.field_or_else::<u8>("c", || 9).unwrap_err();
        assert!(err.to_string().contains("/c: invalid type"), "{err}");
        assert_eq!(args.field::<Option<u8>>("a").unwrap(), None);
        assert!(args.field::<u8>("a").is_err());
    }
}
