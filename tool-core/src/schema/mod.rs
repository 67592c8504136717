//! Schemas and validation: JSON Schemas from Rust types ([`type_schema`](crate::type_schema)),
//! the [`scheme`] builder for hand-written ones, argument schemas checked at registration,
//! compiled on a tool's first call and checked before every call, and result schemas.

pub(crate) mod f32_range;
pub(crate) mod first_use;
pub(crate) mod flat_schema;
pub(crate) mod returns;
pub mod scheme;
pub(crate) mod subschemas;
pub(crate) mod type_schema;
pub(crate) mod validation;
