//! A `#[tool_fn]` tool's first poll (`ToolImpl::start_call`): the manager starts an `async`
//! call and polls it once in the tool, which polls its function's future by a static call;
//! the result of a call that finished there, and the future of one that suspended (with its
//! conversion), must be what the call gives through `execute_lent` or a batch.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Waker};

use serde_json::{Value, json};
use toolsmith::{
    CallStart, ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult, ToolError,
    ToolErrorKind, ToolImpl, tool_fn,
};

/// An error a tool returns, shown by its `Display`.
#[derive(Debug)]
struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused: {}", self.0)
    }
}

/// Waits `rounds` times (each a wake-up and a `Pending`), then doubles `n`, refusing a
/// negative one.
#[tool_fn]
async fn wait_then_double(n: i64, rounds: u32) -> Result<i64, Refused> {
    for _ in 0..rounds {
        tokio::task::yield_now().await;
    }
    if n < 0 {
        return Err(Refused(format!("{n} is negative")));
    }
    Ok(n * 2)
}

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Panics before or after waiting once.
#[tool_fn]
async fn panic_at(after_wait: bool) -> String {
    PANICS.fetch_add(1, Ordering::SeqCst);
    if after_wait {
        tokio::task::yield_now().await;
    }
    panic!(
        "at {}",
        if after_wait {
            "the second poll"
        } else {
            "the first poll"
        }
    )
}

/// A counter with commands that wait and one that does not.
#[derive(Default)]
struct Counter(AtomicUsize);

/// Counts.
#[tool_fn(name = "counter")]
impl Counter {
    /// Adds `by` after waiting once, and returns the count.
    async fn bump(&self, by: usize) -> usize {
        tokio::task::yield_now().await;
        self.0.fetch_add(by, Ordering::SeqCst) + by
    }

    /// The count, at once.
    fn read(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

fn arguments(value: Value) -> ToolArguments {
    ToolArguments::try_from(value).expect("an object")
}

fn shown(result: Result<ToolCallResult, ToolError>) -> String {
    match result {
        Ok(result) => format!("ok {}", result.content.to_text()),
        Err(err) => format!("err {err}"),
    }
}

/// The call started with a first poll: its result, whether it finished on that poll, and
/// the result of the future left when it did not (awaited).
async fn started(tool: &dyn ToolImpl, arguments: &ToolArguments) -> (bool, String) {
    let mut cx = Context::from_waker(Waker::noop());
    match tool.start_call(arguments, Some(&mut cx)) {
        CallStart::Finished(result) => (true, shown(result)),
        CallStart::Running(future) => (false, shown(future.await)),
    }
}

#[tokio::test]
async fn a_first_poll_answers_as_the_lent_future_does() {
    let counter = Counter::default();
    // (tool, arguments, finishes on its first poll, answer)
    let cases: [(&dyn ToolImpl, Value, bool, &str); 8] = [
        (
            &WaitThenDouble,
            json!({"n": 21, "rounds": 0}),
            true,
            "ok 42",
        ),
        (
            &WaitThenDouble,
            json!({"n": 21, "rounds": 2}),
            false,
            "ok 42",
        ),
        (
            &WaitThenDouble,
            json!({"n": -1, "rounds": 0}),
            true,
            "err Tool 'wait_then_double' failed: refused: -1 is negative",
        ),
        // The conversion of an error after the future suspended: written as it suspended.
        (
            &WaitThenDouble,
            json!({"n": -1, "rounds": 3}),
            false,
            "err Tool 'wait_then_double' failed: refused: -1 is negative",
        ),
        // Arguments that cannot be read: finished without a future.
        (
            &WaitThenDouble,
            json!({"n": "many", "rounds": 0}),
            true,
            "err Invalid arguments for tool 'wait_then_double': /n: invalid type: string \
             \"many\", expected i64",
        ),
        (&counter, json!({"command": "bump", "by": 2}), false, "ok 2"),
        // A group's synchronous command (after the two bumps above), and an unknown one,
        // finish at once.
        (&counter, json!({"command": "read"}), true, "ok 4"),
        (
            &counter,
            json!({"command": "reset"}),
            true,
            "err Invalid arguments for tool 'counter': /command: unknown command \"reset\"; \
             valid commands are 'bump', 'read'",
        ),
    ];
    for (tool, value, at_once, expected) in cases {
        let arguments = arguments(value);
        let name = tool.definition().name().to_owned();
        assert_eq!(
            started(tool, &arguments).await,
            (at_once, expected.to_owned()),
            "{name} {arguments:?}"
        );
        // Through `execute_lent` (the batch path and time limits): the same answer. The
        // counter's `bump` counts again, so its count is read back rather than compared.
        let lent = shown(tool.execute_lent(&arguments).await);
        if arguments.get("command") == Some(&json!("bump")) {
            assert_eq!(lent, "ok 4");
        } else {
            assert_eq!(lent, expected, "{name} lent");
        }
    }
}

#[tokio::test]
async fn execute_one_and_batches_run_first_polls_to_their_end() {
    let manager = ToolCallManager::new("first-poll");
    manager.register(Arc::new(WaitThenDouble)).unwrap();
    manager.register(Arc::new(PanicAt)).unwrap();
    manager.register(Arc::new(Counter::default())).unwrap();
    let request =
        |id: &str, name: &str, value: Value| ToolCallRequest::new(id, name, arguments(value));

    for rounds in [0, 1, 5] {
        let call = request("1", "wait_then_double", json!({"n": 4, "rounds": rounds}));
        assert_eq!(shown(manager.execute_one(&call).await), "ok 8");
    }
    let refused = request("1", "wait_then_double", json!({"n": -4, "rounds": 1}));
    let err = manager.execute_one(&refused).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Execution);
    assert_eq!(
        err.to_string(),
        "Tool 'wait_then_double' failed: refused: -4 is negative"
    );

    // A panic in the first poll, or in a later one, is the call's error, and the tool runs
    // once each time.
    let before = PANICS.load(Ordering::SeqCst);
    for (after_wait, poll) in [(false, "the first poll"), (true, "the second poll")] {
        let call = request("2", "panic_at", json!({"after_wait": after_wait}));
        let err = manager.execute_one(&call).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::execution("panic_at", format!("panicked: at {poll}"))
        );
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), before + 2);
    // The thread's blocks are in order after those panics: calls go on as before.
    let call = request("3", "wait_then_double", json!({"n": 5, "rounds": 0}));
    assert_eq!(shown(manager.execute_one(&call).await), "ok 10");

    // A batch starts calls through `execute_lent`: the same answers.
    let batch = [
        request("a", "wait_then_double", json!({"n": 1, "rounds": 0})),
        request("b", "wait_then_double", json!({"n": 2, "rounds": 2})),
        request("c", "counter", json!({"command": "bump", "by": 3})),
        request("d", "panic_at", json!({"after_wait": false})),
    ];
    let outcomes = manager.execute_batch(&batch).await;
    let answers: Vec<String> = outcomes
        .into_iter()
        .map(|outcome| shown(outcome.result))
        .collect();
    assert_eq!(
        answers,
        [
            "ok 2",
            "ok 4",
            "ok 3",
            "err Tool 'panic_at' failed: panicked: at the first poll"
        ]
    );
}

#[tokio::test]
async fn a_suspended_first_poll_is_woken_by_its_own_task() {
    // The future left by a first poll in a no-op context is polled next in the task that
    // runs the call, whose waker it registers then: awaiting it finishes.
    let arguments = arguments(json!({"n": 3, "rounds": 1}));
    let mut cx = Context::from_waker(Waker::noop());
    let CallStart::Running(mut future) = WaitThenDouble.start_call(&arguments, Some(&mut cx))
    else {
        panic!("the tool waits once");
    };
    let result = std::future::poll_fn(|cx| future.as_mut().poll(cx)).await;
    assert_eq!(shown(result), "ok 6");
    // Unpolled without a first poll.
    let unpolled = WaitThenDouble.start_call(&arguments, None);
    assert!(matches!(unpolled, CallStart::Running(_)));
    assert_eq!(shown(unpolled.into_future().await), "ok 6");
    assert!(matches!(
        WaitThenDouble.start_call(&arguments, Some(&mut cx)),
        CallStart::Running(_)
    ));
}
