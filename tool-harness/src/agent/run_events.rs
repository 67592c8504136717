//! [`RunEvents`]: one run's [`AgentEvent`]s as a stream, apart from every other run of the
//! session.
//!
//! A session's [`AgentEventHandler`](super::AgentEventHandler)s hear every run of the
//! session, interleaved: a server that shares one session among its users could not tell
//! whose run an event is. [`AgentSession::events_of`] wraps one run's future; while the
//! wrapper polls it, it offers a channel on this thread, and the first run of that session
//! to start there takes it. Nothing else can: a run started later, or inside one of the
//! run's tool calls (an `AgentTool`'s sub-agent), or by another session, finds the offer
//! taken or not meant for it. A sub-agent's events still come to the stream of the run whose
//! call made or started it, as [`AgentEvent::SubAgent`], through the run's ledger (the link
//! its tokens count by), while that run lasts.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::AgentSession;
use super::events::AgentEvent;

thread_local! {
    /// The stream a [`RunEvents`] offers while it polls its run on this thread, until a run
    /// of its session takes it.
    static OFFERED: RefCell<Option<Offer>> = const { RefCell::new(None) };
}

/// A stream offered to the runs of one session.
struct Offer {
    /// The session's address: only its runs take the offer.
    session: usize,
    sender: EventStream,
}

/// Where one run's events go besides the session's handlers: the channel of the
/// [`RunEvents`] that started it.
#[derive(Debug, Clone)]
pub(crate) struct EventStream(UnboundedSender<AgentEvent>);

impl EventStream {
    /// The stream a [`RunEvents`] polling on this thread offers `session`'s runs, taken: so
    /// one run has it, the first of the session to start under the wrapper.
    pub(crate) fn claim(session: &AgentSession) -> Option<Self> {
        OFFERED.with(|offered| {
            let mut offered = offered.borrow_mut();
            match &*offered {
                Some(offer) if offer.session == address(session) => {
                    offered.take().map(|offer| offer.sender)
                }
                _ => None,
            }
        })
    }

    /// Sends `event` to the stream; a stream no longer read (its wrapper dropped or
    /// finishing) drops it.
    pub(crate) fn send(&self, event: AgentEvent) {
        let _ = self.0.send(event);
    }
}

fn address(session: &AgentSession) -> usize {
    std::ptr::from_ref(session) as usize
}

/// One run's events as a [`Stream`] (or one by one with [`next`](Self::next)), then its
/// outcome by [`finish`](Self::finish): made by [`AgentSession::events_of`].
///
/// The run is polled by this stream, as any future is by its caller: it goes on while the
/// stream is read (or `finish` awaited) and waits, its tool calls with it, while nobody
/// reads; so the events never pile up unread (what a tool spawned on a task of its own
/// reports as progress meanwhile still queues, as do the events of a background sub-agent,
/// which runs on a task of its own, until the run ends). Dropped before the run ends, it drops the
/// run, as a dropped `send` is: the run stops and its calls are dropped.
///
/// The stream ends when the run has ended and every event it sent has been read; the
/// session's handlers hear the same events as ever.
#[must_use = "a run's events do nothing unless read, or the run awaited with `finish`"]
pub struct RunEvents<F: Future> {
    /// The run, until it has ended.
    run: Option<Pin<Box<F>>>,
    /// The stream offered to it, until it takes it.
    offer: Option<Offer>,
    receiver: UnboundedReceiver<AgentEvent>,
    /// The run's outcome, once it has ended, until [`finish`](Self::finish) takes it.
    output: Option<F::Output>,
}

// No field is pinned in place: the run is boxed, the outcome only moved.
impl<F: Future> Unpin for RunEvents<F> {}

impl<F: Future> std::fmt::Debug for RunEvents<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEvents")
            .field("running", &self.run.is_some())
            .field("started", &self.offer.is_none())
            .field("queued", &self.receiver.len())
            .finish_non_exhaustive()
    }
}

impl AgentSession {
    /// The events of one run of this session, as a stream of its own: `run` is a future of
    /// this session's (`session.send(..)`, `run_with_cancellation(..)`, `send_as::<T>(..)`,
    /// any of them), and the stream has the events of that run alone, however many other
    /// runs of the session go on at once. The events are the ones the session's
    /// [`AgentEventHandler`](super::AgentEventHandler)s get, which still get them; await
    /// [`RunEvents::finish`] for the run's outcome.
    ///
    /// The run that takes the stream is the first of this session that `run` starts (a
    /// future that starts none has an empty stream); the runs its tool calls make or start
    /// (an [`AgentTool`](super::AgentTool)'s sub-agent, the `agent` group's children) do not
    /// take it, but their events come to it, each wrapped as [`AgentEvent::SubAgent`], until
    /// the run ends (a typed run's, `send_as`'s, once its answer's exchange has): a
    /// background child's later events reach the session's handlers only.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::{ToolShed, tool_fn};
    /// use toolsmith::harness::agent::{AgentEvent, AgentSession};
    /// use toolsmith::harness::model::{ScriptedModel, ScriptedTurn};
    ///
    /// /// Add two integers.
    /// #[tool_fn]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     ScriptedTurn::call("shed", json!({"description": "add numbers"})),
    ///     ScriptedTurn::call("add", json!({"a": 2, "b": 3})),
    ///     ScriptedTurn::text("5"),
    /// ]);
    /// let session = AgentSession::builder(model)
    ///     .with_model("scripted")
    ///     .with_toolshed(ToolShed::new().tool(Add))
    ///     .build()
    ///     .unwrap();
    /// let mut events = session.events_of(session.send("What is 2 + 3?"));
    /// let mut finished = Vec::new();
    /// while let Some(event) = events.next().await {
    ///     if let AgentEvent::ToolCallFinished { name, summary, .. } = event {
    ///         finished.push(format!("{name}: {summary}"));
    ///     }
    /// }
    /// let run = events.finish().await.unwrap();
    /// assert_eq!(run.text, "5");
    /// assert_eq!(finished[1], "add: 5");
    /// # }
    /// ```
    pub fn events_of<F: Future>(&self, run: F) -> RunEvents<F> {
        let (sender, receiver) = unbounded_channel();
        RunEvents {
            run: Some(Box::pin(run)),
            offer: Some(Offer {
                session: address(self),
                sender: EventStream(sender),
            }),
            receiver,
            output: None,
        }
    }
}

impl<F: Future> RunEvents<F> {
    /// The run's outcome, once it has ended: awaits the rest of the run, the events not read
    /// by then left unread.
    pub async fn finish(mut self) -> F::Output {
        // Not read any more: the rest of the run's events are dropped as they are sent.
        self.receiver.close();
        std::future::poll_fn(|cx| self.poll_run(cx)).await;
        self.output
            .take()
            .expect("a run that ended left its outcome")
    }

    /// Polls the run, the stream offered to it meanwhile on this thread (the offer of a
    /// wrapper polled inside this one's run put back after); ready once it has ended.
    fn poll_run(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(run) = &mut self.run else {
            return Poll::Ready(());
        };
        let offered = Offered::put(self.offer.take());
        let polled = run.as_mut().poll(cx);
        self.offer = offered.withdraw();
        match polled {
            Poll::Ready(output) => {
                self.output = Some(output);
                self.run = None;
                // A run that never took the stream leaves nothing to offer.
                self.offer = None;
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// This wrapper's offer on the thread while its run is polled, the offer found there (a
/// wrapper's whose run polls this one) put back after: by [`withdraw`](Self::withdraw), or
/// on drop when the poll panics, so that no offer outlives its poll there, for an unrelated
/// run polled later on the thread (a tokio worker goes on after a task's panic) to take.
struct Offered {
    /// The offer found on the thread, until it is put back.
    outer: Option<Option<Offer>>,
}

impl Offered {
    /// `offer` put on the thread for the length of a poll.
    fn put(offer: Option<Offer>) -> Self {
        Self {
            outer: Some(OFFERED.with(|offered| offered.replace(offer))),
        }
    }

    /// The offer found on the thread put back; this wrapper's given back, unless a run took
    /// it.
    fn withdraw(mut self) -> Option<Offer> {
        let outer = self.outer.take().flatten();
        OFFERED.with(|offered| offered.replace(outer))
    }
}

impl Drop for Offered {
    fn drop(&mut self) {
        if let Some(outer) = self.outer.take() {
            // Unwinding: this wrapper's offer, if still there, goes with its run. A thread
            // tearing down its locals has no offer left to restore.
            let _ = OFFERED.try_with(|offered| offered.replace(outer));
        }
    }
}

impl<F: Future> RunEvents<F> {
    /// The run's next event, or `None` once the run has ended and every event was read
    /// (then [`finish`](Self::finish) gives the outcome at once). The same as the
    /// [`Stream`]'s `next`, without importing a stream extension trait.
    pub async fn next(&mut self) -> Option<AgentEvent> {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        // Events sent already come first; polling the receiver also wakes this task for a
        // tool's progress sent from another task.
        if let Poll::Ready(Some(event)) = self.receiver.poll_recv(cx) {
            return Poll::Ready(Some(event));
        }
        let ended = self.poll_run(cx).is_ready();
        match self.receiver.try_recv() {
            Ok(event) => Poll::Ready(Some(event)),
            Err(_) if ended => Poll::Ready(None),
            Err(_) => Poll::Pending,
        }
    }
}

impl<F: Future> Stream for RunEvents<F> {
    type Item = AgentEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.get_mut().poll_event(cx)
    }
}
