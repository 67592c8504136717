//! Running blocking work (file I/O) without stalling an async executor.

use std::fmt;

/// Runs `work` on Tokio's blocking pool when a Tokio runtime is current, inline otherwise (a
/// plain executor, a test with `block_on`). A panic in `work` is resumed in the caller, so a
/// [`ToolCallManager`](toolsmith_core::ToolCallManager) still contains it.
///
/// Work the pool will not run (its runtime is shutting down, and the future was polled from
/// outside it) is `Err(cancelled(..))`: the caller turns it into its own error, as an I/O
/// failure, rather than the process seeing a panic.
pub(crate) async fn run_blocking<R, E, F>(
    work: F,
    cancelled: impl FnOnce(BlockingCancelled) -> E,
) -> Result<R, E>
where
    R: Send + 'static,
    E: Send + 'static,
    F: FnOnce() -> Result<R, E> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.spawn_blocking(work).await {
            Ok(result) => result,
            Err(err) => match err.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(_) => Err(cancelled(BlockingCancelled)),
            },
        },
        Err(_) => work(),
    }
}

/// Blocking work that never ran: its runtime's blocking pool was shutting down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockingCancelled;

impl fmt::Display for BlockingCancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not done: the Tokio runtime is shutting down")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_after_its_runtime_shut_down_is_an_error_not_a_panic() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let handle = runtime.handle().clone();
        runtime.shutdown_background();
        let _entered = handle.enter();
        let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&ran);
        let result: Result<(), String> = futures::executor::block_on(run_blocking(
            move || {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            },
            |cancelled| format!("cancelled: {cancelled}"),
        ));
        assert_eq!(
            result,
            Err("cancelled: not done: the Tokio runtime is shutting down".to_owned())
        );
        assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[test]
    fn work_without_a_runtime_runs_inline() {
        let result: Result<u32, String> =
            futures::executor::block_on(run_blocking(|| Ok(7), |_| "cancelled".to_owned()));
        assert_eq!(result, Ok(7));
    }

    #[tokio::test]
    async fn a_panic_in_the_work_reaches_the_caller() {
        let outcome =
            futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(run_blocking::<
                (),
                String,
                _,
            >(
                || panic!("boom"),
                |_| "cancelled".to_owned(),
            )))
            .await;
        let payload = outcome.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    }
}
