//! [`ToolRetryConfig`]: when and how often a failed call is tried again (spec 01 §6, spec 02's
//! retry policy), and [`ToolCallManager::execute_with_retry`], the retry loop around a call.

use std::borrow::Cow;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::batch::DropContained;
use crate::manager::RegisteredTool;
use crate::tool::call_annotations::call_annotations;
use crate::tool::error::{drop_panic_payload, panic_message, panicked_with};
use crate::{
    SHED_TOOL_NAME, ToolAnnotations, ToolArguments, ToolCallManager, ToolCallOutcome,
    ToolCallRequest, ToolCallResult, ToolError, ToolErrorKind,
};

/// How the wait before a retry is randomised, so that many clients failing together do not
/// retry together.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Jitter {
    /// Wait exactly the computed backoff.
    None,
    /// "Full jitter": wait a uniformly random time between zero and the computed backoff.
    #[default]
    Full,
    /// Full jitter drawn from a generator seeded with this value at the start of every call,
    /// so the schedule is reproducible (tests, simulations).
    FullSeeded(u64),
    /// A function from the computed backoff to the wait. Should it panic, the call waits
    /// the computed backoff instead, for this retry and its later ones (the panic is logged):
    /// a randomisation that fails costs the call neither its retries nor its outcome.
    Custom(Arc<dyn Fn(Duration) -> Duration + Send + Sync>),
}

impl fmt::Debug for Jitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Full => f.write_str("Full"),
            Self::FullSeeded(seed) => f.debug_tuple("FullSeeded").field(seed).finish(),
            Self::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

impl PartialEq for Jitter {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::None, Self::None) | (Self::Full, Self::Full) => true,
            (Self::FullSeeded(a), Self::FullSeeded(b)) => a == b,
            (Self::Custom(a), Self::Custom(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// The random state of one call's retry loop.
enum JitterState<'a> {
    Fixed,
    ThreadRandom,
    Seeded(fastrand::Rng),
    Custom(&'a (dyn Fn(Duration) -> Duration + Send + Sync)),
}

impl<'a> JitterState<'a> {
    fn new(jitter: &'a Jitter) -> Self {
        match jitter {
            Jitter::None => Self::Fixed,
            Jitter::Full => Self::ThreadRandom,
            Jitter::FullSeeded(seed) => Self::Seeded(fastrand::Rng::with_seed(*seed)),
            Jitter::Custom(function) => Self::Custom(function.as_ref()),
        }
    }

    /// The wait before a retry of `tool` whose computed backoff is `backoff`.
    fn apply(&mut self, backoff: Duration, tool: &str) -> Duration {
        let nanos = u64::try_from(backoff.as_nanos()).unwrap_or(u64::MAX);
        match self {
            Self::Fixed => backoff,
            Self::ThreadRandom => Duration::from_nanos(fastrand::u64(0..=nanos)),
            Self::Seeded(rng) => Duration::from_nanos(rng.u64(0..=nanos)),
            Self::Custom(function) => {
                // A panic here would unwind through the retry loop into the batch's caller,
                // losing every outcome; the backoff is the wait the config bounds anyway.
                match std::panic::catch_unwind(AssertUnwindSafe(|| function(backoff))) {
                    Ok(wait) => wait,
                    Err(panic) => {
                        tracing::error!(
                            tool,
                            panic = %panic_message(panic.as_ref()),
                            "a custom retry jitter panicked; this call's retries wait the \
                             backoff without jitter"
                        );
                        drop_panic_payload(panic);
                        *self = Self::Fixed;
                        backoff
                    }
                }
            }
        }
    }
}

/// When and how often a failed call is tried again.
///
/// The default is the spec's: up to 3 retries, waiting 1 s, then ×2 each time up to 30 s,
/// with full jitter, on [`Timeout`](ToolErrorKind::Timeout) and
/// [`Network`](ToolErrorKind::Network) errors. [`InvalidArguments`](ToolErrorKind::InvalidArguments),
/// [`UnknownTool`](ToolErrorKind::UnknownTool), [`NotActive`](ToolErrorKind::NotActive) and
/// [`Cancelled`](ToolErrorKind::Cancelled) are never retried: trying again cannot change them.
///
/// A manager applies a tool's config (set with
/// [`set_retry_config`](ToolCallManager::set_retry_config), else the tool's own
/// [`ToolImpl::retry_config`](crate::ToolImpl::retry_config)) whatever the tool's annotations
/// say; a tool without one is retried with the manager's default config only when it is
/// annotated read-only or idempotent, since running anything else twice may do its effect
/// twice.
///
/// A call takes its config as it starts, and keeps it for all its retries. A retry setting
/// changed while a batch runs reaches the batch's calls that have not started yet (those of
/// later stages, and those waiting for a slot), as a time limit set with
/// [`set_timeout`](ToolCallManager::set_timeout) does; a call already running, or waiting
/// between its retries, goes on with the config it started with.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::{Jitter, ToolError, ToolRetryConfig};
///
/// let config = ToolRetryConfig::exponential(3).with_jitter(Jitter::None);
/// let waits: Vec<Duration> = (0..4).map(|retry| config.backoff(retry)).collect();
/// assert_eq!(waits, [100, 200, 400, 800].map(Duration::from_millis));
///
/// // Only errors whose message contains a pattern are retried.
/// let config = ToolRetryConfig::fixed(2, Duration::from_secs(1))
///     .retryable_on(["503", "rate limit"]);
/// assert!(config.should_retry(&ToolError::execution("api", "HTTP 503")));
/// assert!(!config.should_retry(&ToolError::execution("api", "HTTP 404")));
/// assert!(!config.should_retry(&ToolError::invalid_arguments("api", "rate limit")));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRetryConfig {
    /// How many times a call is retried after its first attempt.
    pub max_retries: u32,
    /// The backoff before the first retry.
    pub initial_backoff: Duration,
    /// What each later backoff is multiplied by.
    pub backoff_multiplier: f64,
    /// The longest backoff.
    pub max_backoff: Duration,
    /// The error kinds retried when [`retryable_patterns`](Self::retryable_patterns) is empty.
    pub retry_on: Vec<ToolErrorKind>,
    /// When not empty, an error is retried exactly when what it says contains one of these
    /// (whatever its kind, except the kinds never retried): the reason of an execution or
    /// network error, `timeout` or `timed out` for a time limit; never the tool's name, which
    /// would match every error of a tool named like a pattern.
    pub retryable_patterns: Vec<String>,
    /// How backoffs are randomised.
    pub jitter: Jitter,
}

impl Default for ToolRetryConfig {
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial_backoff: Duration::from_secs(1),
            backoff_multiplier: 2.0,
            max_backoff: Duration::from_secs(30),
            retry_on: vec![ToolErrorKind::Timeout, ToolErrorKind::Network],
            retryable_patterns: Vec::new(),
            jitter: Jitter::Full,
        }
    }
}

impl ToolRetryConfig {
    /// Exponential backoff with `max_retries` retries: 100 ms, then ×2 each time up to 10 s
    /// (spec 02), on the default error kinds.
    #[must_use]
    pub fn exponential(max_retries: u32) -> Self {
        Self {
            max_retries,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(10),
            ..Self::default()
        }
    }

    /// `max_retries` retries, each after the same `delay` (jitter still applies; see
    /// [`with_jitter`](Self::with_jitter)).
    #[must_use]
    pub fn fixed(max_retries: u32, delay: Duration) -> Self {
        Self {
            max_retries,
            initial_backoff: delay,
            backoff_multiplier: 1.0,
            max_backoff: delay,
            ..Self::default()
        }
    }

    /// No retries at all.
    #[must_use]
    pub fn never() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// Retries only errors whose message contains one of `patterns` (replacing any given
    /// before); an empty list goes back to retrying by [`retry_on`](Self::retry_on). The
    /// message is what the error says beyond its tool's name (see
    /// [`retryable_patterns`](Self::retryable_patterns)).
    #[must_use]
    pub fn retryable_on<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.retryable_patterns = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Retries the given error kinds (when no message patterns are set).
    #[must_use]
    pub fn retry_on(mut self, kinds: impl IntoIterator<Item = ToolErrorKind>) -> Self {
        self.retry_on = kinds.into_iter().collect();
        self
    }

    /// Sets how backoffs are randomised.
    #[must_use]
    pub fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// Whether `error` is worth another attempt under this config (retries left aside).
    pub fn should_retry(&self, error: &ToolError) -> bool {
        let kind = error.kind();
        if matches!(
            kind,
            ToolErrorKind::InvalidArguments
                | ToolErrorKind::UnknownTool
                | ToolErrorKind::NotActive
                | ToolErrorKind::Cancelled
        ) {
            return false;
        }
        if self.retryable_patterns.is_empty() {
            return self.retry_on.contains(&kind);
        }
        let message = match error {
            ToolError::Execution { reason, .. } | ToolError::Network { reason, .. } => {
                reason.as_str()
            }
            // Either word names a time limit: the spec's own patterns say `timeout`, the
            // error says `timed out`.
            ToolError::Timeout { .. } => {
                return ["timeout", "timed out"]
                    .into_iter()
                    .any(|text| self.matches_patterns(text));
            }
            // The kinds never retried, returned above; a kind to come is matched whole.
            _ => return self.matches_patterns(&error.to_string()),
        };
        self.matches_patterns(message)
    }

    /// Whether `message` contains one of the patterns.
    fn matches_patterns(&self, message: &str) -> bool {
        self.retryable_patterns
            .iter()
            .any(|pattern| message.contains(pattern.as_str()))
    }

    /// The backoff before retry number `retry` (0 for the first), before jitter:
    /// `initial_backoff × backoff_multiplier^retry`, at most `max_backoff`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponent = i32::try_from(retry).unwrap_or(i32::MAX);
        let seconds = self.initial_backoff.as_secs_f64() * self.backoff_multiplier.powi(exponent);
        // Overflow and NaN end at the cap, negative factors at zero, rather than a panic.
        if seconds.is_nan() {
            return self.max_backoff;
        }
        match Duration::try_from_secs_f64(seconds.max(0.0)) {
            Ok(backoff) => backoff.min(self.max_backoff),
            Err(_) => self.max_backoff,
        }
    }
}

/// A call that passed lookup and validation, ready to be attempted.
pub(crate) struct PreparedCall {
    target: CallTarget,
    arguments: ToolArguments,
    policy: Option<Arc<ToolRetryConfig>>,
    /// The annotations of the command called.
    pub(crate) annotations: ToolAnnotations,
}

/// What a prepared call runs.
enum CallTarget {
    /// A registered tool.
    Tool(Arc<RegisteredTool>),
    /// The built-in `shed` meta-tool, which every call path runs (its activations apply from
    /// the model's next request on).
    Shed,
}

impl PreparedCall {
    /// The retry loop: counts each run of the tool in `attempts` as it starts, so a caller
    /// that drops this future midway still knows how many runs there were. No retry is made
    /// that could start only at or after `deadline` (a batch's): the call ends with its error.
    pub(crate) async fn run(
        self,
        manager: &ToolCallManager,
        request: &ToolCallRequest,
        attempts: &AtomicU32,
        deadline: Option<Instant>,
    ) -> Result<ToolCallResult, ToolError> {
        let Self {
            target,
            arguments,
            policy,
            ..
        } = self;
        let name = request.name.as_str();
        let entry = match target {
            CallTarget::Tool(entry) => entry,
            CallTarget::Shed => {
                attempts.fetch_add(1, Ordering::Relaxed);
                // Boxed: the meta-tool's search state would otherwise grow every call's future.
                return Box::pin(manager.execute_shed(&request.arguments)).await;
            }
        };
        let Some(policy) = policy.filter(|p| p.max_retries > 0) else {
            attempts.fetch_add(1, Ordering::Relaxed);
            return entry.run(name, Cow::Owned(arguments)).await;
        };
        let mut jitter = JitterState::new(&policy.jitter);
        let mut retry = 0;
        loop {
            attempts.fetch_add(1, Ordering::Relaxed);
            let last = retry == policy.max_retries;
            let error = match entry.run(name, Cow::Borrowed(&arguments)).await {
                Ok(result) => return Ok(result),
                Err(error) if !last && policy.should_retry(&error) => error,
                Err(error) => return Err(error),
            };
            let wait = jitter.apply(policy.backoff(retry), name);
            // The batch would stop such a retry before it ran, and report its deadline
            // rather than the error the call ended in.
            if deadline.is_some_and(|at| Instant::now().checked_add(wait).is_none_or(|t| t >= at)) {
                return Err(error);
            }
            // The attempt that failed, by its number; the error's text may quote the call's
            // arguments, so only its kind.
            tracing::debug!(
                tool = name,
                attempt = retry + 1,
                error.type = error.kind().as_str(),
                ?wait,
                "a tool call failed; retrying it"
            );
            if wait.is_zero() {
                // Back to the executor between attempts all the same: a call whose attempts
                // fail at once would otherwise never let a batch's deadline or token (or a
                // caller's timeout) stop it.
                tokio::task::yield_now().await;
            } else {
                if tokio::runtime::Handle::try_current().is_err() {
                    return Err(error);
                }
                tokio::time::sleep(wait).await;
            }
            retry += 1;
        }
    }
}

impl ToolCallManager {
    /// Sets the retry config of the tool `name`, overriding the tool's own and its
    /// annotations, for as long as the tool is registered ([`deregister`](Self::deregister)
    /// drops it). Fails with [`ToolError::UnknownTool`] when no such tool is registered.
    ///
    /// Set while a batch runs, it reaches the calls that have not started yet; a call
    /// already running keeps the config it started with (see [`ToolRetryConfig`]).
    pub fn set_retry_config(&self, name: &str, config: ToolRetryConfig) -> Result<(), ToolError> {
        if self.set_registered_retry_config(name, config) {
            Ok(())
        } else {
            Err(ToolError::UnknownTool(name.to_owned()))
        }
    }

    /// Removes the retry config set for `name` with
    /// [`set_retry_config`](Self::set_retry_config), from the calls that have not started
    /// yet on (see [`ToolRetryConfig`]).
    pub fn clear_retry_config(&self, name: &str) {
        self.execution.set_retry_config(name, None);
    }

    /// The retry config of the tool `name`: the one set for it on the manager, else the
    /// tool's own, else the manager's [retry policy](Self::set_retry_policy). `None` means
    /// the tool is retried by the [default](Self::default_retry_config) config when its
    /// annotations say it is safe to, and not at all otherwise.
    pub fn retry_config(&self, name: &str) -> Option<ToolRetryConfig> {
        if let Some(config) = self.execution.retry_config(name) {
            return Some(ToolRetryConfig::clone(&config));
        }
        let tool = self.get(name)?;
        tool.retry_config().or_else(|| {
            self.execution
                .retry_policy()
                .map(|policy| ToolRetryConfig::clone(&policy))
        })
    }

    /// Sets the config used for read-only and idempotent tools that have none of their own,
    /// from the calls that have not started yet on (see [`ToolRetryConfig`]).
    pub fn set_default_retry_config(&self, config: ToolRetryConfig) {
        self.execution.set_default_retry(config);
    }

    /// The config used for read-only and idempotent tools that have none of their own
    /// (initially [`ToolRetryConfig::default`]).
    pub fn default_retry_config(&self) -> ToolRetryConfig {
        ToolRetryConfig::clone(&self.execution.default_retry())
    }

    /// Sets the config of every tool that has none of its own, whatever its annotations say,
    /// including tools registered later: an agent's retry policy
    /// (`AgentSession::builder(..).with_retry_policy(..)` sets it). A config set for one tool
    /// with [`set_retry_config`](Self::set_retry_config), or a tool's own
    /// ([`ToolImpl::retry_config`](crate::ToolImpl::retry_config), `#[tool_fn(retries = ..)]`),
    /// still takes precedence. `None` removes it: tools without a config of their own are
    /// then retried by the [default](Self::default_retry_config) config when their
    /// annotations say it is safe to. Set while a batch runs, it reaches the calls that have
    /// not started yet; a call already running keeps the config it started with.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult,
    ///     ToolRetryConfig, scheme};
    ///
    /// let manager = ToolCallManager::new("s");
    /// manager.set_retry_policy(Some(ToolRetryConfig::fixed(2, Duration::from_millis(10))));
    /// // Registered after the policy was set, and not annotated as safe to repeat.
    /// manager.register(Arc::new(FnTool::new("send", "Sends a message.",
    ///     Args::new(scheme::object().build()),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("sent")) }))).unwrap();
    /// assert_eq!(manager.retry_config("send").unwrap().max_retries, 2);
    ///
    /// manager.set_retry_policy(None);
    /// assert!(manager.retry_config("send").is_none());
    /// ```
    pub fn set_retry_policy(&self, policy: Option<ToolRetryConfig>) {
        self.execution.set_retry_policy(policy);
    }

    /// The config of every tool that has none of its own, if one was set with
    /// [`set_retry_policy`](Self::set_retry_policy).
    pub fn retry_policy(&self) -> Option<ToolRetryConfig> {
        self.execution
            .retry_policy()
            .map(|policy| ToolRetryConfig::clone(&policy))
    }

    /// Runs one call, retrying it as its retry config says, and reports how it went.
    ///
    /// Lookup and validation happen once: an unknown tool or invalid arguments end the call
    /// with no attempt. `attempts` counts the times the tool was run. Between attempts the
    /// call waits for the config's backoff with a Tokio timer; outside a Tokio runtime, a
    /// call is not retried after a non-zero backoff.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolArguments, ToolCallManager,
    ///     ToolCallRequest, ToolCallResult, ToolError, ToolRetryConfig, scheme};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let failures_left = Arc::new(AtomicU32::new(2));
    /// let manager = ToolCallManager::new("s");
    /// manager.register(Arc::new(FnTool::new("flaky", "Fails twice, then works.",
    ///     Args::new(scheme::object().build()),
    ///     move |_: ToolArgs<'_>| {
    ///         let failed = failures_left.fetch_update(Ordering::SeqCst, Ordering::SeqCst,
    ///             |n| n.checked_sub(1)).is_ok();
    ///         async move {
    ///             if failed { Err(ToolError::network("flaky", "connection reset")) }
    ///             else { Ok(ToolCallResult::text("ok")) }
    ///         }
    ///     }))).unwrap();
    /// manager.set_retry_config("flaky", ToolRetryConfig::exponential(3)).unwrap();
    ///
    /// let outcome = manager
    ///     .execute_with_retry(&ToolCallRequest::new("c1", "flaky", ToolArguments::new()))
    ///     .await;
    /// assert_eq!(outcome.attempts, 3);
    /// assert_eq!(outcome.result.unwrap().content.to_text(), "ok");
    /// # }
    /// ```
    pub async fn execute_with_retry(&self, request: &ToolCallRequest) -> ToolCallOutcome {
        let started = tokio::time::Instant::now();
        let attempts = AtomicU32::new(0);
        // A tool's future that panics as a caller giving up drops it stays inside the call.
        let call = Box::pin(self.run_with_retry(request, &attempts));
        let result = DropContained(Some(call)).await;
        ToolCallOutcome {
            id: request.id.clone(),
            name: request.name.clone(),
            result,
            attempts: attempts.load(Ordering::Relaxed),
            elapsed: started.elapsed(),
        }
    }

    /// The retry config that applies to a call of `entry` to a command with `annotations`.
    /// The tool's own [`retry_config`](crate::ToolImpl::retry_config) is its code, asked
    /// per call: a panic there is the call's execution error, as a panic while it runs is,
    /// rather than an unwind through the batch that loses every outcome.
    fn call_retry_config(
        &self,
        name: &str,
        entry: &RegisteredTool,
        annotations: ToolAnnotations,
    ) -> Result<Option<Arc<ToolRetryConfig>>, ToolError> {
        if let Some(config) = self.execution.retry_config(name) {
            return Ok(Some(config));
        }
        let tool = &*entry.tool;
        let own = std::panic::catch_unwind(AssertUnwindSafe(|| tool.retry_config()))
            .map_err(|payload| panicked_with(name, payload))?;
        if let Some(config) = own {
            return Ok(Some(Arc::new(config)));
        }
        if let Some(policy) = self.execution.retry_policy() {
            return Ok(Some(policy));
        }
        let safe_to_repeat =
            annotations.read_only == Some(true) || annotations.idempotent == Some(true);
        Ok(safe_to_repeat.then(|| self.execution.default_retry()))
    }

    /// Looks the tool up, validates the arguments and picks the retry config: everything a
    /// call needs before its first attempt.
    pub(crate) fn prepare_call(
        &self,
        request: &ToolCallRequest,
    ) -> Result<PreparedCall, ToolError> {
        if request.name == SHED_TOOL_NAME && !self.is_empty() {
            return Ok(PreparedCall {
                target: CallTarget::Shed,
                arguments: request.arguments.clone(),
                policy: None,
                annotations: ToolAnnotations::default(),
            });
        }
        let entry = self
            .entry(&request.name)
            .ok_or_else(|| ToolError::UnknownTool(request.name.clone()))?;
        let arguments = entry
            .check_arguments(&request.name, &request.arguments)?
            .into_owned();
        let annotations = call_annotations(&entry.definition, &arguments);
        let policy = self.call_retry_config(&request.name, &entry, annotations)?;
        Ok(PreparedCall {
            target: CallTarget::Tool(entry),
            arguments,
            policy,
            annotations,
        })
    }

    async fn run_with_retry(
        &self,
        request: &ToolCallRequest,
        attempts: &AtomicU32,
    ) -> Result<ToolCallResult, ToolError> {
        self.prepare_call(request)?
            .run(self, request, attempts, None)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_spec_defaults() {
        let config = ToolRetryConfig::default();
        assert_eq!(config.max_retries, 3);
        assert_eq!(config.initial_backoff, Duration::from_secs(1));
        assert_eq!(config.backoff_multiplier, 2.0);
        assert_eq!(config.max_backoff, Duration::from_secs(30));
        assert_eq!(
            config.retry_on,
            [ToolErrorKind::Timeout, ToolErrorKind::Network]
        );
        assert!(config.retryable_patterns.is_empty());
        assert_eq!(config.jitter, Jitter::Full);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let config = ToolRetryConfig::default();
        let waits: Vec<u64> = (0..7).map(|r| config.backoff(r).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(config.backoff(u32::MAX), Duration::from_secs(30));
        let fixed = ToolRetryConfig::fixed(2, Duration::from_millis(250));
        assert_eq!(fixed.backoff(0), Duration::from_millis(250));
        assert_eq!(fixed.backoff(9), Duration::from_millis(250));
    }

    #[test]
    fn odd_factors_end_at_a_bound_instead_of_panicking() {
        let with_factor = |backoff_multiplier| ToolRetryConfig {
            backoff_multiplier,
            ..ToolRetryConfig::default()
        };
        assert_eq!(with_factor(f64::NAN).backoff(1), Duration::from_secs(30));
        assert_eq!(with_factor(-3.0).backoff(1), Duration::ZERO);
        assert_eq!(
            with_factor(f64::INFINITY).backoff(1),
            Duration::from_secs(30)
        );
    }

    #[test]
    fn full_jitter_stays_within_the_backoff_and_seeds_reproduce() {
        let backoff = Duration::from_secs(4);
        let seeded = Jitter::FullSeeded(7);
        let draw = |jitter: &Jitter| {
            let mut state = JitterState::new(jitter);
            (0..50)
                .map(|_| state.apply(backoff, "t"))
                .collect::<Vec<_>>()
        };
        let first = draw(&seeded);
        assert_eq!(first, draw(&seeded));
        assert!(first.iter().all(|w| *w <= backoff));
        // Full jitter spreads: not every draw is the same.
        assert!(first.iter().any(|w| *w != first[0]));
        assert!(draw(&Jitter::Full).iter().all(|w| *w <= backoff));
        assert_eq!(draw(&Jitter::None), vec![backoff; 50]);
        let halve = Jitter::Custom(Arc::new(|d: Duration| d / 2));
        assert_eq!(draw(&halve)[0], Duration::from_secs(2));
    }

    #[test]
    fn retry_decision_follows_kinds_then_patterns() {
        let config = ToolRetryConfig::default();
        assert!(config.should_retry(&ToolError::timeout("t")));
        assert!(config.should_retry(&ToolError::network("t", "reset")));
        assert!(!config.should_retry(&ToolError::execution("t", "boom")));
        for never in [
            ToolError::invalid_arguments("t", "timeout"),
            ToolError::UnknownTool("t".into()),
            ToolError::NotActive("t".into()),
            ToolError::Cancelled("timeout".into()),
        ] {
            let all_kinds = config.clone().retry_on([never.kind()]);
            assert!(!all_kinds.should_retry(&never), "{never}");
            assert!(!config.clone().retryable_on(["t"]).should_retry(&never));
        }
        let patterns = config.retryable_on(["rate limit"]);
        assert!(patterns.should_retry(&ToolError::execution("t", "rate limit exceeded")));
        assert!(!patterns.should_retry(&ToolError::network("t", "reset")));
        // What the error says, not the tool's name nor the message's frame.
        let named = ToolRetryConfig::default().retryable_on(["rate", "failed", "Network"]);
        assert!(!named.should_retry(&ToolError::execution("rate_limiter", "HTTP 400")));
        assert!(!named.should_retry(&ToolError::network("api", "connection reset")));
        assert!(named.should_retry(&ToolError::network("api", "rate limited")));
        let timeouts = ToolRetryConfig::default().retryable_on(["timed out"]);
        assert!(timeouts.should_retry(&ToolError::timeout("slow")));
        assert!(!timeouts.should_retry(&ToolError::execution("slow", "bad input")));
        assert!(
            ToolRetryConfig::default()
                .retry_on([ToolErrorKind::Execution])
                .should_retry(&ToolError::execution("t", "boom"))
        );
    }
}
