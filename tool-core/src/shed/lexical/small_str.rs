//! [`SmallStr`]: a string kept inline when short, as the key of the analyser's memo and of
//! the index's vocabulary.
//!
//! Both tables are looked up for every word of a query. With their text on the heap, a
//! look-up reads the table's slot, then the key's text elsewhere (and the memo's answer
//! elsewhere again), each likely a cache miss in tables of thousands of words. Words and
//! stems are short: kept inline, the slot holds them.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};

/// The longest text kept inline (most words and stems are shorter).
const INLINE: usize = 22;

/// A string, inline up to [`INLINE`] bytes. It is looked up by its bytes (it borrows as
/// `[u8]`, and hashes as its bytes do), so a look-up never checks UTF-8.
#[derive(Clone)]
pub(crate) enum SmallStr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Boxed(Box<str>),
}

impl SmallStr {
    pub(crate) fn new(text: &str) -> Self {
        if text.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Self::Inline {
                len: text.len() as u8,
                bytes,
            }
        } else {
            Self::Boxed(Box::from(text))
        }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Self::Boxed(text) => text.as_bytes(),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Inline { .. } => {
                std::str::from_utf8(self.as_bytes()).expect("copied whole from a str")
            }
            Self::Boxed(text) => text,
        }
    }

    /// The heap it holds besides itself, in bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Self::Inline { .. } => 0,
            Self::Boxed(text) => text.len(),
        }
    }
}

impl Borrow<[u8]> for SmallStr {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Hash for SmallStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl PartialEq for SmallStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for SmallStr {}

impl fmt::Debug for SmallStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::{INLINE, SmallStr};

    #[test]
    fn short_and_long_texts_read_back_and_are_found_by_their_bytes() {
        let texts = [
            "",
            "a",
            "café",
            &"x".repeat(INLINE),
            &"y".repeat(INLINE + 1),
        ];
        let map: HashMap<SmallStr, usize> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| (SmallStr::new(t), i))
            .collect();
        for (i, text) in texts.iter().enumerate() {
            let key = SmallStr::new(text);
            assert_eq!(key.as_str(), *text);
            assert_eq!(key.as_bytes(), text.as_bytes());
            assert_eq!(map.get(text.as_bytes()), Some(&i));
        }
        assert!(matches!(
            SmallStr::new(&"x".repeat(INLINE)),
            SmallStr::Inline { .. }
        ));
        assert!(matches!(
            SmallStr::new(&"y".repeat(INLINE + 1)),
            SmallStr::Boxed(_)
        ));
        assert_eq!(std::mem::size_of::<SmallStr>(), 24);
        assert_eq!(std::mem::size_of::<Option<SmallStr>>(), 24);
    }
}
