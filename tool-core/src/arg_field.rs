//! Reading one argument by name into a typed value: what `#[derive(ToolArgs)]` and
//! `#[tool_fn]` read every field and parameter with.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{ToolArgs, ToolError, lenient};

impl ToolArgs<'_> {
    /// The argument `name` read leniently into `T`; an absent (or `null`) argument reads as
    /// `T` from `null`, which is `None` for an `Option` and an error naming the argument
    /// otherwise.
    ///
    /// ```
    /// use toolsmith_core::{ToolArgs, ToolArguments};
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
        match self.opt_get(name)? {
            Some(value) => Ok(value),
            None => lenient::from_value(&Value::Null).map_err(|_| {
                ToolError::invalid_arguments(
                    self.tool(),
                    format!("missing required argument '{name}'"),
                )
            }),
        }
    }

    /// The argument `name` read leniently into `T`, or `default()` when it is absent or
    /// `null`.
    pub fn field_or_else<T: DeserializeOwned>(
        &self,
        name: &str,
        default: impl FnOnce() -> T,
    ) -> Result<T, ToolError> {
        Ok(self.opt_get(name)?.unwrap_or_else(default))
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
