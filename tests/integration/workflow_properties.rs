//! Property tests on random dependency graphs, given in a random request order:
//!
//! - planning puts every call in exactly one stage, after all of its dependencies, at the
//!   depth of its longest dependency chain, in request order within a stage;
//! - a cycle added anywhere is always found, and the ids the error names form a cycle;
//! - a batch's outcomes are complete and in request order, failures propagate to
//!   dependents and stop sequential stages exactly as specified, and every call that runs,
//!   runs once and after its dependencies.

use std::collections::{HashMap, HashSet};

use crate::support::{Probe, call, probe_tool};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;
use toolsmith::{
    ExecutionHint, StageMode, ToolAnnotations, ToolCallManager, ToolCallRequest, ToolError,
    ToolErrorKind, Workflow,
};

/// A random DAG over `n` nodes (node `i` depends only on nodes below `i`), with a per-node
/// failure flag and hint, presented in a random order.
#[derive(Debug, Clone)]
struct Graph {
    requests: Vec<ToolCallRequest>,
    fails: HashSet<String>,
}

fn graphs(max_nodes: usize) -> impl Strategy<Value = Graph> {
    (1..=max_nodes)
        .prop_flat_map(|n| {
            (
                prop::collection::vec(prop::collection::vec(any::<Index>(), 0..4), n),
                prop::collection::vec(prop::bool::weighted(0.2), n),
                prop::collection::vec(prop::bool::weighted(0.15), n),
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
        .prop_map(|(deps, fails, sequential, order)| {
            let mut requests = Vec::with_capacity(order.len());
            let mut failing = HashSet::new();
            for node in order {
                let id = format!("n{node}");
                let extra = if fails[node] {
                    failing.insert(id.clone());
                    json!({"fail": "execution"})
                } else {
                    json!({})
                };
                let mut dependencies: Vec<String> = if node == 0 {
                    Vec::new()
                } else {
                    deps[node]
                        .iter()
                        .map(|d| format!("n{}", d.index(node)))
                        .collect()
                };
                dependencies.dedup();
                let hint = if sequential[node] {
                    ExecutionHint::Sequential
                } else {
                    ExecutionHint::Unspecified
                };
                requests.push(
                    call(&id, "work", extra)
                        .depends_on(dependencies)
                        .with_hint(hint),
                );
            }
            Graph {
                requests,
                fails: failing,
            }
        })
}

fn index_by_id(requests: &[ToolCallRequest]) -> HashMap<&str, usize> {
    requests
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect()
}

/// The expected result of every call, simulated stage by stage from the spec's rules.
fn expected_results(
    workflow: &Workflow<'_>,
    fails: &HashSet<String>,
) -> Vec<Result<(), ToolError>> {
    let requests = workflow.requests();
    let mut results: Vec<Option<Result<(), ToolError>>> = vec![None; requests.len()];
    for stage in workflow.stages() {
        let fail_fast = matches!(stage.mode(), StageMode::Sequential { fail_fast: true });
        let mut stopped_by: Option<&str> = None;
        for &i in stage.calls() {
            let result = if let Some(failed) = stopped_by {
                Err(ToolError::Cancelled(format!(
                    "call {failed} failed earlier in this sequential stage"
                )))
            } else if let Some(&d) = workflow
                .dependencies(i)
                .iter()
                .find(|&&d| results[d].as_ref().unwrap().is_err())
            {
                Err(ToolError::Cancelled(format!(
                    "dependency {} failed",
                    requests[d].id
                )))
            } else if fails.contains(&requests[i].id) {
                Err(ToolError::execution(
                    "work",
                    format!("{} broke", requests[i].id),
                ))
            } else {
                Ok(())
            };
            if fail_fast && result.is_err() && stopped_by.is_none() {
                stopped_by = Some(&requests[i].id);
            }
            results[i] = Some(result);
        }
    }
    results.into_iter().map(Option::unwrap).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_call_is_planned_once_after_its_dependencies(graph in graphs(60)) {
        let requests = &graph.requests;
        let workflow = Workflow::build(requests).unwrap();
        let by_id = index_by_id(requests);
        let mut stage_of = vec![usize::MAX; requests.len()];
        for (s, stage) in workflow.stages().enumerate() {
            prop_assert!(!stage.calls().is_empty());
            prop_assert!(stage.calls().windows(2).all(|w| w[0] < w[1]), "request order");
            let sequential = stage.calls().iter()
                .any(|&i| requests[i].execution_hint == ExecutionHint::Sequential);
            prop_assert_eq!(matches!(stage.mode(), StageMode::Sequential { fail_fast: true }), sequential);
            for &i in stage.calls() {
                prop_assert_eq!(stage_of[i], usize::MAX, "call {} planned twice", i);
                stage_of[i] = s;
            }
        }
        prop_assert!(stage_of.iter().all(|&s| s != usize::MAX), "every call planned");
        for (i, request) in requests.iter().enumerate() {
            let deps: Vec<usize> = request.depends_on.iter().map(|d| by_id[d.as_str()]).collect();
            prop_assert_eq!(workflow.dependencies(i), &deps[..]);
            let depth = deps.iter().map(|&d| stage_of[d] + 1).max().unwrap_or(0);
            prop_assert_eq!(stage_of[i], depth, "call {} at the depth of its longest chain", i);
        }
        let order: Vec<&str> = workflow.execution_order().map(|r| r.id.as_str()).collect();
        prop_assert_eq!(order.len(), requests.len());
    }

    #[test]
    fn a_cycle_is_always_found(graph in graphs(40), from in any::<Index>(), to in any::<Index>()) {
        let mut requests = graph.requests;
        let by_id: HashMap<String, usize> = requests.iter().enumerate()
            .map(|(i, r)| (r.id.clone(), i)).collect();
        // Pick a call v and a call u that v reaches through dependencies (or v itself), and
        // make u depend on v: that closes a cycle.
        let v = from.index(requests.len());
        let mut reachable = vec![v];
        let mut seen = HashSet::from([v]);
        let mut next = 0;
        while next < reachable.len() {
            for dep in &requests[reachable[next]].depends_on {
                let d = by_id[dep];
                if seen.insert(d) {
                    reachable.push(d);
                }
            }
            next += 1;
        }
        let u = reachable[to.index(reachable.len())];
        let v_id = requests[v].id.clone();
        requests[u].depends_on.push(v_id);

        let err = Workflow::build(&requests).unwrap_err();
        prop_assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
        let message = err.to_string();
        if u == v {
            prop_assert!(message.ends_with(&format!("call '{}' depends on itself", requests[v].id)), "{}", message);
        } else {
            // `cycle: a -> b -> a (…`, or past ten calls `cycle of 12 calls: a -> … (2 more) -> a (…`.
            let cycle = message
                .split_once("form a cycle")
                .and_then(|(_, rest)| rest.split_once(": "))
                .and_then(|(_, rest)| rest.strip_suffix(" (each depends on the next)"));
            prop_assert!(cycle.is_some(), "{}", message);
            let ids: Vec<&str> = cycle.unwrap().split(" -> ").collect();
            prop_assert!(ids.len() >= 3 && ids.first() == ids.last(), "{}", message);
            // Each named call depends on the next named; the calls left out lie between the
            // last named and the first again.
            for pair in ids.windows(2).filter(|pair| !pair.iter().any(|id| id.starts_with('…'))) {
                let depends = requests[by_id[pair[0]]].depends_on.iter().any(|d| d == pair[1]);
                prop_assert!(depends, "{} does not depend on {}: {}", pair[0], pair[1], message);
            }
        }
    }

    #[test]
    fn outcomes_are_complete_in_order_and_follow_failures(graph in graphs(40)) {
        let probe = Probe::new();
        let manager = ToolCallManager::new("props");
        manager.register(std::sync::Arc::new(probe_tool("work", ToolAnnotations::default(), &probe))).unwrap();
        manager.set_concurrency_limit(4);
        let requests = &graph.requests;
        let outcomes = futures::executor::block_on(manager.execute_batch(requests));

        prop_assert_eq!(outcomes.len(), requests.len());
        let workflow = Workflow::build(requests).unwrap();
        let expected = expected_results(&workflow, &graph.fails);
        for ((outcome, request), expected) in outcomes.iter().zip(requests).zip(expected) {
            prop_assert_eq!(&outcome.id, &request.id);
            match expected {
                Ok(()) => {
                    prop_assert!(outcome.result.is_ok(), "{:?}", outcome);
                    prop_assert_eq!(outcome.attempts, 1);
                }
                Err(error) => {
                    let ran = error.kind() != ToolErrorKind::Cancelled;
                    prop_assert_eq!(outcome.result.as_ref().unwrap_err(), &error);
                    prop_assert_eq!(outcome.attempts, u32::from(ran));
                }
            }
            let ran = outcome.attempts == 1;
            prop_assert_eq!(probe.runs(&request.id), u32::from(ran), "{}", request.id);
        }
        // Every call that ran started after each of its dependencies had started (and, the
        // tools being instant, ended).
        let started: HashMap<String, usize> = probe.started_tags().into_iter()
            .enumerate().map(|(i, tag)| (tag, i)).collect();
        for request in requests {
            if let Some(at) = started.get(&request.id) {
                for dep in &request.depends_on {
                    prop_assert!(started[dep] < *at, "{} ran before {}", request.id, dep);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn a_deadline_leaves_outcomes_complete_and_consistent(
        graph in graphs(30),
        sleeps in prop::collection::vec(0u64..40, 30),
        deadline_ms in 0u64..150,
        limit in 1usize..6,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let probe = runtime.block_on(async { Probe::new() });
        let manager = ToolCallManager::new("props");
        manager.register(std::sync::Arc::new(probe_tool("work", ToolAnnotations::default(), &probe))).unwrap();
        let requests: Vec<ToolCallRequest> = graph.requests.iter().enumerate().map(|(i, r)| {
            let mut r = r.clone();
            r.arguments.insert("ms", json!(sleeps[i]));
            r
        }).collect();
        let deadline = std::time::Duration::from_millis(deadline_ms);
        let options = toolsmith::BatchOptions::new()
            .with_deadline(deadline)
            .with_concurrency_limit(limit);
        let (outcomes, elapsed) = runtime.block_on(async {
            let started = tokio::time::Instant::now();
            let outcomes = manager.execute_batch_with(&requests, &options).await;
            (outcomes, started.elapsed())
        });

        prop_assert!(elapsed <= deadline, "{:?} > {:?}", elapsed, deadline);
        prop_assert_eq!(probe.running(), 0, "no call is left running");
        prop_assert_eq!(outcomes.len(), requests.len());
        let by_id = index_by_id(&requests);
        let stopped = "stopped: the batch deadline of";
        let not_run = "not run: the batch deadline of";
        for (outcome, request) in outcomes.iter().zip(&requests) {
            prop_assert_eq!(&outcome.id, &request.id);
            prop_assert_eq!(probe.runs(&request.id), outcome.attempts, "{}", request.id);
            match &outcome.result {
                Ok(_) => prop_assert_eq!(outcome.attempts, 1),
                Err(ToolError::Cancelled(reason)) if reason.starts_with(stopped) => {
                    prop_assert_eq!(outcome.attempts, 1);
                }
                Err(ToolError::Cancelled(reason)) if reason.starts_with(not_run) => {
                    prop_assert_eq!(outcome.attempts, 0);
                }
                Err(ToolError::Cancelled(reason)) => {
                    prop_assert_eq!(outcome.attempts, 0);
                    let failed = reason.strip_prefix("dependency ")
                        .and_then(|r| r.strip_suffix(" failed"))
                        .or_else(|| reason.strip_prefix("call ")
                            .and_then(|r| r.strip_suffix(" failed earlier in this sequential stage")));
                    prop_assert!(failed.is_some(), "{}", reason);
                    prop_assert!(outcomes[by_id[failed.unwrap()]].failed(), "{}", reason);
                }
                Err(error) => {
                    prop_assert!(graph.fails.contains(&request.id), "{}", error);
                    prop_assert_eq!(outcome.attempts, 1);
                }
            }
        }
    }
}
