//! [`Confinement`]: which [`ShellSandbox`] setting confines a command on which kernel, read
//! in this one place. [`ShellRunner::sandbox_status`](crate::ShellRunner::sandbox_status)
//! reports it, and the runner acts on it (a ruleset and a `TMPDIR` of the command's own, a
//! refusal, or neither), so the two cannot disagree.

use crate::{LandlockPolicy, SandboxStatus, ShellSandbox};

/// Why a required sandbox cannot be had here.
#[cfg(target_os = "linux")]
const LANDLOCK_REQUIRED_BUT_MISSING: &str =
    "Landlock is required but this kernel does not support it";
#[cfg(not(target_os = "linux"))]
const LANDLOCK_REQUIRED_BUT_MISSING: &str = "Landlock is required but it exists only on Linux";

/// Why a sandbox wanted where supported is not used here.
#[cfg(target_os = "linux")]
const LANDLOCK_MISSING: &str = "this kernel does not support Landlock";
#[cfg(not(target_os = "linux"))]
const LANDLOCK_MISSING: &str = "Landlock exists only on Linux";

/// How commands run under a sandbox setting on a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Confinement<'a> {
    /// Unconfined, for the reason given.
    Unconfined(&'static str),
    /// Confined by `policy`'s Landlock ruleset, on a kernel of Landlock ABI `abi`.
    Landlock {
        /// The writes allowed besides the root's.
        policy: &'a LandlockPolicy,
        /// The kernel's Landlock ABI (see [`LandlockPolicy::kernel_abi`]).
        abi: u8,
    },
    /// Refused: a sandbox is required and cannot be had, for the reason given.
    Refused(&'static str),
}

impl<'a> Confinement<'a> {
    /// Under `sandbox`, on a kernel of Landlock ABI `abi` (`None`: no Landlock).
    pub(crate) fn of(sandbox: &'a ShellSandbox, abi: Option<u8>) -> Self {
        match (sandbox, abi) {
            (ShellSandbox::None, _) => Self::Unconfined("no sandbox is configured"),
            (
                ShellSandbox::Landlock(policy) | ShellSandbox::LandlockIfSupported(policy),
                Some(abi),
            ) => Self::Landlock { policy, abi },
            (ShellSandbox::Landlock(_), None) => Self::Refused(LANDLOCK_REQUIRED_BUT_MISSING),
            (ShellSandbox::LandlockIfSupported(_), None) => Self::Unconfined(LANDLOCK_MISSING),
        }
    }

    /// Under `sandbox`, on the running kernel.
    pub(crate) fn here(sandbox: &'a ShellSandbox) -> Self {
        Self::of(sandbox, LandlockPolicy::kernel_abi())
    }

    /// The confinement as [`ShellRunner::sandbox_status`](crate::ShellRunner::sandbox_status)
    /// reports it.
    pub(crate) fn status(&self) -> SandboxStatus {
        match *self {
            Self::Unconfined(reason) => SandboxStatus::NotSandboxed(reason.to_owned()),
            Self::Refused(reason) => SandboxStatus::Unavailable(reason.to_owned()),
            Self::Landlock { abi: 3.., .. } => SandboxStatus::Confined,
            Self::Landlock { abi, .. } => {
                let mut reason = format!(
                    "this kernel's Landlock (ABI {abi}; Linux 6.2 has ABI 3) does not confine \
                     truncating files outside the root"
                );
                if abi < 2 {
                    reason.push_str(
                        ", and refuses moving or linking a file into another directory, inside \
                         the root too",
                    );
                }
                SandboxStatus::PartlyConfined(reason)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(sandbox: &ShellSandbox, abi: Option<u8>) -> SandboxStatus {
        Confinement::of(sandbox, abi).status()
    }

    #[test]
    fn an_older_kernels_landlock_is_reported_as_partial() {
        let required = ShellSandbox::Landlock(LandlockPolicy::new());
        let wanted = ShellSandbox::LandlockIfSupported(LandlockPolicy::new());
        for sandbox in [&required, &wanted] {
            assert_eq!(status(sandbox, Some(3)), SandboxStatus::Confined);
            assert_eq!(status(sandbox, Some(5)), SandboxStatus::Confined);
            let SandboxStatus::PartlyConfined(reason) = status(sandbox, Some(2)) else {
                panic!("ABI 2 confines all but truncation");
            };
            assert!(
                reason.contains("truncating files outside the root"),
                "{reason}"
            );
            assert!(!reason.contains("another directory"), "{reason}");
            let SandboxStatus::PartlyConfined(reason) = status(sandbox, Some(1)) else {
                panic!("ABI 1 confines all but truncation");
            };
            assert!(
                reason.contains("ABI 1") && reason.contains("another directory"),
                "{reason}"
            );
        }
        assert!(matches!(
            status(&required, None),
            SandboxStatus::Unavailable(_)
        ));
        assert!(matches!(
            status(&wanted, None),
            SandboxStatus::NotSandboxed(_)
        ));
        assert!(matches!(
            status(&ShellSandbox::None, Some(3)),
            SandboxStatus::NotSandboxed(_)
        ));
    }

    #[test]
    fn a_sandbox_confines_with_its_own_policy_wherever_the_kernel_has_landlock() {
        let policy = LandlockPolicy::new().allow_writes_beneath("/srv/cache");
        for sandbox in [
            ShellSandbox::Landlock(policy.clone()),
            ShellSandbox::LandlockIfSupported(policy.clone()),
        ] {
            for abi in 1..=5 {
                assert_eq!(
                    Confinement::of(&sandbox, Some(abi)),
                    Confinement::Landlock {
                        policy: &policy,
                        abi
                    }
                );
            }
        }
        assert_eq!(
            Confinement::of(&ShellSandbox::Landlock(policy.clone()), None),
            Confinement::Refused(LANDLOCK_REQUIRED_BUT_MISSING)
        );
        for abi in [None, Some(1), Some(3)] {
            assert!(matches!(
                Confinement::of(&ShellSandbox::None, abi),
                Confinement::Unconfined(_)
            ));
        }
    }
}
