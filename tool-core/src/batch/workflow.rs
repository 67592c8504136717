//! [`Workflow`]: a batch of calls planned into stages by dependency depth (spec 01 §5).
//!
//! Planning is a depth-first walk over the calls and their `depends_on` edges, so it takes
//! time linear in calls + edges whatever the shape of the graph.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;

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
/// use toolsmith_core::{ExecutionHint, FailMode, StageMode, ToolArguments, ToolCallManager,
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
        let index_of = IdIndex::new(requests)?;

        // Dependencies resolved to indices, in CSR form.
        let mut dependency_starts = Vec::with_capacity(count + 1);
        // Most calls of a planned batch have a dependency or two.
        let mut dependencies = Vec::with_capacity(count);
        // Read here, in the same pass over the requests, to touch each request once more only.
        let mut sequential = Vec::with_capacity(count);
        dependency_starts.push(0);
        for (call, request) in requests.iter().enumerate() {
            sequential.push(request.execution_hint == ExecutionHint::Sequential);
            for dependency in &request.depends_on {
                let found = index_of.get(requests, dependency);
                // Ids are unique, so finding the call itself is a self-dependency.
                if found == Some(call) {
                    return Err(ToolError::invalid_arguments(
                        &request.name,
                        format!("call '{}' depends on itself", request.id),
                    ));
                }
                let Some(index) = found else {
                    return Err(ToolError::invalid_arguments(
                        &request.name,
                        format!(
                            "call '{}' depends on '{dependency}', which is not a call of this batch",
                            request.id
                        ),
                    ));
                };
                dependencies.push(index);
            }
            dependency_starts.push(dependencies.len());
        }
        drop(index_of);

        let depth = match depths(count, &dependency_starts, &dependencies) {
            Ok(depth) => depth,
            Err(cycle) => {
                let ids: Vec<&str> = cycle.iter().map(|&i| requests[i].id.as_str()).collect();
                return Err(ToolError::invalid_arguments(
                    &requests[cycle[0]].name,
                    format!(
                        "the calls' dependencies form a cycle: {} -> {} (each depends on the next)",
                        ids.join(" -> "),
                        ids[0]
                    ),
                ));
            }
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

/// Each call's index by its id, refusing duplicate ids. A model's batch is a handful of
/// calls: up to [`IdIndex::SCAN_LIMIT`] of them are compared directly, which allocates
/// nothing; larger batches hash each id once.
enum IdIndex<'a> {
    Scan,
    Hashed(HashMap<&'a str, u32, foldhash::fast::RandomState>),
}

impl<'a> IdIndex<'a> {
    const SCAN_LIMIT: usize = 16;

    fn new(requests: &'a [ToolCallRequest]) -> Result<Self, ToolError> {
        let duplicate = |first: usize, i: usize| {
            let request = &requests[i];
            ToolError::invalid_arguments(
                &request.name,
                format!(
                    "two calls of the batch have the id '{}' (calls #{first} and #{i}); ids must be unique",
                    request.id
                ),
            )
        };
        if requests.len() <= Self::SCAN_LIMIT {
            for (i, request) in requests.iter().enumerate() {
                if let Some(first) = requests[..i].iter().position(|r| r.id == request.id) {
                    return Err(duplicate(first, i));
                }
            }
            return Ok(Self::Scan);
        }
        // Indices fit in `u32`: a batch of four billion calls is not planned in memory.
        let mut index: HashMap<&str, u32, _> = HashMap::with_capacity_and_hasher(
            requests.len(),
            foldhash::fast::RandomState::default(),
        );
        for (i, request) in requests.iter().enumerate() {
            match index.entry(request.id.as_str()) {
                Entry::Occupied(first) => return Err(duplicate(*first.get() as usize, i)),
                Entry::Vacant(slot) => {
                    slot.insert(i as u32);
                }
            }
        }
        Ok(Self::Hashed(index))
    }

    fn get(&self, requests: &[ToolCallRequest], id: &str) -> Option<usize> {
        match self {
            Self::Scan => requests.iter().position(|r| r.id == id),
            Self::Hashed(index) => index.get(id).map(|&i| i as usize),
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
fn depths(
    count: usize,
    dependency_starts: &[usize],
    dependencies: &[usize],
) -> Result<Vec<u32>, Vec<usize>> {
    const UNSEEN: u32 = u32::MAX;
    const ON_PATH: u32 = u32::MAX - 1;

    /// A call on the walk's path: the next of its dependencies to look at, and the deepest
    /// depth one of them has given so far.
    struct Step {
        call: usize,
        next: usize,
        depth: u32,
    }

    let mut depth = vec![UNSEEN; count];
    let mut path: Vec<Step> = Vec::new();
    for root in 0..count {
        if depth[root] != UNSEEN {
            continue;
        }
        depth[root] = ON_PATH;
        path.push(Step {
            call: root,
            next: dependency_starts[root],
            depth: 0,
        });
        while let Some(step) = path.last_mut() {
            if step.next < dependency_starts[step.call + 1] {
                let dependency = dependencies[step.next];
                step.next += 1;
                match depth[dependency] {
                    UNSEEN => {
                        depth[dependency] = ON_PATH;
                        path.push(Step {
                            call: dependency,
                            next: dependency_starts[dependency],
                            depth: 0,
                        });
                    }
                    ON_PATH => {
                        let start = path
                            .iter()
                            .rposition(|s| s.call == dependency)
                            .unwrap_or_default();
                        return Err(path[start..].iter().map(|s| s.call).collect());
                    }
                    finished => step.depth = step.depth.max(finished + 1),
                }
            } else {
                let finished = step.depth;
                depth[step.call] = finished;
                path.pop();
                if let Some(dependent) = path.last_mut() {
                    dependent.depth = dependent.depth.max(finished + 1);
                }
            }
        }
    }
    Ok(depth)
}

/// The stages: calls bucketed by depth (a counting sort, so request order is kept within a
/// stage), each sequential if any of its calls asked to be.
fn group_by_depth(depth: &[u32], sequential: &[bool]) -> (Vec<usize>, Vec<StageSpan>) {
    let stage_count = depth.iter().max().map_or(0, |&d| d as usize + 1);
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
    for (i, &d) in depth.iter().enumerate() {
        let d = d as usize;
        stage_calls[next[d]] = i;
        next[d] += 1;
        if sequential[i] {
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
        let n = IdIndex::SCAN_LIMIT * 4;
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
        // c10 depends on c50, which depends on c49, … down to c11, which depends on c10.
        let on_cycle: Vec<String> = std::iter::once(10)
            .chain((11..=50).rev())
            .map(|i| format!("c{i}"))
            .collect();
        assert!(
            message.contains(&format!("cycle: {} -> c10 (", on_cycle.join(" -> "))),
            "{message}"
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
    fn a_cycle_reached_from_outside_names_only_the_cycle() {
        let requests = [call("x", &["y"]), call("y", &["z"]), call("z", &["y"])];
        assert!(reason(&requests).contains(": y -> z -> y ("));
    }
}
