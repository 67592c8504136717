//! The hasher of [`SessionState`](super::SessionState)'s map: a `TypeId` is already a hash
//! (of the type's path and more, by the compiler), so it is used as it is rather than hashed
//! again with SipHash. Looking a value up by type happens on every call that extracts one
//! (`State<T>`, an agent run's ledger), and every agent run builds such a map.

use std::hash::{BuildHasherDefault, Hasher};

/// A [`Hasher`] that passes a `TypeId`'s bits through.
///
/// A `TypeId` hashes itself as one `u64` (`write_u64`); bytes written any other way (a
/// `TypeId` of another layout in a later Rust) are folded in, so the map stays correct
/// whatever it is given, only less spread.
#[derive(Default)]
pub(crate) struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.rotate_left(32) ^ n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Builds [`TypeIdHasher`]s.
pub(crate) type TypeIdBuildHasher = BuildHasherDefault<TypeIdHasher>;

#[cfg(test)]
mod tests {
    use std::any::TypeId;
    use std::hash::BuildHasher;

    use super::*;

    /// Different types get different hashes (their ids' bits), so the map's buckets spread.
    #[test]
    fn type_ids_hash_apart() {
        let hash = |id: TypeId| TypeIdBuildHasher::default().hash_one(id);
        let ids = [
            TypeId::of::<u8>(),
            TypeId::of::<String>(),
            TypeId::of::<Vec<u8>>(),
            TypeId::of::<Option<String>>(),
        ];
        let hashes: std::collections::HashSet<u64> = ids.iter().map(|&id| hash(id)).collect();
        assert_eq!(hashes.len(), ids.len());
        assert_eq!(hash(TypeId::of::<String>()), hash(TypeId::of::<String>()));
    }
}
