//! [`Workflow`]: a batch of calls planned into stages by dependency depth (spec 01 §5).
//!
//! Planning resolves every `depends_on` id to an index once (the ids of a large batch go into
//! a table of their own, hashed once each), then walks the dependencies depth-first over
//! those indices, so it takes time linear in calls + edges whatever the shape of the graph.
//! The requests are read twice: once for their ids (and hints and dependency counts), once
//! for their dependencies; in a large batch each pass asks for the strings of requests a
//! little ahead of the one it reads.

use std::borrow::Cow;
use std::fmt;
use std::hash::BuildHasher;

use crate::tool::echo::echoed_batch_id;
use crate::{ExecutionHint, ToolCallManager, ToolCallRequest, ToolError};

/// How the calls of one [`WorkflowStage`] run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StageMode {
    /// One call at a time, in request order. With `fail_fast`, the first failure cancels
    /// the rest of the stage.
    Sequential {
        /// Whether the first failure cancels the calls after it.
        fail_fast: bool,
    },
    /// The calls run concurrently (up to the batch's concurrency limit).
    Parallel {
        /// What a failure does to the other calls of the stage.
        fail_mode: FailMode,
    },
}

/// What a failure in a parallel stage does to the other calls of that stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailMode {
    /// Every call runs to its own end; failures are collected, nothing else is cancelled.
    #[default]
    CollectAll,
}

/// The calls at one dependency depth: every dependency of a call lies in an earlier stage.
/// A view into its [`Workflow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkflowStage<'w> {
    mode: StageMode,
    calls: &'w [usize],
}

impl<'w> WorkflowStage<'w> {
    /// How the stage runs: sequential if any of its calls asked for
    /// [`ExecutionHint::Sequential`], parallel otherwise.
    pub fn mode(&self) -> StageMode {
        self.mode
    }

    /// The stage's calls, as indices into the planned requests, in request order.
    pub fn calls(&self) -> &'w [usize] {
        self.calls
    }
}

/// Where a stage's calls lie in [`Workflow::stage_calls`], and how it runs.
#[derive(Debug, Clone, Copy)]
struct StageSpan {
    mode: StageMode,
    end: usize,
}

/// A batch of calls planned for execution: stages by dependency depth, each call's
/// dependencies resolved to indices.
///
/// Made by [`ToolCallManager::build_workflow`] (or [`Workflow::build`]) and run by
/// [`ToolCallManager::execute_workflow`]. It borrows the requests it plans.
///
/// ```
/// use toolsmith::{ExecutionHint, FailMode, StageMode, ToolArguments, ToolCallManager,
///     ToolCallRequest, Workflow};
///
/// let call = |id: &str| ToolCallRequest::new(id, "fetch", ToolArguments::new());
/// let requests = [
///     call("a"),
///     call("b"),
///     call("merge").depends_on(["a", "b"]),
///     call("save").depends_on(["merge"]).with_hint(ExecutionHint::Sequential),
/// ];
/// let workflow = ToolCallManager::new("s").build_workflow(&requests).unwrap();
///
/// let stages: Vec<&[usize]> = workflow.stages().map(|s| s.calls()).collect();
/// assert_eq!(stages, [&[0, 1][..], &[2], &[3]]);
/// assert_eq!(workflow.stage(0).unwrap().mode(), StageMode::Parallel { fail_mode: FailMode::CollectAll });
/// assert_eq!(workflow.stage(2).unwrap().mode(), StageMode::Sequential { fail_fast: true });
///
/// // A cycle is refused, naming the calls on it; nothing runs.
/// let cyclic = [call("x").depends_on(["y"]), call("y").depends_on(["x"])];
/// let err = Workflow::build(&cyclic).unwrap_err();
/// assert!(err.to_string().contains("x -> y -> x"), "{err}");
/// ```
#[derive(Clone)]
pub struct Workflow<'a> {
    requests: &'a [ToolCallRequest],
    /// Every call, stage after stage; stage `s` ends at `stages[s].end`. Flat, so that a
    /// long chain (one stage per call) costs no allocation per stage.
    stage_calls: Vec<usize>,
    stages: Vec<StageSpan>,
    /// Dependencies of call `i`: `dependencies[dependency_starts[i]..dependency_starts[i + 1]]`.
    dependency_starts: Vec<usize>,
    dependencies: Vec<usize>,
}

impl fmt::Debug for Workflow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for stage in self.stages() {
            let ids: Vec<&str> = stage
                .calls
                .iter()
                .map(|&i| self.requests[i].id.as_str())
                .collect();
            list.entry(&(stage.mode, ids));
        }
        list.finish()
    }
}

impl<'a> Workflow<'a> {
    /// Plans `requests` into stages by dependency depth.
    ///
    /// Fails with [`ToolError::InvalidArguments`], naming the calls concerned, when two
    /// requests share an id, a request depends on itself or on an id that is not in the
    /// batch, or the dependencies form a cycle (the error lists the ids on one cycle). Time
    /// and memory are linear in the number of calls plus dependency edges.
    pub fn build(requests: &'a [ToolCallRequest]) -> Result<Self, ToolError> {
        let count = requests.len();
        // Filled in with the ids' pass (a large batch's requests, about 90 bytes each, do
        // not fit in a core's cache: each pass over them reads them from memory again).
        let mut sequential = vec![false; count];
        // Dependencies resolved to indices, in CSR form.
        let mut dependency_starts = vec![0; count + 1];
        // Every id is indexed before any dependency is resolved: a duplicate id is reported
        // first. The lookup is chosen once, not per dependency.
        let dependencies = if count <= SCAN_LIMIT {
            lay_out(requests, &mut sequential, &mut dependency_starts);
            for (call, request) in requests.iter().enumerate() {
                if let Some(first) = requests[..call].iter().position(|r| r.id == request.id) {
                    return Err(duplicate_id(requests, first, call));
                }
            }
            resolve(requests, dependency_starts[count], |id| {
                requests.iter().position(|r| r.id == id)
            })?
        } else {
            let table = IdTable::new(requests, &mut sequential, &mut dependency_starts)
                .map_err(|(first, call)| duplicate_id(requests, first, call))?;
            resolve(requests, dependency_starts[count], |id| {
                table.get(id.as_bytes())
            })?
        };

        let depth = match depths(count, &dependency_starts, &dependencies) {
            Ok(depth) => depth,
            Err(cycle) => return Err(cycle_error(requests, &cycle)),
        };

        let (stage_calls, stages) = group_by_depth(&depth, &sequential);
        Ok(Self {
            requests,
            stage_calls,
            stages,
            dependency_starts,
            dependencies,
        })
    }

    /// The planned requests, as given.
    pub fn requests(&self) -> &'a [ToolCallRequest] {
        self.requests
    }

    /// The stages, in the order they run.
    pub fn stages(&self) -> impl ExactSizeIterator<Item = WorkflowStage<'_>> + Clone + '_ {
        (0..self.stages.len()).map(|s| self.stage_at(s))
    }

    /// The number of stages (the length of the longest dependency chain).
    pub fn stage_count(&self) -> usize {
        self.stages.len()
    }

    /// Stage number `index` (0 runs first).
    pub fn stage(&self, index: usize) -> Option<WorkflowStage<'_>> {
        (index < self.stages.len()).then(|| self.stage_at(index))
    }

    fn stage_at(&self, index: usize) -> WorkflowStage<'_> {
        let start = index
            .checked_sub(1)
            .map_or(0, |previous| self.stages[previous].end);
        let span = self.stages[index];
        WorkflowStage {
            mode: span.mode,
            calls: &self.stage_calls[start..span.end],
        }
    }

    /// The number of calls.
    pub fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether the workflow has no calls.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// The dependencies of call `index`, as indices into [`requests`](Self::requests), in the
    /// order the request lists them.
    ///
    /// # Panics
    /// When `index` is not below [`len`](Self::len).
    pub fn dependencies(&self, index: usize) -> &[usize] {
        &self.dependencies[self.dependency_starts[index]..self.dependency_starts[index + 1]]
    }

    /// Every call in the order a one-at-a-time executor would run them: stage by stage,
    /// request order within a stage.
    pub fn execution_order(&self) -> impl ExactSizeIterator<Item = &'a ToolCallRequest> + '_ {
        self.stage_calls.iter().map(|&i| &self.requests[i])
    }
}

/// The most calls of a cycle a planning error names.
const MAX_LISTED_CYCLE_CALLS: usize = 10;

/// Up to this many calls, ids are compared directly, which allocates nothing (a model's
/// batch is a handful of calls); larger batches go through an [`IdTable`].
const SCAN_LIMIT: usize = 16;

/// Fills in which calls asked to run sequentially, and where each call's dependencies will
/// lie: `dependency_starts[i]..dependency_starts[i + 1]` (`dependency_starts` has one more
/// entry than there are requests, the first 0).
fn lay_out(requests: &[ToolCallRequest], sequential: &mut [bool], dependency_starts: &mut [usize]) {
    let mut edges = 0;
    for ((request, sequential), end) in requests
        .iter()
        .zip(sequential)
        .zip(&mut dependency_starts[1..])
    {
        lay_out_one(request, &mut edges, sequential, end);
    }
}

/// [`lay_out`] of one request: its hint, and the end of its dependencies, `edges` counting
/// the dependencies of the requests before it. [`IdTable::new`] calls it in its own pass.
#[inline(always)]
fn lay_out_one(
    request: &ToolCallRequest,
    edges: &mut usize,
    sequential: &mut bool,
    end: &mut usize,
) {
    *sequential = request.execution_hint == ExecutionHint::Sequential;
    *edges += request.depends_on.len();
    *end = *edges;
}

#[cold]
fn duplicate_id(requests: &[ToolCallRequest], first: usize, call: usize) -> ToolError {
    let request = &requests[call];
    ToolError::invalid_arguments(
        &request.name,
        format!(
            "two calls of the batch have the id '{}' (calls #{first} and #{call}); ids must be unique",
            echoed_batch_id(&request.id)
        ),
    )
}

/// The error for the calls of `cycle` (each depending on the next, the last on the first):
/// the first [`MAX_LISTED_CYCLE_CALLS`] named, and how many there are when that is not all.
#[cold]
fn cycle_error(requests: &[ToolCallRequest], cycle: &[usize]) -> ToolError {
    let id = |call: usize| echoed_batch_id(&requests[call].id);
    let mut listed: Vec<Cow<'_, str>> = cycle
        .iter()
        .take(MAX_LISTED_CYCLE_CALLS)
        .map(|&call| id(call))
        .collect();
    let unlisted = cycle.len() - listed.len();
    let count = if unlisted > 0 {
        listed.push(Cow::Owned(format!("… ({unlisted} more)")));
        format!(" of {} calls", cycle.len())
    } else {
        String::new()
    };
    ToolError::invalid_arguments(
        &requests[cycle[0]].name,
        format!(
            "the calls' dependencies form a cycle{count}: {} -> {} (each depends on the next)",
            listed.join(" -> "),
            id(cycle[0])
        ),
    )
}

/// Every call's dependencies as indices, call after call, `find` giving the call that has
/// an id; or the error for the first dependency that is the call itself or not in the batch.
// Here and on `IdTable::new` and `depths`: run once a plan, and kept out of `build` so that
// their loops have the registers to themselves (inlined, they spilled more).
#[inline(never)]
fn resolve(
    requests: &[ToolCallRequest],
    edges: usize,
    find: impl Fn(&str) -> Option<usize>,
) -> Result<Vec<usize>, ToolError> {
    let mut dependencies = Vec::with_capacity(edges);
    let distance = prefetch_distance(requests.len());
    for (call, request) in requests.iter().enumerate() {
        if let Some(ahead) = requests.get(call + 2 * distance) {
            prefetch(ahead.depends_on.as_ptr().cast());
        }
        if let Some(ahead) = requests.get(call + distance) {
            for dependency in &ahead.depends_on {
                prefetch(dependency.as_ptr());
            }
        }
        for dependency in &request.depends_on {
            match find(dependency) {
                // Ids are unique, so finding the call itself is a self-dependency.
                Some(index) if index != call => dependencies.push(index),
                found => return Err(invalid_dependency(request, dependency, found.is_some())),
            }
        }
    }
    Ok(dependencies)
}

#[cold]
fn invalid_dependency(request: &ToolCallRequest, dependency: &str, itself: bool) -> ToolError {
    let id = echoed_batch_id(&request.id);
    let reason = if itself {
        format!("call '{id}' depends on itself")
    } else {
        format!(
            "call '{id}' depends on '{}', which is not a call of this batch",
            echoed_batch_id(dependency)
        )
    };
    ToolError::invalid_arguments(&request.name, reason)
}

/// The ids of a large batch: an open-addressing table (linear probing) of call indices,
/// each slot holding the id's [`IdKey`] and length with its call.
///
/// Not a `HashMap<&str, _>`: its keys point into the requests' own strings, scattered over
/// the heap, so confirming a match cost a cache miss on top of the table's. Here the key
/// holds all of an id of up to 16 bytes, so such an id is found, or found missing, reading
/// slots only; a longer one is compared in full once its key and length match.
struct IdTable<'a> {
    requests: &'a [ToolCallRequest],
    hasher: foldhash::fast::RandomState,
    /// Two random words for hashing an id's [`IdKey`].
    seeds: [u64; 2],
    /// A power of two, at least twice the calls: probes are short (measured faster than a
    /// fuller, smaller table) and always end at a free slot.
    slots: Vec<Slot>,
}

/// A slot of an [`IdTable`].
#[derive(Clone, Copy, Default)]
struct Slot {
    key: IdKey,
    /// `0` when the slot is free; otherwise the id's length (at most `u32::MAX`) over the
    /// call's index + 1.
    entry: u64,
}

impl<'a> IdTable<'a> {
    /// The table of `requests`' ids, or the indices of the first two calls sharing one.
    /// Fills in what [`lay_out`] does from the same read of each request.
    #[inline(never)]
    fn new(
        requests: &'a [ToolCallRequest],
        sequential: &mut [bool],
        dependency_starts: &mut [usize],
    ) -> Result<Self, (usize, usize)> {
        let hasher = foldhash::fast::RandomState::default();
        let mut table = Self {
            requests,
            seeds: [hasher.hash_one(0_u64), hasher.hash_one(1_u64)],
            hasher,
            slots: vec![Slot::default(); (requests.len() * 2).next_power_of_two()],
        };
        let mut edges = 0;
        let distance = prefetch_distance(requests.len());
        for (call, ((request, sequential), end)) in requests
            .iter()
            .zip(sequential)
            .zip(&mut dependency_starts[1..])
            .enumerate()
        {
            if let Some(ahead) = requests.get(call + distance) {
                prefetch(ahead.id.as_ptr());
            }
            lay_out_one(request, &mut edges, sequential, end);
            let id = request.id.as_bytes();
            let key = IdKey::of(id);
            match table.probe(id, key) {
                Ok(first) => return Err((first, call)),
                // Indices fit in 32 bits: four billion calls are not planned in memory.
                Err(free) => {
                    table.slots[free] = Slot {
                        key,
                        entry: length(id) << 32 | (call as u64 + 1),
                    }
                }
            }
        }
        Ok(table)
    }

    /// The call whose id is `id`.
    #[inline]
    fn get(&self, id: &[u8]) -> Option<usize> {
        self.probe(id, IdKey::of(id)).ok()
    }

    /// The call whose id is `id`, or the free slot where it would go.
    // Inlined into both loops, where its constants stay in registers.
    #[inline(always)]
    fn probe(&self, id: &[u8], key: IdKey) -> Result<usize, usize> {
        let hash = if id.len() <= IdKey::WHOLE {
            // What foldhash does with up to 16 bytes (random seeds, the first turned by the
            // length, one folded multiply), on the words the key already holds.
            let product = u128::from(key.head ^ self.seeds[0].rotate_right(id.len() as u32))
                * u128::from(key.tail ^ self.seeds[1]);
            product as u64 ^ (product >> 64) as u64
        } else {
            self.hasher.hash_one(id)
        };
        let length = length(id);
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let slot = &self.slots[at];
            if slot.entry == 0 {
                return Err(at);
            }
            if slot.entry >> 32 == length && slot.key == key {
                let call = (slot.entry as u32 - 1) as usize;
                if id.len() <= IdKey::WHOLE || self.requests[call].id.as_bytes() == id {
                    return Ok(call);
                }
            }
            at = (at + 1) & mask;
        }
    }
}

/// How many requests ahead planning asks for the strings it will read (ids, dependency
/// lists), for a batch of `count` calls. A large batch's strings lie scattered over the heap
/// and out of cache, and a request's are read in its turn only: asked for sixteen requests
/// early, their misses overlap (random DAG of 10k calls 1.15 → 0.87 ms, of 100k −30 %). A
/// batch under about 4k calls (some 600 KB) stays in cache between passes and gains nothing:
/// no prefetch there (`get` past the end).
#[inline(always)]
fn prefetch_distance(count: usize) -> usize {
    if count >= 4096 { 16 } else { usize::MAX / 4 }
}

/// Asks the processor to load the cache line at `at`.
#[inline(always)]
fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it does not fault or read memory into the program.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// An id's length as an [`IdTable`] slot holds it.
#[inline(always)]
fn length(id: &[u8]) -> u64 {
    u64::from(u32::try_from(id.len()).unwrap_or(u32::MAX))
}

/// An id's first and last eight bytes (overlapping; four and four when it is shorter, its
/// bytes when shorter still): with its length, all of an id of up to [`IdKey::WHOLE`] bytes.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct IdKey {
    head: u64,
    tail: u64,
}

impl IdKey {
    const WHOLE: usize = 16;

    #[inline(always)]
    fn of(id: &[u8]) -> Self {
        let len = id.len();
        // The slices have the array's length: the conversions do not fail.
        let word = |at: usize| u64::from_le_bytes(id[at..at + 8].try_into().unwrap_or_default());
        let half = |at: usize| {
            u64::from(u32::from_le_bytes(
                id[at..at + 4].try_into().unwrap_or_default(),
            ))
        };
        if len >= 8 {
            Self {
                head: word(0),
                tail: word(len - 8),
            }
        } else if len >= 4 {
            Self {
                head: half(0),
                tail: half(len - 4),
            }
        } else {
            Self {
                head: id.iter().fold(0, |key, &b| key << 8 | u64::from(b)),
                tail: 0,
            }
        }
    }
}

/// The depth of every call (0 for calls without dependencies: one more than its deepest
/// dependency otherwise), or, when the graph has a cycle, the calls on one cycle, each
/// depending on the next and the last on the first.
///
/// A depth-first walk along dependencies with an explicit stack (no recursion, so a chain of
/// any length is safe), each call finished once: linear in calls plus edges, and only the
/// depths and the walk's path in memory. A call met again while still on the path closes a
/// cycle, which is the path from that call on.
#[inline(never)]
fn depths(
    count: usize,
    dependency_starts: &[usize],
    dependencies: &[usize],
) -> Result<Vec<u32>, Vec<usize>> {
    const UNSEEN: u32 = u32::MAX;
    const ON_PATH: u32 = u32::MAX - 1;

    /// A call on the walk's path: the dependencies it has left to look at
    /// (`dependencies[next..end]`), and the deepest depth one of them has given so far.
    struct Step {
        call: usize,
        next: usize,
        end: usize,
        depth: u32,
    }
    let step = |call: usize| Step {
        call,
        next: dependency_starts[call],
        end: dependency_starts[call + 1],
        depth: 0,
    };

    let mut depth = vec![UNSEEN; count];
    // Most calls come after their dependencies, or are reached once those are finished: such
    // a call's depth is known at once, without putting it on the path.
    let ready = |depth: &[u32], call: usize| {
        dependencies[dependency_starts[call]..dependency_starts[call + 1]]
            .iter()
            .try_fold(0, |deepest: u32, &d| {
                let finished = depth[d];
                (finished < ON_PATH).then(|| deepest.max(finished + 1))
            })
    };
    // The path above the call being walked, which stays out of it (in registers).
    let mut path: Vec<Step> = Vec::new();
    for root in 0..count {
        if depth[root] != UNSEEN {
            continue;
        }
        if let Some(finished) = ready(&depth, root) {
            depth[root] = finished;
            continue;
        }
        depth[root] = ON_PATH;
        let mut walking = step(root);
        loop {
            if walking.next < walking.end {
                let dependency = dependencies[walking.next];
                walking.next += 1;
                let finished = match depth[dependency] {
                    UNSEEN => match ready(&depth, dependency) {
                        Some(finished) => {
                            depth[dependency] = finished;
                            finished
                        }
                        None => {
                            depth[dependency] = ON_PATH;
                            path.push(std::mem::replace(&mut walking, step(dependency)));
                            continue;
                        }
                    },
                    ON_PATH => {
                        path.push(walking);
                        let start = path
                            .iter()
                            .rposition(|s| s.call == dependency)
                            .unwrap_or_default();
                        return Err(path[start..].iter().map(|s| s.call).collect());
                    }
                    finished => finished,
                };
                walking.depth = walking.depth.max(finished + 1);
            } else {
                depth[walking.call] = walking.depth;
                let Some(mut dependent) = path.pop() else {
                    break;
                };
                dependent.depth = dependent.depth.max(walking.depth + 1);
                walking = dependent;
            }
        }
    }
    Ok(depth)
}

/// The stages: calls bucketed by depth (a counting sort, so request order is kept within a
/// stage), each sequential if any of its calls asked to be.
fn group_by_depth(depth: &[u32], sequential: &[bool]) -> (Vec<usize>, Vec<StageSpan>) {
    let stage_count = depth.iter().fold(0, |deepest, &d| deepest.max(d + 1)) as usize;
    let mut stages = vec![
        StageSpan {
            mode: StageMode::Parallel {
                fail_mode: FailMode::CollectAll,
            },
            end: 0,
        };
        stage_count
    ];
    for &d in depth {
        stages[d as usize].end += 1;
    }
    let mut next = Vec::with_capacity(stage_count);
    let mut end = 0;
    for stage in &mut stages {
        next.push(end);
        end += stage.end;
        stage.end = end;
    }
    let mut stage_calls = vec![0; depth.len()];
    for (i, (&d, &sequential)) in depth.iter().zip(sequential).enumerate() {
        let d = d as usize;
        let place = &mut next[d];
        stage_calls[*place] = i;
        *place += 1;
        if sequential {
            stages[d].mode = StageMode::Sequential { fail_fast: true };
        }
    }
    (stage_calls, stages)
}

impl ToolCallManager {
    /// Plans a batch of calls into stages by dependency depth; see [`Workflow::build`].
    ///
    /// Duplicate ids, self-dependencies, unknown dependency ids and cycles are
    /// [`ToolError::InvalidArguments`]; the loop reports them and runs nothing.
    pub fn build_workflow<'a>(
        &self,
        requests: &'a [ToolCallRequest],
    ) -> Result<Workflow<'a>, ToolError> {
        Workflow::build(requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::echo::MAX_ECHOED_BATCH_ID_CHARS;
    use crate::{ToolArguments, ToolErrorKind};

    fn call(id: &str, deps: &[&str]) -> ToolCallRequest {
        ToolCallRequest::new(id, "tool", ToolArguments::new()).depends_on(deps.iter().copied())
    }

    fn stage_ids<'a>(workflow: &Workflow<'a>) -> Vec<Vec<&'a str>> {
        workflow
            .stages()
            .map(|s| {
                s.calls()
                    .iter()
                    .map(|&i| workflow.requests()[i].id.as_str())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn stages_follow_dependency_depth_in_request_order() {
        let requests = [
            call("d", &["b", "c"]),
            call("b", &["a"]),
            call("c", &[]),
            call("a", &[]),
            call("e", &["a"]),
        ];
        let workflow = Workflow::build(&requests).unwrap();
        assert_eq!(
            stage_ids(&workflow),
            [vec!["c", "a"], vec!["b", "e"], vec!["d"]]
        );
        assert_eq!(workflow.dependencies(0), [1, 2]);
        let order: Vec<&str> = workflow.execution_order().map(|r| r.id.as_str()).collect();
        assert_eq!(order, ["c", "a", "b", "e", "d"]);
    }

    #[test]
    fn a_sequential_hint_makes_its_stage_sequential() {
        let requests = [
            call("a", &[]),
            call("b", &[]).with_hint(ExecutionHint::Sequential),
            call("c", &["a"]).with_hint(ExecutionHint::Parallel),
        ];
        let workflow = Workflow::build(&requests).unwrap();
        assert_eq!(
            workflow.stage(0).unwrap().mode(),
            StageMode::Sequential { fail_fast: true }
        );
        assert_eq!(
            workflow.stage(1).unwrap().mode(),
            StageMode::Parallel {
                fail_mode: FailMode::CollectAll
            }
        );
    }

    #[test]
    fn empty_batch_has_no_stages() {
        let workflow = Workflow::build(&[]).unwrap();
        assert!(workflow.is_empty());
        assert_eq!(workflow.stages().len(), 0);
        assert_eq!(workflow.stage_count(), 0);
        assert!(workflow.stage(0).is_none());
    }

    fn reason(requests: &[ToolCallRequest]) -> String {
        let err = Workflow::build(requests).unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
        err.to_string()
    }

    #[test]
    fn invalid_batches_name_what_is_wrong() {
        assert_eq!(
            reason(&[call("a", &[]), call("a", &[])]),
            "Invalid arguments for tool 'tool': two calls of the batch have the id 'a' (calls #0 and #1); ids must be unique"
        );
        assert_eq!(
            reason(&[call("a", &["a"])]),
            "Invalid arguments for tool 'tool': call 'a' depends on itself"
        );
        assert_eq!(
            reason(&[call("a", &[]), call("b", &["zz"])]),
            "Invalid arguments for tool 'tool': call 'b' depends on 'zz', which is not a call of this batch"
        );
    }

    #[test]
    fn a_cycle_is_named_by_its_ids() {
        // e and f hang off the cycle b -> c -> d -> b without being on it.
        let requests = [
            call("a", &[]),
            call("b", &["a", "c"]),
            call("c", &["d"]),
            call("d", &["b"]),
            call("e", &["d"]),
            call("f", &["e", "a"]),
        ];
        let message = reason(&requests);
        assert!(
            message.ends_with(
                "the calls' dependencies form a cycle: b -> c -> d -> b (each depends on the next)"
            ),
            "{message}"
        );
    }

    /// `n` calls `c0..`, each depending on the calls `deps(i)` names.
    fn numbered(n: usize, deps: impl Fn(usize) -> Vec<usize>) -> Vec<ToolCallRequest> {
        (0..n)
            .map(|i| {
                ToolCallRequest::new(format!("c{i}"), "tool", ToolArguments::new())
                    .depends_on(deps(i).into_iter().map(|d| format!("c{d}")))
            })
            .collect()
    }

    #[test]
    fn large_batches_are_checked_as_small_ones_are() {
        // Past the direct-comparison limit the ids are hashed: the same errors come out.
        let n = SCAN_LIMIT * 4;
        let mut duplicated = numbered(n, |_| Vec::new());
        duplicated[n - 1].id = "c3".to_owned();
        assert!(
            reason(&duplicated).ends_with(&format!(
                "two calls of the batch have the id 'c3' (calls #3 and #{}); ids must be unique",
                n - 1
            )),
            "{}",
            reason(&duplicated)
        );
        let mut unknown = numbered(n, |i| i.checked_sub(1).into_iter().collect());
        unknown[40] = unknown[40].clone().depends_on(["nowhere"]);
        assert!(
            reason(&unknown)
                .ends_with("call 'c40' depends on 'nowhere', which is not a call of this batch")
        );
        let cyclic = numbered(n, |i| {
            if i == 10 {
                vec![50]
            } else {
                i.checked_sub(1).into_iter().collect()
            }
        });
        let message = reason(&cyclic);
        // c10 depends on c50, which depends on c49, … down to c11, which depends on c10: 41
        // calls, the first ten named.
        let on_cycle: Vec<String> = std::iter::once(10)
            .chain((41..=50).rev())
            .take(MAX_LISTED_CYCLE_CALLS)
            .map(|i| format!("c{i}"))
            .collect();
        assert!(
            message.contains(&format!(
                "cycle of 41 calls: {} -> … (31 more) -> c10 (",
                on_cycle.join(" -> ")
            )),
            "{message}"
        );
    }

    #[test]
    fn large_batches_lay_out_hints_and_dependencies_from_the_ids_pass() {
        // Past the direct-comparison limit, hints and dependency counts are read in the same
        // pass as the ids: calls without dependencies between others, a sequential call in
        // the second stage only.
        let n = SCAN_LIMIT * 3;
        let deps = |i: usize| match i % 3 {
            0 => Vec::new(),
            1 => vec![i - 1],
            _ => vec![i - 1, i - 2],
        };
        let mut requests = numbered(n, deps);
        requests[n - 2] = requests[n - 2].clone().with_hint(ExecutionHint::Sequential);
        let workflow = Workflow::build(&requests).unwrap();
        for i in 0..n {
            assert_eq!(workflow.dependencies(i), deps(i), "call {i}");
        }
        let stages: Vec<Vec<usize>> = workflow.stages().map(|s| s.calls().to_vec()).collect();
        let at = |depth: usize| (0..n).filter(|i| i % 3 == depth).collect::<Vec<_>>();
        assert_eq!(stages, [at(0), at(1), at(2)]);
        let modes: Vec<StageMode> = workflow.stages().map(|s| s.mode()).collect();
        let parallel = StageMode::Parallel {
            fail_mode: FailMode::CollectAll,
        };
        assert_eq!(
            modes,
            [
                parallel,
                StageMode::Sequential { fail_fast: true },
                parallel
            ]
        );

        // A duplicate id is reported before a bad dependency of an earlier call.
        let mut both = requests;
        both[2].depends_on.push("nowhere".to_owned());
        both[n - 1].id = "c5".to_owned();
        assert!(
            reason(&both).ends_with("(calls #5 and #47); ids must be unique"),
            "{}",
            reason(&both)
        );
    }

    #[test]
    fn batches_large_enough_to_prefetch_plan_and_fail_as_small_ones() {
        // Past the size where the passes prefetch the strings ahead: the same plan, and the
        // same errors, including for calls within the prefetch distance of the end.
        let n = 5_000;
        assert!(prefetch_distance(n) < n);
        let deps = |i: usize| if i % 2 == 1 { vec![i - 1] } else { Vec::new() };
        let requests = numbered(n, deps);
        let workflow = Workflow::build(&requests).unwrap();
        assert_eq!(workflow.stage_count(), 2);
        for i in [0, 1, n / 2, n - 2, n - 1] {
            assert_eq!(workflow.dependencies(i), deps(i), "call {i}");
        }

        let mut duplicate = requests.clone();
        duplicate[n - 1].id = "c4990".to_owned();
        assert!(
            reason(&duplicate).ends_with("(calls #4990 and #4999); ids must be unique"),
            "{}",
            reason(&duplicate)
        );
        let mut unknown = requests;
        unknown[n - 3].depends_on.push("nowhere".to_owned());
        assert!(
            reason(&unknown)
                .ends_with("call 'c4997' depends on 'nowhere', which is not a call of this batch")
        );
    }

    #[test]
    fn a_long_chain_listed_backwards_is_planned_without_recursion() {
        // Each call depends on the one after it: the walk goes 200,000 calls deep.
        let n = 200_000;
        let requests = numbered(n, |i| if i + 1 < n { vec![i + 1] } else { Vec::new() });
        let workflow = Workflow::build(&requests).unwrap();
        assert_eq!(workflow.stage_count(), n);
        assert_eq!(workflow.stage(0).unwrap().calls(), [n - 1]);
        assert_eq!(workflow.stage(n - 1).unwrap().calls(), [0]);
        assert_eq!(workflow.dependencies(0), [1]);
    }

    #[test]
    fn planning_errors_stay_short_however_large_the_batch() {
        // A cycle through every call of a large batch: its error, which every call's outcome
        // carries, names the first calls of the cycle and how many there are, not all of them
        // (5,000 outcomes of 30 KB each before).
        let n = 5_000;
        let message = reason(&numbered(n, |i| vec![(i + 1) % n]));
        assert!(message.len() < 1_000, "{} bytes", message.len());
        assert!(
            message.ends_with(
                "form a cycle of 5000 calls: c0 -> c1 -> c2 -> c3 -> c4 -> c5 -> c6 -> c7 \
                 -> c8 -> c9 -> … (4990 more) -> c0 (each depends on the next)"
            ),
            "{message}"
        );
        // Ids the model wrote are quoted cut, wherever an error names them.
        let long = "x".repeat(100_000);
        let cut = format!("{}…", "x".repeat(MAX_ECHOED_BATCH_ID_CHARS));
        let messages = [
            reason(&[call(&long, &[]), call(&long, &[])]),
            reason(&[call(&long, &[&long])]),
            reason(&[call("a", &[&long])]),
            reason(&[call(&long, &["b"]), call("b", &[&long])]),
        ];
        for message in messages {
            assert!(message.len() < 1_000, "{} bytes", message.len());
            assert!(
                message.contains(&format!("'{cut}'")) || message.contains(&cut),
                "{message}"
            );
        }
    }

    #[test]
    fn a_cycle_reached_from_outside_names_only_the_cycle() {
        let requests = [call("x", &["y"]), call("y", &["z"]), call("z", &["y"])];
        assert!(reason(&requests).contains(": y -> z -> y ("));
    }

    #[test]
    fn large_batches_tell_ids_apart_by_every_byte() {
        // Ids a table slot holds whole (up to 16 bytes) and longer ones, which share their
        // first and last eight bytes and length and differ only in between; ids of every
        // length from 0 to 20, some equal to others but for a leading zero byte.
        let mut ids: Vec<String> = vec![String::new(), "a".into(), "\0a".into(), "\0\0a".into()];
        ids.extend((2..=20).map(|n| "a".repeat(n)));
        ids.extend((0..8).map(|i| format!("call_000{i}_0000_end")));
        ids.extend((0..8).map(|i| format!("toolu_01_{}_{i}_tail1234", "x".repeat(i))));
        assert!(ids.len() > SCAN_LIMIT);
        let requests: Vec<ToolCallRequest> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                ToolCallRequest::new(id.as_str(), "tool", ToolArguments::new())
                    .depends_on(ids[..i].iter().rev())
            })
            .collect();
        let workflow = Workflow::build(&requests).unwrap();
        for i in 0..ids.len() {
            assert_eq!(workflow.dependencies(i), (0..i).rev().collect::<Vec<_>>());
        }
        assert_eq!(workflow.stage_count(), ids.len());

        // The same first and last eight bytes and length as an id of the batch, another
        // middle: not that id.
        let mut unknown = requests.clone();
        unknown[5] = unknown[5].clone().depends_on(["call_0009_0000_end"]);
        assert!(
            reason(&unknown).ends_with(
                "call 'aaa' depends on 'call_0009_0000_end', which is not a call of this batch"
            ),
            "{}",
            reason(&unknown)
        );
        let last = ids.len() - 1;
        let mut duplicated = requests;
        duplicated[last].id = ids[last - 3].clone();
        assert!(reason(&duplicated).ends_with(&format!(
            "(calls #{} and #{last}); ids must be unique",
            last - 3
        )));
    }
}
