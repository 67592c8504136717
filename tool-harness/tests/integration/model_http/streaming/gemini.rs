//! Streaming through the gemini client: to be written.
