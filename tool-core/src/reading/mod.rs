//! Reading a call's arguments into Rust values: [`ToolArgs`](crate::ToolArgs) by name, one field
//! at a time for generated code, and [`lenient`] conversions that accept the spellings models use.

pub(crate) mod arg_field;
pub(crate) mod blank;
pub mod lenient;
mod struct_fields;
pub(crate) mod tool_args;
pub(crate) mod whole_floats;
