//! [`Workflow`]: a batch of calls planned into stages by dependency depth (spec 01 §5).
//!
//! Planning is a topological sort (Kahn's algorithm) over the calls and their `depends_on`
//! edges, so it takes time linear in calls + edges whatever the shape of the graph.

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
        // A fast non-cryptographic hash: ids are short, and planning is dominated by hashing
        // them once each and looking up each dependency once.
        let mut index_of: HashMap<&str, usize, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(count, foldhash::fast::RandomState::default());
        for (i, request) in requests.iter().enumerate() {
            match index_of.entry(request.id.as_str()) {
                Entry::Occupied(first) => {
                    return Err(ToolError::invalid_arguments(
                        &request.name,
                        format!(
                            "two calls of the batch have the id '{}' (calls #{} and #{i}); ids must be unique",
                            request.id,
                            first.get()
                        ),
                    ));
                }
                Entry::Vacant(slot) => {
                    slot.insert(i);
                }
            }
        }

        // Dependencies resolved to indices, in CSR form.
        let mut dependency_starts = Vec::with_capacity(count + 1);
        let mut dependencies = Vec::new();
        // Read here, in the same pass over the requests, to touch each request once more only.
        let mut sequential = Vec::with_capacity(count);
        dependency_starts.push(0);
        for request in requests {
            sequential.push(request.execution_hint == ExecutionHint::Sequential);
            for dependency in &request.depends_on {
                if *dependency == request.id {
                    return Err(ToolError::invalid_arguments(
                        &request.name,
                        format!("call '{}' depends on itself", request.id),
                    ));
                }
                let Some(&index) = index_of.get(dependency.as_str()) else {
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
            Err(unfinished) => {
                let cycle = find_cycle(&unfinished, &dependency_starts, &dependencies);
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

/// The depth of every call (0 for calls without dependencies), or, when the graph has a
/// cycle, the flags of the calls that could not be ordered.
fn depths(
    count: usize,
    dependency_starts: &[usize],
    dependencies: &[usize],
) -> Result<Vec<usize>, Vec<bool>> {
    // Reverse edges (dependency -> dependents), in CSR form.
    let mut dependent_starts = vec![0usize; count + 1];
    for &dependency in dependencies {
        dependent_starts[dependency + 1] += 1;
    }
    for i in 0..count {
        dependent_starts[i + 1] += dependent_starts[i];
    }
    let mut fill = dependent_starts.clone();
    let mut dependents = vec![0usize; dependencies.len()];
    for call in 0..count {
        for &dependency in &dependencies[dependency_starts[call]..dependency_starts[call + 1]] {
            dependents[fill[dependency]] = call;
            fill[dependency] += 1;
        }
    }

    let mut waiting_on: Vec<usize> = (0..count)
        .map(|i| dependency_starts[i + 1] - dependency_starts[i])
        .collect();
    let mut depth = vec![0usize; count];
    let mut ready: Vec<usize> = (0..count).filter(|&i| waiting_on[i] == 0).collect();
    let mut ordered = 0;
    while let Some(call) = ready.pop() {
        ordered += 1;
        let next_depth = depth[call] + 1;
        for &dependent in &dependents[dependent_starts[call]..dependent_starts[call + 1]] {
            depth[dependent] = depth[dependent].max(next_depth);
            waiting_on[dependent] -= 1;
            if waiting_on[dependent] == 0 {
                ready.push(dependent);
            }
        }
    }
    if ordered == count {
        Ok(depth)
    } else {
        Err(waiting_on.into_iter().map(|n| n > 0).collect())
    }
}

/// One cycle among the calls that could not be ordered, as a path of calls each depending on
/// the next (the last depends on the first).
///
/// Every unordered call still waits on at least one unordered dependency, so following such
/// dependencies from any of them must come back to a call already on the path.
fn find_cycle(
    unfinished: &[bool],
    dependency_starts: &[usize],
    dependencies: &[usize],
) -> Vec<usize> {
    const UNSEEN: usize = usize::MAX;
    let mut position = vec![UNSEEN; unfinished.len()];
    let mut path = Vec::new();
    let mut call = unfinished
        .iter()
        .position(|&u| u)
        .expect("a failed ordering leaves at least one call unordered");
    while position[call] == UNSEEN {
        position[call] = path.len();
        path.push(call);
        call = dependencies[dependency_starts[call]..dependency_starts[call + 1]]
            .iter()
            .copied()
            .find(|&d| unfinished[d])
            .expect("an unordered call waits on an unordered dependency");
    }
    path.split_off(position[call])
}

/// The stages: calls bucketed by depth (a counting sort, so request order is kept within a
/// stage), each sequential if any of its calls asked to be.
fn group_by_depth(depth: &[usize], sequential: &[bool]) -> (Vec<usize>, Vec<StageSpan>) {
    let stage_count = depth.iter().max().map_or(0, |&d| d + 1);
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
        stages[d].end += 1;
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

    #[test]
    fn a_cycle_reached_from_outside_names_only_the_cycle() {
        let requests = [call("x", &["y"]), call("y", &["z"]), call("z", &["y"])];
        assert!(reason(&requests).contains(": y -> z -> y ("));
    }
}
