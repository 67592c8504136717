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
///
/// The type must be the one given: `with_state(Arc::new(value))` adds an `Arc<T>`, read as
/// `State<Arc<T>>`, not as `State<T>`. `State` holds its value in an `Arc` already, so
/// `with_state(value)` is enough to share it.
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
            let name = std::any::type_name::<T>();
            let mut reason = format!(
                "no state of type `{name}` was added to the shed (use `ToolShed::with_state`)"
            );
            // `with_state(Arc::new(value))` keeps an `Arc<T>`, a type of its own: the likely
            // slip of a caller who did use `with_state`, and told only to use it.
            if parts.state.get::<Arc<T>>().is_some() {
                reason.push_str(&format!(
                    ": an `Arc<{name}>` was, which `State<{name}>` does not read; give \
                     `with_state` the value itself (`State` shares it), or take \
                     `State<Arc<{name}>>`"
                ));
            }
            reason
        })
    }
}
