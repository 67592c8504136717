//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod provider_tools;
pub mod strict_rules;
