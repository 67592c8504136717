//! [`RetrieverTool`]: a [`Retriever`] given to a model as a tool (`query`, `top_k`).

use std::borrow::Cow;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Serialize;
use toolsmith_core::{
    Args, Tool, ToolAnnotations, ToolArgs, ToolArguments, ToolCallResult, ToolDefinition,
    ToolError, ToolImpl, is_blank, provider::cut_to, returns_schema, scheme,
};

use super::{Document, Retriever};
use crate::serialized_len::serialized_chars;

/// How many documents a call returns when it does not say.
pub const DEFAULT_TOP_K: usize = 5;
/// The most documents one call may ask for.
pub const MAX_TOP_K: usize = 50;
/// The `note` of a call that found nothing.
pub const NO_DOCUMENTS: &str = "No relevant documents found.";
/// How many characters of documents (content and metadata) one call returns unless
/// [`with_max_result_chars`](RetrieverTool::with_max_result_chars) says otherwise: about ten
/// thousand tokens, so that `top_k` whole files cannot fill the model's context.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 40_000;

/// The structured result of a retrieval.
#[derive(Debug, Serialize, JsonSchema)]
struct Retrieved<'a> {
    /// The documents found, most relevant first.
    documents: &'a [Document],
    /// Why there are none, or which were cut or left out to keep the result's size.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

/// A retriever as a tool: arguments `query` (required, not blank) and `top_k` (optional, 1 to
/// [`MAX_TOP_K`], default [`DEFAULT_TOP_K`] or [`with_default_top_k`](Self::with_default_top_k));
/// the result is the documents found with their content, score and metadata, as structured
/// JSON under a `returns` schema; when none is found, no documents and the `note`
/// [`NO_DOCUMENTS`] (structured too: an MCP client validates every result of a tool that
/// declares an output schema). The documents' content and metadata are bounded
/// ([`DEFAULT_MAX_RESULT_CHARS`], or [`with_max_result_chars`](Self::with_max_result_chars)):
/// documents past the bound are left out, the first one alone past it is cut, and the `note`
/// says so. A retriever's failure is a tool error naming the retriever.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolsmith::{ToolArguments, ToolCallManager, ToolCallRequest};
/// use toolsmith::harness::retrieval::{LexicalRetriever, RetrieverTool};
///
/// # futures::executor::block_on(async {
/// let docs = Arc::new(LexicalRetriever::new("handbook"));
/// docs.add("leave", "Annual leave", "Employees get 25 days of paid leave a year.");
/// let manager = ToolCallManager::new("s");
/// manager.register(Arc::new(RetrieverTool::new(docs, "search_handbook",
///     "Search the employee handbook."))).unwrap();
/// let call = ToolCallRequest::new("1", "search_handbook",
///     ToolArguments::try_from(json!({"query": "paid leave", "top_k": 3})).unwrap());
/// let result = manager.execute_one(&call).await.unwrap();
/// assert!(result.content.to_text().contains("25 days"));
/// # });
/// ```
pub struct RetrieverTool {
    retriever: Arc<dyn Retriever>,
    name: String,
    description: String,
    default_top_k: usize,
    max_result_chars: usize,
}

impl std::fmt::Debug for RetrieverTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetrieverTool")
            .field("retriever", &self.retriever.name())
            .field("name", &self.name)
            .field("default_top_k", &self.default_top_k)
            .field("max_result_chars", &self.max_result_chars)
            .finish()
    }
}

impl RetrieverTool {
    /// The tool `name` with `description`, retrieving through `retriever`.
    #[must_use]
    pub fn new(
        retriever: Arc<dyn Retriever>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            retriever,
            name: name.into(),
            description: description.into(),
            default_top_k: DEFAULT_TOP_K,
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
        }
    }

    /// How many documents a call returns when it does not say (1 to [`MAX_TOP_K`]).
    #[must_use]
    pub fn with_default_top_k(mut self, top_k: usize) -> Self {
        self.default_top_k = top_k.clamp(1, MAX_TOP_K);
        self
    }

    /// How many characters of documents one call returns at most, their content and their
    /// metadata (its JSON text) counted (at least 1; default [`DEFAULT_MAX_RESULT_CHARS`]).
    /// Documents are kept whole, most relevant first, while they fit; the rest are left out,
    /// and a first document that does not fit alone is cut (its metadata kept if it leaves
    /// room for some content, else left out, and the content cut only if it is still too
    /// long). The result's `note` says what was cut or left out.
    #[must_use]
    pub fn with_max_result_chars(mut self, max_chars: usize) -> Self {
        self.max_result_chars = max_chars.max(1);
        self
    }

    /// `documents` within [`with_max_result_chars`](Self::with_max_result_chars), and the
    /// note saying what was cut or left out (`None` when all fit whole).
    fn bounded<'d>(&self, documents: &'d [Document]) -> (Cow<'d, [Document]>, Option<String>) {
        let max = self.max_result_chars;
        let mut remaining = max;
        let whole = documents
            .iter()
            .take_while(|document| {
                let chars = document
                    .content
                    .chars()
                    .count()
                    .saturating_add(metadata_len(document));
                let fits = chars <= remaining;
                remaining = remaining.saturating_sub(chars);
                fits
            })
            .count();
        if whole == documents.len() {
            return (Cow::Borrowed(documents), None);
        }
        let bound = format!("a result holds at most {max} characters of documents");
        if whole > 0 {
            let left_out = documents.len() - whole;
            let were = if left_out == 1 {
                "document was"
            } else {
                "documents were"
            };
            let note = format!(
                "{left_out} more {were} left out: {bound}; ask a narrower query or a smaller \
                 top_k for the rest"
            );
            return (Cow::Borrowed(&documents[..whole]), Some(note));
        }
        // The most relevant document does not fit alone: its beginning is better than nothing.
        // Its metadata (a source, a title) goes with it where it leaves room for some content;
        // a retriever's metadata of more than the bound would otherwise pass it unchecked.
        let first = &documents[0];
        let metadata = metadata_len(first);
        let (content, metadata_note) = if metadata < max {
            (max - metadata, "")
        } else {
            (max, " (its metadata left out)")
        };
        let text = cut_to(&first.content, content);
        // Its metadata left out, its content may fit whole (`cut_to` then borrows it): it is
        // not said to be cut then, or the model would take the whole for a beginning.
        let cut_content = matches!(text, Cow::Owned(_));
        let mut cut = Document::new(text, first.score);
        if metadata_note.is_empty() {
            cut.metadata = first.metadata.clone();
        }
        let note = match (documents.len() - 1, cut_content) {
            (0, true) => {
                format!("The document was cut after {content} characters{metadata_note}: {bound}")
            }
            (0, false) => format!("The document's metadata was left out: {bound}"),
            (left_out, true) => format!(
                "The first document was cut after {content} characters{metadata_note} and \
                 {left_out} more left out: {bound}"
            ),
            (left_out, false) => {
                let more = if left_out == 1 {
                    "document"
                } else {
                    "documents"
                };
                format!(
                    "The first document's metadata and {left_out} more {more} were left out: \
                     {bound}"
                )
            }
        };
        (Cow::Owned(vec![cut]), Some(note))
    }
}

/// The characters a document's metadata takes in a result (its JSON text, counted in
/// characters as content is; none when it has none, as it is then not written).
fn metadata_len(document: &Document) -> usize {
    if document.metadata.is_empty() {
        0
    } else {
        serialized_chars(&document.metadata)
    }
}

#[async_trait]
impl ToolImpl for RetrieverTool {
    fn definition(&self) -> Tool {
        let arguments = scheme::object()
            .required(
                "query",
                scheme::string()
                    .min_len(1)
                    .describe("What to look for, in a few words or a question."),
            )
            .optional(
                "top_k",
                scheme::integer()
                    .minimum(1)
                    .maximum(MAX_TOP_K as u64)
                    .describe(format!(
                        "How many documents to return (default {}).",
                        self.default_top_k
                    )),
            )
            .build();
        Tool::SingleCommand(
            ToolDefinition::new(&self.name, &self.description, Args::new(arguments))
                .with_category("search")
                .with_returns(returns_schema::<Retrieved<'static>>())
                .with_annotations(ToolAnnotations {
                    read_only: Some(true),
                    idempotent: Some(true),
                    ..ToolAnnotations::default()
                }),
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let args = ToolArgs::new(&self.name, &arguments);
        let query = args.str("query")?;
        // `minLength` counts spaces and zero-width characters: a query of only those passes
        // it, and would have the retriever rank documents for nothing (by embedding, the
        // first ones it meets).
        if is_blank(query) {
            return Err(ToolError::invalid_arguments(
                &self.name,
                "/query: is blank; say what to look for, in a few words or a question",
            ));
        }
        let top_k = args.opt_usize("top_k")?.unwrap_or(self.default_top_k);
        if !(1..=MAX_TOP_K).contains(&top_k) {
            return Err(ToolError::invalid_arguments(
                &self.name,
                format!("/top_k: {top_k} is not between 1 and {MAX_TOP_K}"),
            ));
        }
        let documents = self.retriever.retrieve(query, top_k).await.map_err(|err| {
            ToolError::execution(
                &self.name,
                format!("the retriever '{}' failed: {err}", self.retriever.name()),
            )
        })?;
        if documents.is_empty() {
            return ToolCallResult::to_json(&Retrieved {
                documents: &[],
                note: Some(NO_DOCUMENTS),
            })
            .map_err(|err| ToolError::execution(&self.name, err));
        }
        // A retriever may return more than asked; the model gets what it asked for.
        let documents = &documents[..documents.len().min(top_k)];
        // JSON has no NaN or infinity: such a score would be written as `null`.
        if let Some((index, document)) = documents
            .iter()
            .enumerate()
            .find(|(_, document)| !document.score.is_finite())
        {
            return Err(ToolError::execution(
                &self.name,
                format!(
                    "the retriever '{}' gave document {index} the score {}, not a finite number",
                    self.retriever.name(),
                    document.score
                ),
            ));
        }
        let (documents, note) = self.bounded(documents);
        ToolCallResult::to_json(&Retrieved {
            documents: &documents,
            note: note.as_deref(),
        })
        .map_err(|err| ToolError::execution(&self.name, err))
    }
}
