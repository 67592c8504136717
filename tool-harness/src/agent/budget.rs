//! A run's token budget
//! ([`with_token_budget`](super::AgentSessionBuilder::with_token_budget)): what a run has
//! spent, and the check before each model call.

use super::ledger::RunLedger;
use super::session::RunEnd;
use super::{AgentRun, AgentSession, AgentSessionBuilder};

impl AgentSessionBuilder {
    /// A bound on the tokens one run may spend, for a run nobody watches. Before each model
    /// call the run's tokens so far are counted — its own model calls' and its
    /// sub-agents' (the runs its tool calls made or started: an
    /// [`AgentTool`](super::AgentTool), the `agent` group's children, theirs), as
    /// [`AgentRun::total_usage`] counts them — and at `tokens` or more the call is not made:
    /// the run ends with [`AgenticError::TokenBudget`](super::AgenticError::TokenBudget)
    /// carrying the run, its conversation as the last turn left it, every call the model
    /// made answered (`send` keeps it, so the conversation can go on), and the `agent`
    /// children its calls started in the background are stopped, as for a cancelled run,
    /// lest they spend on (a run that ends with a final answer at its budget, below, leaves
    /// them running, as any run with an answer does). Each run has the whole budget: a `send` counts its own tokens,
    /// not the conversation's before it. By default there is none.
    ///
    /// A token is an input or an output token as the model reported it
    /// ([`Usage::total_tokens`](crate::model::Usage::total_tokens)); cached input tokens
    /// count in full, as input the model read: a provider's discount for them differs from
    /// one provider to the next, and not every API reports them, so the bound is the same
    /// whichever model runs.
    ///
    /// The budget bounds the run's sub-agents too: before each of their model calls, the
    /// same count is made for the run above them, and once it has spent its budget their
    /// call is not made either (they end with
    /// [`AgenticError::CallerTokenBudget`](super::AgenticError::CallerTokenBudget), which
    /// their caller's model is told), also after the run that started them has ended.
    ///
    /// The check comes before each call, so a run ends past its budget by what the call
    /// that crossed it spent, and by what its sub-agents' calls under way spent; with [`with_final_answer_on_limit`](Self::with_final_answer_on_limit) a
    /// run at its budget makes one more call, without tools, for its answer, which may pass
    /// it by that call's tokens too. A request asked again after the
    /// [context overflow policy](Self::with_context_overflow) shortened the conversation,
    /// and each request for the answer of [`send_as`](AgentSession::send_as), is a model
    /// call and checked as one. A budget of 0 is refused by `build()`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::{ToolShed, tool_fn};
    /// use toolsmith::harness::agent::{AgentSession, AgenticError};
    /// use toolsmith::harness::model::{Message, ScriptedModel, ScriptedTurn, Usage};
    ///
    /// /// Add two integers.
    /// #[tool_fn]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let model = ScriptedModel::new([
    ///     ScriptedTurn::call("shed", json!({"description": "add numbers"}))
    ///         .with_usage(Usage::new(50, 10)),
    ///     // 60 of 100 spent: this call is made, and passes the budget.
    ///     ScriptedTurn::call("add", json!({"a": 2, "b": 3})).with_usage(Usage::new(40, 5)),
    ///     ScriptedTurn::text("2 + 3 = 5"),
    /// ]);
    /// let session = AgentSession::builder(model.clone())
    ///     .with_model("scripted")
    ///     .with_toolshed(ToolShed::new().tool(Add))
    ///     .with_token_budget(100)
    ///     .build()
    ///     .unwrap();
    /// let Err(AgenticError::TokenBudget { limit, spent, run }) = session.run("What is 2 + 3?").await
    /// else {
    ///     panic!("the budget ends the run");
    /// };
    /// assert_eq!((limit, spent), (100, 105));
    /// // The third call was not made; the second's call has its result.
    /// assert_eq!(run.model_calls, 2);
    /// assert_eq!(model.remaining(), 1);
    /// assert!(matches!(run.transcript.last(), Some(Message::ToolResults { .. })));
    /// # }
    /// ```
    pub fn with_token_budget(mut self, tokens: u64) -> Self {
        self.token_budget = Some(tokens);
        self
    }
}

impl AgentSession {
    /// How the run ends when its budget is spent before its next model call: the tokens of
    /// `run`'s own calls and of its descendants, input and output. The descendants' are what
    /// `ledger`, the run's, has counted so far (the answer requests of `send_as` that follow
    /// the run go on in its ledger), or `run.child_usage`, the count when the run ended, if
    /// that is more (a ledger not the run's starts at none): the two are one count, never
    /// added.
    ///
    /// A sub-agent's run also ends when the budget of a run above it is spent
    /// ([`RunLedger::caller_over_budget`]), whatever its own.
    pub(super) fn budget_spent(&self, run: &AgentRun, ledger: &RunLedger) -> Option<RunEnd> {
        if let Some(limit) = self.token_budget {
            let descendants = ledger.descendants().total_tokens();
            let spent = run
                .usage
                .total_tokens()
                .saturating_add(descendants.max(run.child_usage.total_tokens()));
            if spent >= limit {
                return Some(RunEnd::TokenBudget { limit, spent });
            }
        }
        let (limit, spent) = ledger.caller_over_budget()?;
        Some(RunEnd::CallerTokenBudget { limit, spent })
    }
}
