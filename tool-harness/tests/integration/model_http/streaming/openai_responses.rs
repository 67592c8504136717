//! Streaming through the openai_responses client: to be written.
