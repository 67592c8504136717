//! [`spelled`]: how code the user wrote is quoted in a message.

use quote::ToTokens;

/// `tokens` as written, for a message: without the spaces printing tokens puts between them
/// (`Vec<u8>`, not `Vec < u8 >`; `serde::Deserialize`, not `serde :: Deserialize`).
pub fn spelled(tokens: &impl ToTokens) -> String {
    tokens.to_token_stream().to_string().replace(' ', "")
}
