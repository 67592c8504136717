//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod binary;
pub mod deep;
pub mod json_calls;
pub mod probe;
pub mod provider_tools;
pub mod registered;
pub mod strict_rules;

#[allow(unused_imports)]
pub use probe::*;
