//! The registered names as a `shed` explanation reads them: each name prepared for comparison,
//! the parts of the names, and the categories, built once after the registry changes and
//! shared by every explanation until the next change.
//!
//! An explanation compares what the model wrote with every registered name (and, failing
//! that, its words with every distinct part of the names). Worked out from the registry on
//! each call, it would sort the entries into registration order, lowercase the names,
//! collect their parts into a map and count each name's characters again: milliseconds at
//! ten thousand tools, for a call that found nothing.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use crate::DEFAULT_CATEGORY;
use crate::manager::suggestion::{PreparedNames, closest_scored, is_lower_case};

/// The registered names, their parts and the session's categories, as of one state of the
/// registry.
#[derive(Debug, Default)]
pub(crate) struct NameDirectory {
    /// In registration order.
    names: Vec<Box<str>>,
    /// The same names, prepared.
    prepared: PreparedNames,
    /// The distinct parts of the names (lower case, three bytes or more), prepared, sorted
    /// for a look-up by a lower-case word.
    parts: PreparedNames,
    /// For each part, the names it is part of: indexes into `names`, in registration order,
    /// each once.
    part_names: Vec<Vec<u32>>,
    /// The categories other than the default, sorted, each once.
    categories: Vec<String>,
}

impl NameDirectory {
    /// The directory of the tools named in `tools` with their categories, given in
    /// registration order.
    pub(crate) fn of<'t>(tools: impl Iterator<Item = (&'t str, &'t str)>) -> Self {
        let mut names = Vec::new();
        let mut prepared = PreparedNames::default();
        let mut categories = BTreeSet::new();
        // Each distinct part of the names, with the names it is part of: thousands of tools
        // share far fewer parts.
        let mut parts: HashMap<Cow<'t, str>, Vec<u32>, foldhash::fast::RandomState> =
            HashMap::default();
        for (name, category) in tools {
            let index = u32::try_from(names.len()).expect("fewer than 2^32 tools");
            for part in lower_parts(name) {
                let named = parts.entry(part).or_default();
                if named.last() != Some(&index) {
                    named.push(index);
                }
            }
            if category != DEFAULT_CATEGORY && !categories.contains(category) {
                categories.insert(category.to_owned());
            }
            names.push(name.into());
            prepared.push(name);
        }
        let mut parts: Vec<(Cow<'t, str>, Vec<u32>)> = parts.into_iter().collect();
        parts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut prepared_parts = PreparedNames::default();
        let mut part_names = Vec::with_capacity(parts.len());
        for (part, names) in parts {
            prepared_parts.push(&part);
            part_names.push(names);
        }
        Self {
            names,
            prepared,
            parts: prepared_parts,
            part_names,
            categories: categories.into_iter().collect(),
        }
    }

    /// The registered names closest to `wanted` taken as a name (see
    /// [`closest_names`](crate::closest_names)), other than `wanted` itself.
    pub(crate) fn closest_names(&self, wanted: &str) -> Vec<&str> {
        let scored = self.prepared.similar_to(&wanted.to_lowercase());
        closest_scored(
            scored
                .into_iter()
                .map(|(score, index)| (score, &*self.names[index]))
                .filter(|(_, name)| *name != wanted),
        )
    }

    /// The part spelt `word` (lower case), by its index, if the names have it.
    fn part(&self, word: &str) -> Option<usize> {
        self.parts.find_sorted(word)
    }

    /// The names closest to `word` (lower case), by their parts: the names with a part
    /// spelt `word`, or else with the parts closest to it, part by part.
    pub(crate) fn names_by_part<'d>(&'d self, word: &str) -> impl Iterator<Item = &'d str> {
        let near: Vec<usize> = match self.part(word) {
            Some(part) => vec![part],
            None => {
                let scored = self.parts.similar_to(word);
                let closest = closest_scored(
                    scored
                        .into_iter()
                        .map(|(score, part)| (score, self.parts.lower(part))),
                );
                closest
                    .into_iter()
                    .filter_map(|lower| self.part(lower))
                    .collect()
            }
        };
        near.into_iter()
            .flat_map(|part| self.part_names[part].iter())
            .map(|&index| &*self.names[index as usize])
    }

    /// The categories of the registered tools other than the default, sorted.
    pub(crate) fn categories(&self) -> &[String] {
        &self.categories
    }
}

/// The parts of `name` an explanation compares words with: split at `_` and `-`, three
/// bytes or more, in lower case (most are already, and borrowed).
pub(crate) fn lower_parts(name: &str) -> impl Iterator<Item = Cow<'_, str>> {
    name.split(['_', '-'])
        .filter(|part| part.len() >= 3)
        .map(|part| {
            if is_lower_case(part) {
                Cow::Borrowed(part)
            } else {
                Cow::Owned(part.to_lowercase())
            }
        })
}

/// The [`NameDirectory`] of the registry's present state, kept until the registry changes.
#[derive(Debug, Default)]
pub(crate) struct NameDirectoryCache {
    /// The directory, with the registry generation it was built from.
    built: Mutex<Option<(u64, Arc<NameDirectory>)>>,
}

impl NameDirectoryCache {
    /// The directory built from the registry as of `generation`, built by `build` when the
    /// one kept is older. Built outside the lock: explanations of the same state wait for
    /// nothing, and a directory of a newer state is never replaced by an older one.
    pub(crate) fn get_or_build(
        &self,
        generation: u64,
        build: impl FnOnce() -> NameDirectory,
    ) -> Arc<NameDirectory> {
        let kept = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((built_at, directory)) = &*kept
            && *built_at == generation
        {
            return Arc::clone(directory);
        }
        drop(kept);
        let directory = Arc::new(build());
        let mut kept = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if kept
            .as_ref()
            .is_none_or(|(built_at, _)| *built_at < generation)
        {
            *kept = Some((generation, Arc::clone(&directory)));
        }
        directory
    }
}
