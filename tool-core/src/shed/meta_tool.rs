//! The built-in `shed` meta-tool: what the model is offered first, and how it finds (and so
//! activates) the session's other tools.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::discovery::{FoundTool, ToolDiscovery};
use super::name_directory::NameDirectory;
use crate::manager::RegisteredTool;
use crate::schema::validation::ArgumentValidator;
use crate::tool::echo::echoed;
use crate::{
    Args, Embedder, JsonText, SHED_TOOL_NAME, Tool, ToolArgs, ToolArguments, ToolCallManager,
    ToolCallResult, ToolDeclarations, ToolDefinition, ToolError, is_blank, scheme,
};

/// How many tools `shed` returns when the model gives no `limit`.
pub const DEFAULT_SHED_LIMIT: usize = 5;

/// The most tools one `shed` call returns; a larger `limit` is capped to this.
pub const MAX_SHED_LIMIT: usize = 20;

/// A `shed` query of the form `select:name1,name2` activates those tools by exact name.
pub const SELECT_PREFIX: &str = "select:";

/// The most names one `select:` query takes, as [`MAX_SHED_LIMIT`] caps a search: the names
/// after them are neither looked up nor activated, and the result's
/// [`hint`](ShedResult::hint) says how many were left and from which one on.
pub const MAX_SELECTED: usize = MAX_SHED_LIMIT;

/// The category of the `shed` meta-tool.
pub const SHED_CATEGORY: &str = "discovery";

/// One tool as `shed` shows it to the model: enough to call it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSummary {
    /// The name to call it by.
    pub name: String,
    /// What it does (for a command group, one line per command).
    pub description: String,
    /// Its category.
    pub category: String,
    /// The JSON Schema of its arguments, as declared to the provider.
    pub arguments: Value,
}

impl ToolSummary {
    /// The summary of `tool`.
    pub fn of(tool: &Tool) -> Self {
        let spec = tool.function_spec();
        Self {
            name: spec.name,
            description: spec.description,
            category: tool.category().to_owned(),
            arguments: spec.parameters,
        }
    }
}

/// What a `shed` call returns: the tools found, each now active.
///
/// When nothing is found (or `select:` names a tool that does not exist), it also says what
/// the model can do next: the tool names closest to what it wrote, the categories of the
/// session's tools, and a `hint` in words. Those fields are serialized only then, so a
/// successful search reads `{"tools": […]}`.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};
///
/// # futures::executor::block_on(async {
/// let manager = ToolCallManager::new("demo");
/// manager.register(Arc::new(FnTool::new("get_weather", "Current conditions for a city.",
///     Args::empty(), |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("sunny")) })
///     .with_category("weather"))).unwrap();
/// let found = manager.shed("wether", None).await;
/// assert!(found.tools.is_empty());
/// assert_eq!(found.closest, ["get_weather"]);
/// assert_eq!(found.categories, ["weather"]);
/// assert!(found.hint.unwrap().starts_with("No tool matched \"wether\"."));
/// # });
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShedResult {
    /// The tools found, best first (for `select:`, in the order named).
    pub tools: Vec<ToolSummary>,
    /// Names given to `select:` that are not tools of this session (each cut after 240
    /// characters, with `…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
    /// When nothing matched, or `select:` named unknown tools: the session's tool names
    /// closest to what was written (a misspelt or partial name), best first, at most
    /// [`MAX_CLOSEST`]. Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closest: Vec<String>,
    /// When no tool was found: the categories of the session's tools, sorted (the default
    /// category, which says nothing, left out), to describe the task in their words. Empty
    /// otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// When no tool was found, a name was unknown, or `select:` named more than
    /// [`MAX_SELECTED`] tools: what happened and what to try next, in words for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The most names [`ShedResult::closest`] lists.
pub const MAX_CLOSEST: usize = 5;

/// The definition of the `shed` meta-tool.
///
/// ```
/// use toolsmith::shed::shed_tool;
///
/// let shed = shed_tool();
/// assert_eq!(shed.name(), "shed");
/// let spec = shed.function_spec();
/// assert_eq!(spec.parameters["required"], serde_json::json!(["description"]));
/// ```
pub fn shed_tool() -> Tool {
    SHED_DEFINITION.clone()
}

static SHED_DEFINITION: LazyLock<Tool> = LazyLock::new(|| {
    Tool::SingleCommand(
        ToolDefinition::new(
            SHED_TOOL_NAME,
            format!(
                "Find the tools you need. Describe the task in a few words; the best matching \
                 tools are returned with their descriptions and argument schemas, and become \
                 available to call. Call this before any other tool. To enable tools whose \
                 names you already know, pass `{SELECT_PREFIX}name1,name2`."
            ),
            Args::new(
                scheme::object()
                    .required(
                        "description",
                        scheme::string().min_len(1).describe(
                            "What you want to do, in a few words, or `select:` followed by \
                             exact tool names separated by commas.",
                        ),
                    )
                    .optional(
                        "limit",
                        scheme::integer().minimum(1).describe(format!(
                            "How many tools to return (default {DEFAULT_SHED_LIMIT}, at most \
                             {MAX_SHED_LIMIT})."
                        )),
                    )
                    .build(),
            ),
        )
        .with_category(SHED_CATEGORY),
    )
});

static SHED_VALIDATOR: LazyLock<ArgumentValidator> = LazyLock::new(|| {
    ArgumentValidator::compile(&SHED_DEFINITION).expect("the shed schema is valid")
});

/// The names of a `select:` query, in order, without repeats or blanks, and those past
/// [`MAX_SELECTED`]; `None` for a search.
fn selected_names(query: &str) -> Option<Selection> {
    let query = query.trim_start();
    let prefix = query.get(..SELECT_PREFIX.len())?;
    if !prefix.eq_ignore_ascii_case(SELECT_PREFIX) {
        return None;
    }
    let mut seen = HashSet::new();
    let mut names = query[SELECT_PREFIX.len()..]
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty() && seen.insert(*name));
    let taken = names
        .by_ref()
        .take(MAX_SELECTED)
        .map(str::to_owned)
        .collect();
    let left_out = names.next().map(|first| LeftOut {
        first: first.to_owned(),
        count: 1 + names.count(),
    });
    Some(Selection {
        names: taken,
        left_out,
    })
}

/// The names a `select:` query takes.
#[derive(Debug, PartialEq)]
struct Selection {
    /// At most [`MAX_SELECTED`].
    names: Vec<String>,
    /// The names after those, if any.
    left_out: Option<LeftOut>,
}

/// The names of a `select:` query past [`MAX_SELECTED`].
#[derive(Debug, PartialEq)]
struct LeftOut {
    /// The first of them.
    first: String,
    /// How many there are.
    count: usize,
}

/// How many words of a description that found nothing are compared with the parts of the
/// tools' names: each is compared with every distinct part, and a description in a script
/// the names do not use splits into many (a model's question of thirty words found nothing
/// whole; its first words are as good a guess as the rest).
const MAX_CLOSEST_WORDS: usize = 8;

/// How many unknown `select:` names are compared with the tools' names, each with every one:
/// a list of thousands would take seconds, and the first few are as good a guess as the rest.
const MAX_CLOSEST_UNKNOWN: usize = 8;

/// Appends the names of `more` not yet in `closest`, until it holds `cap`.
fn push_closest<'a>(
    closest: &mut Vec<String>,
    more: impl IntoIterator<Item = &'a str>,
    cap: usize,
) {
    for name in more {
        if closest.len() >= cap {
            return;
        }
        if !closest.iter().any(|known| known == name) {
            closest.push(name.to_owned());
        }
    }
}

/// The tool names closest to `wanted`, at most `cap`: taken as a name first (`raed_flie` →
/// `read_file`); failing that, word by word against the parts of the names (`wether
/// forecast` → `get_weather`).
fn closest_tools(wanted: &str, directory: &NameDirectory, cap: usize) -> Vec<String> {
    let wanted = wanted.trim();
    let mut closest = Vec::new();
    push_closest(&mut closest, directory.closest_names(wanted), cap);
    if !closest.is_empty() {
        return closest;
    }
    let words = wanted
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .take(MAX_CLOSEST_WORDS);
    for word in words {
        push_closest(
            &mut closest,
            directory.names_by_part(&word.to_lowercase()),
            cap,
        );
    }
    closest
}

impl ToolCallManager {
    /// What to declare to the model on the next request: `shed` and the active tools (every
    /// registered tool and no `shed` where
    /// [`set_every_tool_declared`](Self::set_every_tool_declared) says so), or nothing at all
    /// when no tool is registered.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};
    ///
    /// let manager = ToolCallManager::new("s");
    /// assert!(manager.offered_tools().is_empty());
    /// manager.register(Arc::new(FnTool::new("ping", "Answer pong.", Args::empty(),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) }))).unwrap();
    /// let offered = manager.offered_tools();
    /// assert_eq!(offered.shed.as_ref().map(|t| t.name()), Some("shed"));
    /// assert!(offered.tools.is_empty());
    /// manager.activate(&["ping".into()]);
    /// assert_eq!(manager.offered_tools().tools[0].name(), "ping");
    /// ```
    pub fn offered_tools(&self) -> ToolDeclarations {
        if self.is_empty() {
            return ToolDeclarations::default();
        }
        if self.declares_every_tool() {
            return self.all_declarations();
        }
        ToolDeclarations {
            shed: Some(shed_tool()),
            tools: self.active_definitions(),
        }
    }

    /// The names an error written for the model offers it (an unknown tool's "did you mean"
    /// and its list of the tools it can call): every registered tool, then `shed` when the
    /// model is offered it ([`offered_tools`](Self::offered_tools): the session has tools and
    /// does not [declare every one](Self::set_every_tool_declared)), so that no error offers
    /// `shed` to a model that has none. In a session with `shed`, the tools not yet offered
    /// are named too: the model finds them with `shed` (a call of one is refused as not
    /// active, saying so).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolsmith::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};
    ///
    /// let manager = ToolCallManager::new("session");
    /// assert!(manager.names_for_the_model().is_empty());
    /// manager.register(Arc::new(FnTool::new("ping", "Answer pong.", Args::empty(),
    ///     |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("pong")) }))).unwrap();
    /// assert_eq!(manager.names_for_the_model(), ["ping", "shed"]);
    /// manager.set_every_tool_declared(true);
    /// assert_eq!(manager.names_for_the_model(), ["ping"]);
    /// ```
    pub fn names_for_the_model(&self) -> Vec<String> {
        let mut names = self.names();
        if !names.is_empty() && !self.declares_every_tool() {
            names.push(SHED_TOOL_NAME.to_owned());
        }
        names
    }

    /// The search behind `shed`, kept in step with the registry.
    pub fn discovery(&self) -> &ToolDiscovery {
        &self.discovery
    }

    /// Makes `shed` search by embedding with `embedder` (the rest of each `limit` still comes
    /// from the lexical index). Every registered tool is queued for embedding.
    pub fn enable_discovery(&self, embedder: Arc<dyn Embedder>) {
        self.with_definitions(|definitions| {
            self.discovery.set_embedder(Some(embedder), definitions);
        });
    }

    /// Makes `shed` search the lexical index only.
    pub fn disable_embedding_discovery(&self) {
        self.discovery.set_embedder(None, []);
    }

    /// The best `limit` registered tools for `query`, best first, without activating them:
    /// the search `shed` runs.
    pub async fn search_tools(&self, query: &str, limit: usize) -> Vec<ToolSummary> {
        self.discovery
            .find(query, limit)
            .await
            .into_iter()
            .filter_map(|hit| self.found_entry(hit).map(|(_, entry)| entry))
            .map(|entry| ToolSummary::of(&entry.definition))
            .collect()
    }

    /// The registration of a tool a search found, with the name it was found by: the one the
    /// index holds, or for a tool found by embedding, the one registered under its name
    /// (`None` when it was deregistered since the search).
    fn found_entry(&self, hit: FoundTool) -> Option<(Arc<str>, Arc<RegisteredTool>)> {
        let entry = match hit.entry {
            Some(entry) => entry,
            None => self.entry(&hit.name)?,
        };
        Some((hit.name, entry))
    }

    /// Runs a `shed` query and activates every tool it returns.
    ///
    /// `limit` defaults to [`DEFAULT_SHED_LIMIT`], is at least 1 (as the model's is) and is
    /// capped at [`MAX_SHED_LIMIT`]. A query `select:name1,name2` returns and activates those
    /// tools by exact name, whatever the limit, up to [`MAX_SELECTED`] names (the hint says
    /// from which one on the rest were left); names that are not registered are listed in
    /// [`ShedResult::unknown`]. When no tool is found, or a name is unknown, the result also
    /// gives the closest tool names, the categories of the session's tools and a hint
    /// ([`ShedResult::closest`], [`categories`](ShedResult::categories),
    /// [`hint`](ShedResult::hint)). A blank description (spaces, zero-width characters)
    /// finds nothing, and the hint says it is blank.
    pub async fn shed(&self, description: &str, limit: Option<usize>) -> ShedResult {
        self.find_and_activate(description, limit)
            .await
            .into_shed_result()
    }

    /// What a `shed` query finds (the explanation filled in when it finds nothing or meets
    /// unknown names), with the tools it found activated.
    async fn find_and_activate(&self, description: &str, limit: Option<usize>) -> ShedFound {
        let mut found = ShedFound::default();
        // The names the tools were found by (their registered names), activated below: read
        // here rather than from the definitions, which lie elsewhere in memory.
        let mut names = Vec::new();
        let selection = selected_names(description);
        let select = selection.is_some();
        match selection {
            Some(selected) => {
                found.left_out = selected.left_out;
                for name in selected.names {
                    // Never registered (the name is reserved), and offered all along.
                    if name == SHED_TOOL_NAME {
                        found.selected_itself = true;
                        continue;
                    }
                    match self.entry(&name) {
                        Some(entry) => {
                            found.tools.push(entry);
                            names.push(Arc::from(name));
                        }
                        // Sent back to the model: a name of any length it wrote is cut.
                        None => found.unknown.push(echoed(&name).into_owned()),
                    }
                }
            }
            None => {
                let limit = limit.unwrap_or(DEFAULT_SHED_LIMIT).clamp(1, MAX_SHED_LIMIT);
                let hits = self.discovery.find(description, limit).await;
                found.tools.reserve(hits.len());
                names.reserve(hits.len());
                for (name, entry) in hits.into_iter().filter_map(|hit| self.found_entry(hit)) {
                    found.tools.push(entry);
                    names.push(name);
                }
            }
        }
        if found.tools.is_empty()
            || !found.unknown.is_empty()
            || found.left_out.is_some()
            || found.selected_itself
        {
            found.explanation = self.explain(description, select, &found);
        }
        // Each came with its registration, so it is activated without a look-up by name (and
        // skipped when marked active already).
        let activated: Vec<(&str, &RegisteredTool)> = names
            .iter()
            .map(|name| &**name)
            .zip(found.tools.iter().map(|entry| &**entry))
            .collect();
        self.activate_found(&activated);
        found
    }

    /// What a `shed` result that found nothing (or met unknown names) tells the model: the
    /// closest names, the categories, and a hint; `select` when `description` was a
    /// `select:` query.
    fn explain(&self, description: &str, select: bool, found: &ShedFound) -> Explanation {
        // Found tools are dropped from the closest below: enough are kept for that.
        let cap = MAX_CLOSEST + found.tools.len();
        let directory = self.name_directory();
        let mut closest = Vec::new();
        if select {
            for unknown in found.unknown.iter().take(MAX_CLOSEST_UNKNOWN) {
                if closest.len() >= cap {
                    break;
                }
                let more = closest_tools(unknown, &directory, cap);
                push_closest(&mut closest, more.iter().map(String::as_str), cap);
            }
        } else {
            closest = closest_tools(description, &directory, cap);
        }
        let categories = directory.categories().to_vec();
        let is_found = |name: &String| found.tools.iter().any(|t| t.definition.name() == name);
        closest.retain(|name| !is_found(name));
        closest.truncate(MAX_CLOSEST);

        let mut explanation = Explanation::default();
        let mut hint = String::new();
        if select && !found.unknown.is_empty() {
            let unknown: Vec<String> = found.unknown.iter().map(|n| format!("'{n}'")).collect();
            hint.push_str(&format!(
                "Not tools of this session: {}.",
                echoed(&unknown.join(", "))
            ));
        } else if select && found.tools.is_empty() && !found.selected_itself {
            hint.push_str(&format!("`{SELECT_PREFIX}` named no tool."));
        } else if !select && is_blank(description) {
            hint.push_str("The description is blank.");
        } else if !select {
            hint.push_str(&format!(
                "No tool matched {:?}.",
                echoed(description.trim())
            ));
        }
        if found.selected_itself {
            hint.push_str(&format!(
                " `{SHED_TOOL_NAME}` is this tool, offered all along: it needs no selecting."
            ));
        }
        if let Some(left_out) = &found.left_out {
            let first = echoed(&left_out.first);
            let which = match left_out.count {
                1 => format!("the name '{first}' was"),
                count => format!("the {count} names from '{first}' on were"),
            };
            hint.push_str(&format!(
                " `{SELECT_PREFIX}` takes at most {MAX_SELECTED} names a call: {which} not \
                 selected; select them in another call."
            ));
        }
        if !closest.is_empty() {
            hint.push_str(&format!(" Closest tool names: {}.", closest.join(", ")));
        }
        if found.tools.is_empty() {
            if !categories.is_empty() {
                let listed: Vec<&str> = categories.iter().map(String::as_str).collect();
                hint.push_str(&format!(
                    " The session's tools are in these categories: {}.",
                    listed.join(", ")
                ));
            }
            hint.push_str(&format!(
                " Describe the task in other words, or enable tools by exact name with \
                 `{SELECT_PREFIX}name1,name2`."
            ));
            explanation.categories = categories;
        } else if !closest.is_empty() {
            hint.push_str(&format!(
                " Enable them with `{SELECT_PREFIX}{}`.",
                closest.join(",")
            ));
        }
        explanation.closest = closest;
        explanation.hint = Some(hint.trim_start().to_owned());
        explanation
    }

    /// Runs a call to `shed`: checks its arguments against its schema, then searches.
    pub(crate) async fn execute_shed(
        &self,
        arguments: &ToolArguments,
    ) -> Result<ToolCallResult, ToolError> {
        // A session without tools offers no `shed`.
        if self.is_empty() {
            return Err(ToolError::UnknownTool(SHED_TOOL_NAME.to_owned()));
        }
        let arguments = SHED_VALIDATOR.check(SHED_TOOL_NAME, arguments)?;
        let args = ToolArgs::new(SHED_TOOL_NAME, &arguments);
        let description = args.str("description")?;
        // Spaces and zero-width characters pass the schema's `minLength`, and describe no
        // task: by embedding, they would find (and activate) the tools nearest to nothing.
        if is_blank(description) {
            return Err(ToolError::invalid_arguments(
                SHED_TOOL_NAME,
                format!(
                    "/description: is blank; describe the task in a few words, or enable tools \
                     by exact name with `{SELECT_PREFIX}name1,name2`"
                ),
            ));
        }
        // An integer of at least 1 (checked above); one past what `usize` holds (1e20) is
        // capped as any larger limit is.
        let limit = args
            .opt_f64("limit")?
            .map(|limit| limit.min(MAX_SHED_LIMIT as f64) as usize);
        let found = self.find_and_activate(description, limit).await;
        Ok(found.into_result())
    }
}

thread_local! {
    /// Where a `shed` result's text is put together before it is copied into its
    /// [`JsonText`]: reused, so that a result costs one allocation of its size, not two.
    static RESULT_TEXT: RefCell<String> = const { RefCell::new(String::new()) };
}

/// What a `shed` query found: the registered tools (their entries, so that nothing is copied
/// before the result is written), the unknown `select:` names, and the explanation when
/// there is one.
#[derive(Default)]
struct ShedFound {
    tools: Vec<Arc<RegisteredTool>>,
    unknown: Vec<String>,
    /// The names of a `select:` query past [`MAX_SELECTED`], not looked up.
    left_out: Option<LeftOut>,
    /// Whether a `select:` query named `shed` itself.
    selected_itself: bool,
    explanation: Explanation,
}

/// The part of a [`ShedResult`] that says what to do when nothing (or not everything) was
/// found.
#[derive(Default)]
struct Explanation {
    closest: Vec<String>,
    categories: Vec<String>,
    hint: Option<String>,
}

impl ShedFound {
    /// The call's result: the text of the [`ShedResult`] this makes, or, for a tool whose
    /// schema nests too deep for that text (nearly as deep as registration allows), its
    /// value, which is checked and rendered (or refused for its depth) as any tool's is.
    fn into_result(self) -> ToolCallResult {
        match self.written() {
            Some(text) => ToolCallResult::json_text(text),
            None => ToolCallResult::to_json(&self.into_shed_result())
                .expect("a ShedResult (strings and JSON values) serializes"),
        }
    }

    /// The text of the [`ShedResult`] this makes, exactly as serializing it writes it: each
    /// tool's summary is rendered once per registration ([`RenderedSummary`]) and copied
    /// as bytes; the other fields, their order and the ones left out are `ShedResult`'s.
    /// `None` when a summary nests too deep to be part of a [`JsonText`].
    ///
    /// [`RenderedSummary`]: super::rendered_summary::RenderedSummary
    fn written(&self) -> Option<JsonText> {
        let mut len = 0;
        for entry in &self.tools {
            len += entry.summary.text(&entry.definition)?.len() + 1;
        }
        RESULT_TEXT.with(|text| {
            let mut text = text.borrow_mut();
            text.clear();
            text.reserve(len + 16);
            text.push_str("{\"tools\":[");
            for (i, entry) in self.tools.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(entry.summary.text(&entry.definition)?);
            }
            text.push(']');
            let explanation = &self.explanation;
            if !self.unknown.is_empty() {
                push_field(&mut text, "unknown", &self.unknown);
            }
            if !explanation.closest.is_empty() {
                push_field(&mut text, "closest", &explanation.closest);
            }
            if !explanation.categories.is_empty() {
                push_field(&mut text, "categories", &explanation.categories);
            }
            if let Some(hint) = &explanation.hint {
                push_field(&mut text, "hint", hint);
            }
            text.push('}');
            Some(JsonText::written(&text))
        })
    }

    /// The [`ShedResult`] this makes.
    fn into_shed_result(self) -> ShedResult {
        let explanation = self.explanation;
        ShedResult {
            tools: self
                .tools
                .iter()
                .map(|entry| ToolSummary::of(&entry.definition))
                .collect(),
            unknown: self.unknown,
            closest: explanation.closest,
            categories: explanation.categories,
            hint: explanation.hint,
        }
    }
}

/// Appends `,"name":` and `value` serialized, to the text of an object.
fn push_field(text: &mut String, name: &str, value: &impl Serialize) {
    text.push_str(",\"");
    text.push_str(name);
    text.push_str("\":");
    text.push_str(&serde_json::to_string(value).expect("strings serialize"));
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::HashMap;
    use std::sync::Arc;
    use std::time::Duration;

    use futures::executor::block_on;
    use proptest::prelude::*;

    use super::{
        MAX_CLOSEST_WORDS, MAX_SELECTED, NameDirectory, closest_tools, push_closest, selected_names,
    };
    use crate::closest_names;
    use crate::manager::suggestion::closest_lowercase_names;
    use crate::shed::discovery::FoundTool;
    use crate::shed::name_directory::lower_parts;
    use crate::shed::{MatchedBy, ShedResult};
    use crate::tool::echo::MAX_ECHOED_CHARS;
    use crate::{Args, FnTool, ToolArgs, ToolCallManager, ToolCallResult};

    fn manager() -> ToolCallManager {
        let manager = ToolCallManager::new("s");
        for (name, description, category) in [
            ("get_weather", "Current weather for a city.", "weather"),
            ("read_file", "Read a file from disk.", "files"),
        ] {
            let tool = FnTool::new(name, description, Args::empty(), |_: ToolArgs<'_>| async {
                Ok(ToolCallResult::text("ok"))
            })
            .with_category(category);
            manager.register(Arc::new(tool)).unwrap();
        }
        manager
    }

    #[test]
    fn a_search_hit_carries_the_current_registration() {
        let manager = manager();
        let find = |query| block_on(manager.discovery.find(query, 5));
        let hits = find("weather");
        assert_eq!(hits.len(), 1);
        let registered = manager.entry("get_weather").unwrap();
        assert!(Arc::ptr_eq(hits[0].entry.as_ref().unwrap(), &registered));

        // A changed registration replaces the one the index hands out.
        let limit = Some(Duration::from_secs(3));
        manager.set_timeout("get_weather", limit).unwrap();
        let hits = find("weather");
        let entry = hits[0].entry.as_ref().unwrap();
        assert_eq!(entry.timeout, limit);
        assert!(Arc::ptr_eq(entry, &manager.entry("get_weather").unwrap()));

        // Deregistered, it is found no more, and nothing found still explains itself.
        assert!(manager.deregister("get_weather").is_some());
        assert!(find("weather").is_empty());
        let found: ShedResult = block_on(manager.shed("weather", None));
        assert!(found.tools.is_empty());
        assert_eq!(found.categories, ["files"]);
        assert!(found.hint.unwrap().starts_with("No tool matched"));
    }

    #[test]
    fn a_hint_repeats_only_the_start_of_a_long_description() {
        let manager = manager();
        let long = "zq".repeat(50_000);
        let found: ShedResult = block_on(manager.shed(&long, None));
        let hint = found.hint.unwrap();
        assert!(hint.len() < 1_000, "{} bytes", hint.len());
        assert!(hint.starts_with(&format!(
            "No tool matched \"{}…\".",
            &long[..MAX_ECHOED_CHARS]
        )));
        let names: Vec<String> = (0..5_000).map(|n| format!("missing_{n}")).collect();
        let found: ShedResult =
            block_on(manager.shed(&format!("select:{}", names.join(",")), None));
        let hint = found.hint.unwrap();
        assert!(
            hint.starts_with("Not tools of this session: 'missing_0', "),
            "{hint}"
        );
        assert!(hint.len() < 1_000, "{} bytes", hint.len());
    }

    #[test]
    fn a_tool_found_active_is_not_activated_again_and_one_registered_anew_is() {
        let manager = manager();
        let weather = || block_on(manager.shed("weather", None));
        assert!(!manager.entry("get_weather").unwrap().active.is_set());
        assert_eq!(weather().tools.len(), 1);
        assert!(manager.is_active("get_weather"));
        assert!(manager.entry("get_weather").unwrap().active.is_set());
        // A changed registration keeps its mark; found again, the tool is offered once.
        manager
            .set_timeout("get_weather", Some(Duration::from_secs(1)))
            .unwrap();
        assert!(manager.entry("get_weather").unwrap().active.is_set());
        assert_eq!(weather().tools.len(), 1);
        let offered = manager.offered_tools();
        assert_eq!(offered.tools.len(), 1);
        assert_eq!(offered.tools[0].name(), "get_weather");

        // Deregistered, it is inactive; registered anew, unmarked, and found, active again.
        let tool = manager.deregister("get_weather").unwrap();
        assert!(!manager.is_active("get_weather"));
        manager.register(tool).unwrap();
        assert!(!manager.is_active("get_weather"));
        assert!(!manager.entry("get_weather").unwrap().active.is_set());
        assert_eq!(weather().tools.len(), 1);
        assert!(manager.is_active("get_weather"));
        assert!(manager.entry("get_weather").unwrap().active.is_set());
        // Activated by name, a tool is active though unmarked; `shed` then marks it.
        manager.activate(&["read_file".to_owned()]);
        assert!(manager.is_active("read_file"));
        assert!(!manager.entry("read_file").unwrap().active.is_set());
        assert_eq!(
            block_on(manager.shed("select:read_file", None)).tools.len(),
            1
        );
        assert!(manager.entry("read_file").unwrap().active.is_set());
        assert_eq!(manager.offered_tools().tools.len(), 2);
    }

    #[test]
    fn a_tool_removed_after_a_search_found_it_is_not_activated_by_that_search() {
        // A `shed` call finds a tool, then (on another thread) the tool is deregistered, then
        // the call activates what it found.
        let manager = manager();
        let found = manager.entry("get_weather").unwrap();
        let tool = manager.deregister("get_weather").unwrap();
        manager.activate_found(&[("get_weather", &found)]);
        // Registered anew, under the same name, it is not active until `shed` returns it.
        manager.register(tool).unwrap();
        assert!(!manager.is_active("get_weather"));
        assert!(manager.offered_tools().tools.is_empty());
        assert_eq!(block_on(manager.shed("weather", None)).tools.len(), 1);
        assert!(manager.is_active("get_weather"));

        // A registration changed in place since is still the tool found: it is activated.
        let found = manager.entry("read_file").unwrap();
        manager
            .set_timeout("read_file", Some(Duration::from_secs(1)))
            .unwrap();
        manager.activate_found(&[("read_file", &found)]);
        assert!(manager.is_active("read_file"));
    }

    #[test]
    fn a_select_of_thousands_of_unknown_names_is_explained_quickly() {
        let manager = ToolCallManager::new("s");
        for i in 0..2000 {
            let tool = FnTool::new(
                format!("tool_number_{i}"),
                "Does a thing.",
                Args::empty(),
                |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("ok")) },
            );
            manager.register(Arc::new(tool)).unwrap();
        }
        let names: Vec<String> = (0..5000).map(|n| format!("missing_tool_{n}")).collect();
        let started = cpu_time::ThreadTime::now();
        let found: ShedResult =
            block_on(manager.shed(&format!("select:{}", names.join(",")), None));
        // Each unknown name was compared with every tool's: 14 s in a debug build.
        let took = started.elapsed();
        assert!(took < Duration::from_secs(3), "{took:?}");
        // Only the first MAX_SELECTED are looked up; the hint says where the rest start.
        assert_eq!(found.unknown, names[..MAX_SELECTED]);
        let hint = found.hint.unwrap();
        assert!(
            hint.contains("the 4980 names from 'missing_tool_20' on"),
            "{hint}"
        );
        assert_eq!(found.closest.len(), super::MAX_CLOSEST);
        assert!(found.closest[0].starts_with("tool_number_"));
    }

    #[test]
    fn a_limit_of_0_is_taken_as_1() {
        // The model's `limit` is at least 1 (its schema says so); a caller's 0 found nothing,
        // and the hint said no tool matched.
        let manager = manager();
        let found: ShedResult = block_on(manager.shed("weather", Some(0)));
        assert_eq!(found.tools.len(), 1);
        assert_eq!(found.tools[0].name, "get_weather");
        assert_eq!(found.hint, None);
        assert!(manager.is_active("get_weather"));
    }

    #[test]
    fn a_hit_without_a_registration_is_looked_up_by_name() {
        let manager = manager();
        let hit = |name: &str| FoundTool {
            name: Arc::from(name),
            score: 0.5,
            matched_by: MatchedBy::Embedding,
            entry: None,
        };
        let (name, entry) = manager.found_entry(hit("read_file")).unwrap();
        assert_eq!(&*name, "read_file");
        assert!(Arc::ptr_eq(&entry, &manager.entry("read_file").unwrap()));
        // A tool deregistered since it was found is left out.
        assert!(manager.found_entry(hit("send_email")).is_none());
    }

    /// The directory of tools named `names`, in the default category.
    fn directory(names: &[&str]) -> NameDirectory {
        NameDirectory::of(names.iter().map(|name| (*name, crate::DEFAULT_CATEGORY)))
    }

    /// What `closest_tools` answered before the directory: every name lowercased, split and
    /// compared on each call. The reference the directory's answers are tested against.
    fn closest_tools_by_scanning(wanted: &str, names: &[&str], cap: usize) -> Vec<String> {
        let wanted = wanted.trim();
        let mut closest = Vec::new();
        push_closest(
            &mut closest,
            closest_names(wanted, names.iter().copied()),
            cap,
        );
        if !closest.is_empty() {
            return closest;
        }
        let mut parts: HashMap<Cow<'_, str>, Vec<&str>> = HashMap::new();
        for &name in names {
            for part in lower_parts(name) {
                let named = parts.entry(part).or_default();
                if named.last() != Some(&name) {
                    named.push(name);
                }
            }
        }
        let words = wanted
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3)
            .take(MAX_CLOSEST_WORDS);
        for word in words {
            let word = word.to_lowercase();
            let near = match parts.get_key_value(word.as_str()) {
                Some((part, _)) => vec![&**part],
                None => closest_lowercase_names(&word, parts.keys().map(|part| &**part)),
            };
            for part in near {
                push_closest(&mut closest, parts[part].iter().copied(), cap);
            }
        }
        closest
    }

    proptest! {
        /// The directory answers as comparing every name on every call did: the counts that
        /// turn names away turn away only names that could not be suggested.
        #[test]
        fn the_directory_answers_as_scanning_every_name(
            names in proptest::collection::vec("[a-eA-E][a-eA-E0-9_-]{0,11}", 1..40),
            wanted in "[a-eA-E0-9 _-]{0,18}",
            cap in 1usize..8,
        ) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            prop_assert_eq!(
                closest_tools(&wanted, &directory(&names), cap),
                closest_tools_by_scanning(&wanted, &names, cap)
            );
        }

        /// The same for a wanted name made from a registered one by a few edits, which is
        /// what the model sends when it misspells a name.
        #[test]
        fn the_directory_answers_as_scanning_every_name_for_misspellings(
            names in proptest::collection::vec("[a-z][a-z0-9_]{2,14}", 1..40),
            pick in any::<proptest::sample::Index>(),
            edits in proptest::collection::vec((any::<proptest::sample::Index>(), "[a-z_ ]"), 0..4),
        ) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut wanted: Vec<char> = pick.get(&names).chars().collect();
            for (at, with) in edits {
                let at = at.index(wanted.len());
                wanted[at] = with.chars().next().unwrap();
            }
            let wanted: String = wanted.into_iter().collect();
            prop_assert_eq!(
                closest_tools(&wanted, &directory(&names), 5),
                closest_tools_by_scanning(&wanted, &names, 5)
            );
        }
    }

    #[test]
    fn name_parts_are_compared_in_lower_case_whatever_their_case() {
        let names = directory(&["Get_Weather", "read_file", "send-email"]);
        assert_eq!(closest_tools("weather today", &names, 5), ["Get_Weather"]);
        assert_eq!(closest_tools("emial", &names, 5), ["send-email"]);
        // A name close as a whole comes first, and alone.
        assert_eq!(closest_tools("raed_flie", &names, 5), ["read_file"]);
        assert!(closest_tools("xylophone", &names, 5).is_empty());
        // At most `cap`.
        let many: Vec<String> = (0..20).map(|i| format!("get_weather_{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(closest_tools("weather", &directory(&many), 3).len(), 3);
    }

    #[test]
    fn a_query_that_is_a_tool_s_name_finds_that_tool_first() {
        let manager = ToolCallManager::new("s");
        for (name, description) in [
            ("zoom_in", "Zoom the view."),
            ("zoom_out", "Zoom the view."),
            ("do", "Run a thing."),
        ] {
            let tool = FnTool::new(name, description, Args::empty(), |_: ToolArgs<'_>| async {
                Ok(ToolCallResult::text("ok"))
            });
            manager.register(Arc::new(tool)).unwrap();
        }
        let first = |query: &str| {
            let found: ShedResult = block_on(manager.shed(query, Some(1)));
            found.tools.first().map(|tool| tool.name.clone())
        };
        // The word that tells the two apart is a stop word ("out"), and ties go by name.
        assert_eq!(first("zoom_out").as_deref(), Some("zoom_out"));
        assert_eq!(first(" zoom_in ").as_deref(), Some("zoom_in"));
        // A name made only of stop words has no term to be found by.
        assert_eq!(first("do").as_deref(), Some("do"));
        // Found by name, it is scored as its words score it, and the rest follow.
        let hits = block_on(manager.discovery.search("zoom_out", 5));
        let names: Vec<&str> = hits.iter().map(|hit| hit.name.as_str()).collect();
        assert_eq!(names, ["zoom_out", "zoom_in"]);
        assert_eq!(hits[0].score, hits[1].score);
        assert_eq!(hits[0].matched_by, MatchedBy::Lexical);
        let hits = block_on(manager.discovery.search("do", 5));
        assert_eq!((hits.len(), hits[0].score), (1, 0.0));
        assert_eq!(manager.discovery.search_lexical("do", 1)[0].name, "do");
        // A name is matched exactly: another spelling is a search.
        assert!(block_on(manager.discovery.search("DO", 5)).is_empty());
    }

    #[test]
    fn select_queries_are_parsed_exactly() {
        let names = |query| selected_names(query).map(|selection| selection.names);
        assert_eq!(
            names("select:a, b ,a,,c"),
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(names("  SELECT:x"), Some(vec!["x".into()]));
        assert_eq!(names("select:"), Some(vec![]));
        assert_eq!(names("selection of tools"), None);
        assert_eq!(names("find: select:x"), None);
        assert_eq!(names("sé"), None);
        assert_eq!(selected_names("select:a,b").unwrap().left_out, None);
        // Past the cap: repeats and blanks are not counted among the names left out.
        let many: Vec<String> = (0..MAX_SELECTED + 3).map(|i| format!("t{i}")).collect();
        let query = format!("select:{},t0,, t21 ,t22", many.join(","));
        let selection = selected_names(&query).unwrap();
        assert_eq!(selection.names, many[..MAX_SELECTED]);
        assert_eq!(
            selection.left_out,
            Some(super::LeftOut {
                first: format!("t{MAX_SELECTED}"),
                count: 3
            })
        );
    }
}
