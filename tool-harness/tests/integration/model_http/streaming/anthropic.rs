//! Streaming through the anthropic client: to be written.
