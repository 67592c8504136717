//! [`CompiledOnFirstUse`]: a tool's compiled schema, compiled when a call first needs it.
//!
//! A compiled `jsonschema` validator, with the copy of the schema and the fast-path form kept
//! beside it, takes more memory than the tool's whole definition (about 6.7 KB against 2.5 KB
//! for the tools of the `shed_memory` bench), and most of a large session's tools are never
//! called. So registration only checks that a tool's schemas compile (the errors stay
//! registration errors) and keeps nothing of the compilation; the first call compiles again
//! and keeps the result for every later call.

use std::sync::OnceLock;

/// A value compiled on first use and kept, shared by every later use.
///
/// Concurrent first uses compile once: one thread compiles, the others wait for it and share
/// its result. A failed compilation is kept too, so a schema that does not compile is not
/// compiled again on every call.
#[derive(Debug, Clone)]
pub(crate) struct CompiledOnFirstUse<T>(OnceLock<Result<T, String>>);

impl<T> Default for CompiledOnFirstUse<T> {
    fn default() -> Self {
        Self(OnceLock::new())
    }
}

impl<T> CompiledOnFirstUse<T> {
    /// The compiled value, compiling it with `compile` on the first use; the error says why it
    /// does not compile.
    #[inline]
    pub(crate) fn get_or_compile(
        &self,
        compile: impl FnOnce() -> Result<T, String>,
    ) -> Result<&T, &str> {
        match self.0.get_or_init(compile) {
            Ok(compiled) => Ok(compiled),
            Err(reason) => Err(reason),
        }
    }

    /// Whether it has been compiled (successfully or not).
    #[cfg(test)]
    pub(crate) fn is_compiled(&self) -> bool {
        self.0.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    use super::CompiledOnFirstUse;

    #[test]
    fn concurrent_first_uses_compile_once_and_share_the_result() {
        let lazy = Arc::new(CompiledOnFirstUse::<Vec<u32>>::default());
        let compiled = Arc::new(AtomicUsize::new(0));
        let start = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (lazy, compiled, start) = (lazy.clone(), compiled.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let value = lazy.get_or_compile(|| {
                        compiled.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        Ok(vec![1, 2, 3])
                    });
                    value.map(|v| v.as_ptr() as usize).unwrap()
                })
            })
            .collect();
        let addresses: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(compiled.load(Ordering::SeqCst), 1);
        assert!(addresses.windows(2).all(|pair| pair[0] == pair[1]));
        assert!(lazy.is_compiled());
    }

    #[test]
    fn a_failure_is_kept_and_not_compiled_again() {
        let lazy = CompiledOnFirstUse::<u32>::default();
        assert!(!lazy.is_compiled());
        assert_eq!(lazy.get_or_compile(|| Err("bad".into())), Err("bad"));
        assert_eq!(lazy.get_or_compile(|| Ok(1)), Err("bad"));
    }
}
