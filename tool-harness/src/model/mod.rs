//! Models: the [`ChatModel`] trait every client implements, the provider-neutral
//! [`ChatRequest`] and [`ChatResponse`], the conversation's [`Message`]s, and
//! [`ScriptedModel`] for tests; [`FallbackModel`] asks the next model when one is down. Clients of the OpenAI, Anthropic and Gemini APIs are in
//! `model::http` (feature `http-models`, on by default).

mod chat_model;
mod fallback;
#[cfg(feature = "http-models")]
pub mod http;
mod image_limits;
mod image_places;
mod message;
mod request;
mod response;
mod scripted;

pub(crate) use chat_model::DebugName;
pub use chat_model::{ChatModel, ModelError, StreamDelta};
pub use fallback::{FallbackModel, FallbackPrimary};
pub use image_limits::ImageLimits;
pub(crate) use image_places::{ImagePlace, image_places, replace_image};
pub use message::{Message, ModelCall, ProviderTurn, ToolResultMessage};
pub use request::{ChatOptions, ChatRequest, ToolChoice};
pub use response::{ChatResponse, Usage};
pub use scripted::{ScriptedModel, ScriptedTurn};
/// Why the model stopped writing (the provider formats read it: `toolsmith_core::provider`).
pub use toolsmith_core::provider::StopReason;
