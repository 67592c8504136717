//! [`fnv1a`]: a hash that is the same on every platform, run and release, unlike `std`'s
//! hasher, for values that must not change between runs (a hashing embedder's dimensions, a
//! rewritten call id a provider's prompt cache sees again).

/// 64-bit FNV-1a of `bytes`.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
