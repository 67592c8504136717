//! [`log_records`]: the `log` records a test's thread emits, as lines to assert on.

use std::cell::RefCell;
use std::sync::Once;

thread_local! {
    /// The records of this thread, while it collects them.
    static COLLECTED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// The process's logger (`log` takes one per process): it keeps the records of the threads
/// that collect them and drops the others'.
struct ThreadLogger;

impl log::Log for ThreadLogger {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        COLLECTED.with(|collected| {
            if let Some(lines) = collected.borrow_mut().as_mut() {
                lines.push(format!(
                    "{} {}: {}",
                    record.level(),
                    record.target(),
                    record.args()
                ));
            }
        });
    }

    fn flush(&self) {}
}

/// Runs `run` to its end on this thread (a `#[tokio::test]`'s runtime is this thread) and
/// gives its output with the `log` records of every level this thread emitted meanwhile.
pub async fn log_records<T>(run: impl std::future::Future<Output = T>) -> (T, Vec<String>) {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Another logger installed first would keep these records: the test would see none.
        log::set_logger(&ThreadLogger).expect("no other logger in the test process");
        log::set_max_level(log::LevelFilter::Trace);
    });
    COLLECTED.with(|collected| *collected.borrow_mut() = Some(Vec::new()));
    let output = run.await;
    let lines = COLLECTED.with(|collected| collected.borrow_mut().take().unwrap_or_default());
    (output, lines)
}
