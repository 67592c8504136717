//! Tool names across the MCP boundary: MCP allows names of up to 128 characters with `.`,
//! providers accept `^[a-zA-Z0-9_-]{1,64}$`. [`McpNames`] gives each remote tool a
//! provider-safe name, remembers which server and which original name it stands for (the
//! original is what goes on the wire), and never gives one name to two tools.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use toolsmith_core::{MAX_NAME_LEN, SHED_TOOL_NAME};

/// The longest tool name MCP allows.
pub const MAX_MCP_NAME_LEN: usize = 128;

/// A namespace of provider-safe names for remote tools: one name per (server, original name)
/// pair, distinct across every server that shares the namespace.
///
/// Every [`McpClient`](super::McpClient) uses the process-wide namespace
/// ([`McpNames::shared`]) unless given its own, so two servers that both have a tool `read`
/// get `read` and `read_2` (in the order they connect). A name is released when its client is
/// dropped, and when its server lists its tools again without that tool (tools that stay keep
/// their names), so a server renaming its tools on every `list_changed` holds no more names
/// than it lists. A bridge of a tool gone from the listing keeps its name, which may then be
/// given to another tool: remove such bridges from a manager when the list changes.
///
/// ```
/// use toolsmith::harness::mcp::McpNames;
///
/// let names = McpNames::new();
/// let a = names.claim(1, "github.create_issue");
/// let b = names.claim(2, "github.create_issue");
/// assert_eq!(a, "github_create_issue");
/// assert_eq!(b, "github_create_issue_2");
/// assert_eq!(names.original(&b), Some((2, "github.create_issue".to_owned())));
/// // Claiming again gives the same name.
/// assert_eq!(names.claim(1, "github.create_issue"), a);
/// ```
#[derive(Debug, Clone, Default)]
pub struct McpNames {
    inner: Arc<Mutex<Namespace>>,
}

#[derive(Debug, Default)]
struct Namespace {
    /// Local name → (owner, original name).
    by_local: HashMap<String, (u64, String)>,
    /// (owner, original name) → local name.
    by_remote: HashMap<(u64, String), String>,
    /// Base name → the suffix to try first for it: every lower one is taken. Keeps claiming
    /// a server's thousands of names that share a base linear, not quadratic.
    next_suffix: HashMap<String, u64>,
}

static SHARED: LazyLock<McpNames> = LazyLock::new(McpNames::new);

impl McpNames {
    /// An empty namespace.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide namespace, which clients use by default.
    pub fn shared() -> Self {
        SHARED.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Namespace> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The provider-safe name of the tool `original` of `owner` (a client's id), assigning
    /// one if it has none: [`provider_name`] of the original, with `_2`, `_3`, … appended
    /// when that is taken (by another tool of the namespace, or by `shed`).
    pub fn claim(&self, owner: u64, original: &str) -> String {
        self.claim_with_prefix(owner, None, original)
    }

    /// [`claim`](Self::claim) with `prefix_` put before the name (a server's short name).
    pub fn claim_with_prefix(&self, owner: u64, prefix: Option<&str>, original: &str) -> String {
        let mut namespace = self.lock();
        let key = (owner, original.to_owned());
        if let Some(local) = namespace.by_remote.get(&key) {
            return local.clone();
        }
        let base = match prefix {
            Some(prefix) if !prefix.is_empty() => provider_name(&format!("{prefix}_{original}")),
            _ => provider_name(original),
        };
        let first_suffix = namespace.next_suffix.get(&base).copied().unwrap_or(2);
        let (local, suffix) = unique_name(&base, first_suffix, |candidate| {
            candidate == SHED_TOOL_NAME || namespace.by_local.contains_key(candidate)
        });
        if let Some(suffix) = suffix {
            namespace.next_suffix.insert(base, suffix + 1);
        }
        namespace
            .by_local
            .insert(local.clone(), (owner, original.to_owned()));
        namespace.by_remote.insert(key, local.clone());
        local
    }

    /// The owner and original name behind a local name.
    pub fn original(&self, local: &str) -> Option<(u64, String)> {
        self.lock().by_local.get(local).cloned()
    }

    /// The local name given to `original` of `owner`, if any.
    pub fn local(&self, owner: u64, original: &str) -> Option<String> {
        self.lock()
            .by_remote
            .get(&(owner, original.to_owned()))
            .cloned()
    }

    /// Releases the names of `owner`'s tools whose original name `keep` refuses (the tools a
    /// server no longer lists); the others keep theirs.
    ///
    /// ```
    /// use toolsmith::harness::mcp::McpNames;
    ///
    /// let names = McpNames::new();
    /// let kept = names.claim(1, "search");
    /// names.claim(1, "old.name");
    /// names.retain(1, |original| original == "search");
    /// assert_eq!(names.local(1, "old.name"), None);
    /// assert_eq!(names.claim(1, "search"), kept);
    /// assert_eq!(names.len(), 1);
    /// ```
    pub fn retain(&self, owner: u64, mut keep: impl FnMut(&str) -> bool) {
        let mut namespace = self.lock();
        let mut released = Vec::new();
        namespace.by_remote.retain(|(o, original), local| {
            let stays = *o != owner || keep(original);
            if !stays {
                released.push(std::mem::take(local));
            }
            stays
        });
        for local in &released {
            namespace.by_local.remove(local);
        }
        if !released.is_empty() {
            // Freed suffixes are given again, lowest first.
            namespace.next_suffix.clear();
        }
    }

    /// How many names are given (to every owner).
    pub fn len(&self) -> usize {
        self.lock().by_local.len()
    }

    /// Whether no name is given.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Releases every name of `owner`.
    pub fn release(&self, owner: u64) {
        self.retain(owner, |_| false);
    }
}

/// `name` made provider-safe: every character outside `[a-zA-Z0-9_-]` becomes `_`, an empty
/// name becomes `tool`, and a name longer than 64 bytes keeps its first 55 bytes followed by
/// `_` and 8 hex digits of a hash of the whole name (so long names that share a beginning stay
/// apart).
///
/// ```
/// use toolsmith::harness::mcp::provider_name;
///
/// assert_eq!(provider_name("read_file"), "read_file");
/// assert_eq!(provider_name("fs.read file"), "fs_read_file");
/// assert_eq!(provider_name(""), "tool");
/// let long = provider_name(&"x".repeat(128));
/// assert_eq!(long.len(), 64);
/// assert_ne!(long, provider_name(&format!("{}y", "x".repeat(127))));
/// ```
pub fn provider_name(name: &str) -> String {
    let mut safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        safe.push_str("tool");
    }
    if safe.len() > MAX_NAME_LEN {
        safe.truncate(MAX_NAME_LEN - 9);
        safe.push_str(&format!("_{:08x}", fnv1a(name.as_bytes())));
    }
    safe
}

/// `base`, or `base_N` for N from `first_suffix` on (shortened to stay within 64 bytes), the
/// first that `taken` does not refuse, with the N used.
fn unique_name(
    base: &str,
    first_suffix: u64,
    taken: impl Fn(&str) -> bool,
) -> (String, Option<u64>) {
    if !taken(base) {
        return (base.to_owned(), None);
    }
    for n in first_suffix.max(2).. {
        let suffix = format!("_{n}");
        let keep = base.len().min(MAX_NAME_LEN - suffix.len());
        let candidate = format!("{}{suffix}", &base[..keep]);
        if !taken(&candidate) {
            return (candidate, Some(n));
        }
    }
    unreachable!("the namespace cannot hold every suffix")
}

/// 32-bit FNV-1a: a small stable hash (the same in every run and build).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolsmith_core::check_name;

    #[test]
    fn every_mcp_name_maps_to_a_provider_name() {
        let long_dotted = "a.".repeat(64);
        for name in [
            "read",
            "a.b.c",
            "ü-tool",
            "",
            "x y",
            &"z".repeat(MAX_MCP_NAME_LEN),
            &long_dotted,
        ] {
            let safe = provider_name(name);
            assert!(check_name(&safe).is_ok(), "{name:?} → {safe:?}");
        }
    }

    #[test]
    fn names_are_distinct_and_reversible() {
        let names = McpNames::new();
        let mut seen = std::collections::HashSet::new();
        // Names that collide once made safe, on two servers.
        for owner in [1, 2] {
            for original in ["a.b", "a_b", "a b", "shed", &"q".repeat(100)] {
                let local = names.claim(owner, original);
                assert!(check_name(&local).is_ok(), "{local}");
                assert!(seen.insert(local.clone()), "{local} given twice");
                assert_eq!(names.original(&local), Some((owner, original.to_owned())));
                assert_eq!(names.local(owner, original), Some(local));
            }
        }
        assert!(!seen.contains("shed"));
        names.release(1);
        assert_eq!(names.local(1, "a.b"), None);
        assert_eq!(names.claim(3, "a.b"), "a_b");
    }

    #[test]
    fn suffixes_stay_within_the_limit() {
        let names = McpNames::new();
        let base = "n".repeat(64);
        let first = names.claim(1, &base);
        let second = names.claim(2, &base);
        assert_eq!(first, base);
        assert_eq!(second.len(), 64);
        assert!(second.ends_with("_2"));
    }

    #[test]
    fn many_names_on_one_base_are_claimed_in_linear_time_lowest_free_first() {
        let names = McpNames::new();
        // Distinct names that all become `t_`: each claim starts where the last one ended.
        let locals: Vec<String> = (0..20_000_u32)
            .map(|i| names.claim(1, &format!("t{}", char::from_u32(0x100 + i).unwrap())))
            .collect();
        assert_eq!(locals[0], "t_");
        assert_eq!(locals[1], "t__2");
        assert_eq!(locals[19_999], "t__20000");
        let distinct: std::collections::HashSet<_> = locals.iter().collect();
        assert_eq!(distinct.len(), locals.len());
        // The next claim tries one candidate, not 20,000.
        assert_eq!(names.lock().next_suffix.get("t_"), Some(&20_001));

        // A base name that is someone's suffixed name is skipped over, not given twice.
        let names = McpNames::new();
        assert_eq!(names.claim(1, "a"), "a");
        assert_eq!(names.claim(2, "a_3"), "a_3");
        assert_eq!(names.claim(3, "a"), "a_2");
        assert_eq!(names.claim(4, "a"), "a_4");
        // Released names are given again, lowest first.
        names.release(3);
        assert_eq!(names.claim(5, "a"), "a_2");
        assert_eq!(names.claim(6, "a"), "a_5");
    }

    #[test]
    fn names_absent_from_a_listing_are_released_and_the_others_kept() {
        let names = McpNames::new();
        let stays = names.claim(1, "stays");
        let goes = names.claim(1, "goes");
        let other = names.claim(2, "goes");
        assert_eq!(other, "goes_2");
        names.retain(1, |original| original == "stays");
        assert_eq!(names.local(1, "stays"), Some(stays.clone()));
        assert_eq!(names.original(&stays), Some((1, "stays".to_owned())));
        assert_eq!(names.local(1, "goes"), None);
        assert_eq!(names.original(&goes), None);
        // Another owner's names are untouched.
        assert_eq!(names.original(&other), Some((2, "goes".to_owned())));
        assert_eq!(names.len(), 2);
        // The freed name is given again.
        assert_eq!(names.claim(3, "goes"), "goes");

        // A server renaming its tools on every listing holds as many names as it lists.
        let names = McpNames::new();
        for generation in 0..1_000 {
            let listed = [
                format!("a{generation}"),
                format!("b{generation}"),
                "c".to_owned(),
            ];
            for original in &listed {
                names.claim(1, original);
            }
            names.retain(1, |original| listed.iter().any(|l| l == original));
            assert_eq!(names.len(), 3);
        }
        assert_eq!(names.local(1, "c").as_deref(), Some("c"));
        assert_eq!(names.local(1, "a999").as_deref(), Some("a999"));
    }

    #[test]
    fn prefixes_qualify_names() {
        let names = McpNames::new();
        assert_eq!(
            names.claim_with_prefix(1, Some("github"), "create.issue"),
            "github_create_issue"
        );
    }
}
