//! [`LandlockPolicy`]: confines the writes of `bash`'s processes to the root (and a few
//! chosen paths) with Linux's Landlock, where the kernel supports it.

use std::path::PathBuf;

/// A Landlock policy for the `bash` child: everything may be read and executed, but files
/// may be created, written, truncated, renamed, linked or removed only beneath the root, the
/// command's own temporary directory (its `TMPDIR`, removed when it ends) and the paths
/// added with [`allow_writes_beneath`](Self::allow_writes_beneath) (plus writes to
/// `/dev/null`).
///
/// The policy is enforced by the kernel on the child and everything it starts, and cannot be
/// lifted by them (it is applied with `no_new_privs`, and holds for root too). It needs Linux
/// 5.13 or later with Landlock enabled; [`LandlockPolicy::is_supported`] says whether this
/// machine has it. Before Linux 6.2 (Landlock ABI 3), truncating a file outside the root is
/// not confined, and [`ShellRunner::sandbox_status`](crate::ShellRunner::sandbox_status)
/// says so ([`SandboxStatus::PartlyConfined`](crate::SandboxStatus::PartlyConfined)). **Where it is not supported, `bash` is not sandboxed**: the runner then
/// either refuses to run ([`ShellSandbox::Landlock`](crate::ShellSandbox::Landlock)) or runs
/// unconfined ([`ShellSandbox::LandlockIfSupported`](crate::ShellSandbox::LandlockIfSupported)),
/// and says which in [`ShellRunner::sandbox_status`](crate::ShellRunner::sandbox_status).
///
/// What it does not confine: reads (a command can read any file the process can), a file's
/// metadata outside the root (Landlock has no right for `chmod`, `chown`, timestamps or
/// extended attributes: a command may change them, not the file's content), the network,
/// other processes (signals, `ptrace` of unrelated processes is not granted by it but not
/// blocked either), and resource use.
///
/// ```
/// use toolsmith::harness::LandlockPolicy;
///
/// let policy = LandlockPolicy::new().allow_writes_beneath("/tmp");
/// assert_eq!(policy.writable_paths().len(), 2); // /dev/null and /tmp
/// let _supported: bool = LandlockPolicy::is_supported();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LandlockPolicy {
    writable: Vec<PathBuf>,
}

impl Default for LandlockPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl LandlockPolicy {
    /// Writes beneath the root only (and to `/dev/null`).
    #[must_use]
    pub fn new() -> Self {
        Self {
            writable: vec![PathBuf::from("/dev/null")],
        }
    }

    /// Also allows writes beneath `path` (a directory, or a single file).
    #[must_use]
    pub fn allow_writes_beneath(mut self, path: impl Into<PathBuf>) -> Self {
        self.writable.push(path.into());
        self
    }

    /// The paths besides the root where writes are allowed.
    pub fn writable_paths(&self) -> &[PathBuf] {
        &self.writable
    }

    /// Whether the running kernel enforces Landlock (at all: see
    /// [`ShellRunner::sandbox_status`](crate::ShellRunner::sandbox_status) for what an older
    /// kernel's Landlock leaves unconfined).
    pub fn is_supported() -> bool {
        Self::kernel_abi().is_some()
    }

    /// The Landlock ABI of the running kernel, as far as its write rights go: 3 (Linux 6.2
    /// and later) confines every write, 2 (5.19) not truncation, 1 (5.13) not truncation,
    /// and it refuses moving or linking a file to another directory everywhere. `None`
    /// where the kernel has no Landlock.
    pub(crate) fn kernel_abi() -> Option<u8> {
        #[cfg(target_os = "linux")]
        {
            use landlock::{ABI, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr};
            static ABI_LEVEL: std::sync::OnceLock<Option<u8>> = std::sync::OnceLock::new();
            *ABI_LEVEL.get_or_init(|| {
                // The highest ABI whose write rights the kernel takes whole (a best-effort
                // ruleset would drop the rights it lacks without saying so).
                [(ABI::V3, 3), (ABI::V2, 2), (ABI::V1, 1)]
                    .into_iter()
                    .find(|(abi, _)| {
                        Ruleset::default()
                            .set_compatibility(CompatLevel::HardRequirement)
                            .handle_access(AccessFs::from_write(*abi))
                            .and_then(|ruleset| ruleset.create())
                            .is_ok_and(|created| {
                                Option::<std::os::fd::OwnedFd>::from(created).is_some()
                            })
                    })
                    .map(|(_, level)| level)
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// The ruleset's descriptor (writes beneath `root`, the command's own temporary directory
    /// `tmp` and the policy's paths), ready for the child to restrict itself with, or `None` where
    /// Landlock is not supported. Prepared in the parent so that the child, between `fork`
    /// and `exec`, only makes two system calls.
    #[cfg(target_os = "linux")]
    pub(crate) fn prepare(
        &self,
        root: &std::path::Path,
        tmp: &std::path::Path,
    ) -> Result<Option<std::os::fd::OwnedFd>, String> {
        use landlock::{
            ABI, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, path_beneath_rules,
        };
        // ABI 3 covers every write right (creation, removal, rename across directories,
        // truncation); later ABIs add device ioctls and networking, which are not about
        // where files are written.
        let abi = ABI::V3;
        let writes = AccessFs::from_write(abi);
        let ruleset = Ruleset::default()
            .handle_access(writes)
            .and_then(|ruleset| ruleset.create())
            .and_then(|created| {
                created.add_rules(path_beneath_rules(
                    [root, tmp]
                        .into_iter()
                        .chain(self.writable.iter().map(PathBuf::as_path)),
                    writes,
                ))
            })
            .map_err(|err| format!("could not prepare the Landlock policy: {err}"))?;
        Ok(ruleset.into())
    }
}
