//! Running blocking work (file I/O) without stalling an async executor.

/// Runs `work` on Tokio's blocking pool when a Tokio runtime is current, inline otherwise (a
/// plain executor, a test with `block_on`). A panic in `work` is resumed in the caller, so a
/// [`ToolCallManager`](toolsmith_core::ToolCallManager) still contains it.
pub(crate) async fn run_blocking<T, F>(work: F) -> T
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.spawn_blocking(work).await {
            Ok(value) => value,
            Err(err) => match err.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(err) => panic!("blocking file work was cancelled: {err}"),
            },
        },
        Err(_) => work(),
    }
}
