//! Per-manager execution settings: the concurrency limit of batches and the retry
//! configurations, kept beside the registry so that the registry stays as it is.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::ToolRetryConfig;

/// How many calls of a parallel stage run at once unless the manager or the batch says
/// otherwise: enough for every call a model makes in one answer (tens at most) to run
/// together, while a runaway batch of thousands still runs in waves. Destructive tools run
/// one at a time whatever the limit.
pub const DEFAULT_CONCURRENCY_LIMIT: usize = 128;

/// What a [`ToolCallManager`](crate::ToolCallManager) runs batches with.
#[derive(Debug)]
pub(crate) struct ExecutionSettings {
    concurrency_limit: AtomicUsize,
    default_retry: RwLock<Arc<ToolRetryConfig>>,
    /// The config of every tool without one of its own, annotations notwithstanding.
    retry_policy: RwLock<Option<Arc<ToolRetryConfig>>>,
    retry_configs: RwLock<HashMap<String, Arc<ToolRetryConfig>>>,
    /// Whether `retry_configs` may hold anything: lets the common case skip its lock.
    any_retry_config: AtomicBool,
    /// How many times a retry setting has changed: a batch's call prepared at one number
    /// still has the config that applies to it while the number has not moved.
    retry_generation: AtomicU64,
}

impl Default for ExecutionSettings {
    fn default() -> Self {
        Self {
            concurrency_limit: AtomicUsize::new(DEFAULT_CONCURRENCY_LIMIT),
            default_retry: RwLock::new(Arc::new(ToolRetryConfig::default())),
            retry_policy: RwLock::default(),
            retry_configs: RwLock::default(),
            any_retry_config: AtomicBool::new(false),
            retry_generation: AtomicU64::new(0),
        }
    }
}

impl ExecutionSettings {
    pub(crate) fn concurrency_limit(&self) -> usize {
        self.concurrency_limit.load(Ordering::Relaxed)
    }

    pub(crate) fn set_concurrency_limit(&self, limit: usize) {
        self.concurrency_limit
            .store(limit.max(1), Ordering::Relaxed);
    }

    pub(crate) fn default_retry(&self) -> Arc<ToolRetryConfig> {
        Arc::clone(
            &self
                .default_retry
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    pub(crate) fn set_default_retry(&self, config: ToolRetryConfig) {
        *self
            .default_retry
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(config);
        self.retry_changed();
    }

    pub(crate) fn retry_policy(&self) -> Option<Arc<ToolRetryConfig>> {
        self.retry_policy
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_retry_policy(&self, policy: Option<ToolRetryConfig>) {
        *self
            .retry_policy
            .write()
            .unwrap_or_else(PoisonError::into_inner) = policy.map(Arc::new);
        self.retry_changed();
    }

    pub(crate) fn retry_config(&self, name: &str) -> Option<Arc<ToolRetryConfig>> {
        if !self.any_retry_config.load(Ordering::Acquire) {
            return None;
        }
        let configs = self
            .retry_configs
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        configs.get(name).cloned()
    }

    pub(crate) fn set_retry_config(&self, name: &str, config: Option<ToolRetryConfig>) {
        let mut configs = self
            .retry_configs
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        match config {
            Some(config) => configs.insert(name.to_owned(), Arc::new(config)),
            None => configs.remove(name),
        };
        self.any_retry_config
            .store(!configs.is_empty(), Ordering::Release);
        self.retry_changed();
    }

    /// How many times a retry setting has changed so far.
    pub(crate) fn retry_generation(&self) -> u64 {
        self.retry_generation.load(Ordering::Acquire)
    }

    /// Counts a change, after it is stored: whoever reads the new number reads the new
    /// setting.
    fn retry_changed(&self) {
        self.retry_generation.fetch_add(1, Ordering::Release);
    }
}
