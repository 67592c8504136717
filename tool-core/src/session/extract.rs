//! [`FromSessionParts`]: how a `#[ctx]` parameter gets its value from the session, in the
//! spirit of axum's extractors: the parameter's type decides what it takes.

use std::sync::Arc;

use crate::{ContextSearch, Embedder, MemoryAccess, SessionParts};

/// A value a tool takes from its session's parts when the session is built.
///
/// Implemented for [`SessionParts`] itself, its parts (`Arc<dyn ContextSearch>`,
/// `Arc<dyn MemoryAccess>`, `Option<Arc<dyn Embedder>>`), and [`State<T>`] for user values
/// added to the shed. Implement it for your own types to extract something derived.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be taken from the session",
    label = "this `#[ctx]` parameter's type does not implement `FromSessionParts`",
    note = "a `#[ctx]` parameter is one of `SessionParts`, `Arc<dyn ContextSearch>`, `Arc<dyn MemoryAccess>`, `Option<Arc<dyn Embedder>>`, `State<T>`, or a type that implements `FromSessionParts`"
)]
pub trait FromSessionParts: Sized + Send + Sync + 'static {
    /// Takes the value from the parts; the error says what was missing.
    fn from_session_parts(parts: &SessionParts) -> Result<Self, String>;
}

impl FromSessionParts for SessionParts {
    fn from_session_parts(parts: &SessionParts) -> Result<Self, String> {
        Ok(parts.clone())
    }
}

impl FromSessionParts for Arc<dyn ContextSearch> {
    fn from_session_parts(parts: &SessionParts) -> Result<Self, String> {
        Ok(Arc::clone(&parts.context))
    }
}

impl FromSessionParts for Arc<dyn MemoryAccess> {
    fn from_session_parts(parts: &SessionParts) -> Result<Self, String> {
        Ok(Arc::clone(&parts.memory))
    }
}

impl FromSessionParts for Option<Arc<dyn Embedder>> {
    fn from_session_parts(parts: &SessionParts) -> Result<Self, String> {
        Ok(parts.embedder.clone())
    }
}

/// A user value registered on the shed (`ToolShed::with_state`), extracted by its type.
#[derive(Debug)]
pub struct State<T>(pub Arc<T>);

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> std::ops::Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Send + Sync + 'static> FromSessionParts for State<T> {
    fn from_session_parts(parts: &SessionParts) -> Result<Self, String> {
        parts.state.get::<T>().map(State).ok_or_else(|| {
            format!(
                "no state of type `{}` was added to the shed (use `ToolShed::with_state`)",
                std::any::type_name::<T>()
            )
        })
    }
}
