//! [`FallbackModel`]: a [`ChatModel`] that asks the next model when one is down.

use std::borrow::Cow;
use std::fmt;

use async_trait::async_trait;
use toolsmith_core::Tool;

use super::{ChatModel, ChatRequest, ChatResponse, ImageLimits, ModelError, StreamDelta};

/// What a [`FallbackModel`] moves on to its next model for.
type FallsBack = Box<dyn Fn(&ModelError) -> bool + Send + Sync>;

/// A chat model that asks its models in turn: the primary first, and when it fails in a way
/// another provider may not ([`ModelError::is_provider_side`]: rate limited after the
/// client's retries, overloaded, down, unreachable, too slow), the next, and so on. Every
/// other error (a bad request, a refused key, a conversation too long) is returned at once:
/// the same request would fail the same way, or it is the caller's to fix. Each request
/// starts with the primary again.
///
/// Made with [`new`](Self::new) and at least one [`or`](FallbackPrimary::or) (or
/// [`or_as`](FallbackPrimary::or_as), for a model its provider names otherwise than the
/// request does). A conversation can go from one model to another: each model is sent the
/// turns of its own provider verbatim and the others' text and calls
/// ([`ProviderTurn`](super::ProviderTurn)).
///
/// When the primary fails with an error not to move on for, the call fails with that error
/// as it is. When more models were asked and each failed, it fails with
/// [`ModelError::AllFailed`], whose message gives each error after the model that failed
/// (its place in the list, its name and the model name it was asked for:
/// `model 2 (openai_chat, gpt-4.1-mini)`) and whose
/// [`last_error`](ModelError::last_error) is what ended it. Each move to the next model is
/// logged as a `tracing` warning naming both models so and the error.
///
/// ```
/// use toolsmith::harness::model::{
///     ChatModel, ChatRequest, FallbackModel, ModelError, ScriptedModel, ScriptedTurn,
/// };
///
/// # futures::executor::block_on(async {
/// let overloaded = ModelError::Api {
///     provider: "anthropic".into(),
///     status: 529,
///     message: "Overloaded".into(),
/// };
/// let primary = ScriptedModel::new([ScriptedTurn::error(overloaded)]);
/// let secondary = ScriptedModel::new([ScriptedTurn::text("Hello")]);
/// let model = FallbackModel::new(primary).or_as(secondary.clone(), "gpt-4.1-mini");
/// let request = ChatRequest { model: "claude-sonnet-4-5".into(), ..ChatRequest::default() };
/// let answer = model.complete(&request).await.unwrap();
/// assert_eq!(answer.text.as_deref(), Some("Hello"));
/// assert_eq!(secondary.requests()[0].model, "gpt-4.1-mini");
/// assert_eq!(model.name(), "fallback(scripted, scripted)");
/// # });
/// ```
pub struct FallbackModel {
    /// The primary first, then each fallback in the order added; at least two.
    models: Vec<Fallback>,
    /// `fallback(<each model's name>)`, made as the models are added.
    name: String,
    falls_back: FallsBack,
}

/// A [`FallbackModel`] with its primary model only: [`or`](Self::or) or
/// [`or_as`](Self::or_as) adds the first fallback and makes the [`FallbackModel`] (a
/// fallback of one model would be that model).
pub struct FallbackPrimary(Fallback);

/// One model of a [`FallbackModel`], and the model name its requests are sent with, if not
/// the request's.
struct Fallback {
    model: Box<dyn ChatModel>,
    model_name: Option<String>,
}

impl Fallback {
    /// The model as `Debug` names it: its name, with its own model name if it has one.
    fn label(&self) -> String {
        match &self.model_name {
            Some(model_name) => format!("{} ({model_name})", self.model.name()),
            None => self.model.name().to_owned(),
        }
    }

    /// The model as an [`AllFailed`](ModelError::AllFailed) entry and the log name it:
    /// `model 2 (openai_chat, gpt-4.1-mini)`, its place in the list (from 1), its name and
    /// the model name it was sent `request` under. Two clients of one API share a name
    /// (`openai_chat`), and may share the model name: the place tells them apart.
    fn label_at(&self, at: usize, request: &ChatRequest) -> String {
        let name = self.model.name();
        let place = at + 1;
        match self.model_name.as_deref().unwrap_or(&request.model).trim() {
            "" => format!("model {place} ({name})"),
            model_name => format!("model {place} ({name}, {model_name})"),
        }
    }

    /// `request` as this model is sent it: under its own model name, if it has one.
    fn request<'a>(&self, request: &'a ChatRequest) -> Cow<'a, ChatRequest> {
        match &self.model_name {
            Some(model_name) if *model_name != request.model => {
                let mut renamed = request.clone();
                renamed.model.clone_from(model_name);
                Cow::Owned(renamed)
            }
            _ => Cow::Borrowed(request),
        }
    }

    /// `response`, naming the model it was asked under (this model's own name, else
    /// `request`'s) when its client did not say which answered: a fallback's caller can
    /// always tell.
    fn named(&self, request: &ChatRequest, mut response: ChatResponse) -> ChatResponse {
        if response.model.is_none() {
            let asked = self.model_name.as_deref().unwrap_or(&request.model).trim();
            response.model = (!asked.is_empty()).then(|| asked.to_owned());
        }
        response
    }

    /// `request`'s settings as this model is sent them, for what it reads of a request
    /// before one is sent ([`ChatModel::output_limit`]): under its own model name, if it has
    /// one, with the options and tools but not the conversation, which a limit does not
    /// depend on (a session asks before every request: copying a long conversation with
    /// its images each time would cost more than the answer is worth).
    fn settings<'a>(&self, request: &'a ChatRequest) -> Cow<'a, ChatRequest> {
        match &self.model_name {
            Some(model_name) if *model_name != request.model => Cow::Owned(ChatRequest {
                model: model_name.clone(),
                system: None,
                messages: Vec::new(),
                tools: std::sync::Arc::clone(&request.tools),
                options: request.options.clone(),
            }),
            _ => Cow::Borrowed(request),
        }
    }
}

impl FallbackModel {
    /// A fallback whose first model, asked first for every request, is `primary`.
    #[allow(clippy::new_ret_no_self)] // A fallback needs a second model: `or` makes it.
    pub fn new(primary: impl ChatModel + 'static) -> FallbackPrimary {
        FallbackPrimary(Fallback {
            model: Box::new(primary),
            model_name: None,
        })
    }

    /// The same fallback with `model` asked after the others, with the request as it is.
    #[must_use]
    pub fn or(self, model: impl ChatModel + 'static) -> Self {
        self.then(Fallback {
            model: Box::new(model),
            model_name: None,
        })
    }

    /// The same fallback with `model` asked after the others, the request's
    /// [`model`](ChatRequest::model) replaced by `model_name` (providers name their models
    /// differently).
    #[must_use]
    pub fn or_as(self, model: impl ChatModel + 'static, model_name: impl Into<String>) -> Self {
        self.then(Fallback {
            model: Box::new(model),
            model_name: Some(model_name.into()),
        })
    }

    /// The same fallback moving on to the next model for the errors `falls_back` accepts,
    /// instead of [`ModelError::is_provider_side`]'s. The last model's error is returned
    /// whatever it is.
    ///
    /// ```
    /// use toolsmith::harness::model::{FallbackModel, ModelError, ScriptedModel};
    ///
    /// // A model of a larger context window takes the conversations too long for the first.
    /// let model = FallbackModel::new(ScriptedModel::default())
    ///     .or(ScriptedModel::default())
    ///     .falling_back_when(|error: &ModelError| {
    ///         error.is_provider_side()
    ///             || matches!(error.last_error(), ModelError::ContextTooLong { .. })
    ///     });
    /// ```
    #[must_use]
    pub fn falling_back_when(
        mut self,
        falls_back: impl Fn(&ModelError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.falls_back = Box::new(falls_back);
        self
    }

    fn then(mut self, fallback: Fallback) -> Self {
        self.models.push(fallback);
        self.name = name_of(&self.models);
        self
    }

    /// The model after `failed` failed with `error` on `request`, if it moves on for that
    /// error and one is left; the move is logged.
    fn next_after(
        &self,
        failed: usize,
        error: &ModelError,
        request: &ChatRequest,
    ) -> Option<&Fallback> {
        let next = self.models.get(failed + 1)?;
        if !(self.falls_back)(error) {
            return None;
        }
        tracing::warn!(
            failed = %self.models[failed].label_at(failed, request),
            next = %next.label_at(failed + 1, request),
            %error,
            "a model failed: asking the next"
        );
        Some(next)
    }
}

impl FallbackPrimary {
    /// The fallback of the primary then `model`, asked with the request as it is.
    #[must_use]
    pub fn or(self, model: impl ChatModel + 'static) -> FallbackModel {
        self.into_fallback().or(model)
    }

    /// The fallback of the primary then `model`, the request's
    /// [`model`](ChatRequest::model) replaced by `model_name` for it.
    #[must_use]
    pub fn or_as(
        self,
        model: impl ChatModel + 'static,
        model_name: impl Into<String>,
    ) -> FallbackModel {
        self.into_fallback().or_as(model, model_name)
    }

    fn into_fallback(self) -> FallbackModel {
        FallbackModel {
            name: String::new(),
            models: vec![self.0],
            falls_back: Box::new(ModelError::is_provider_side),
        }
    }
}

/// `fallback(anthropic, openai_chat)`.
fn name_of(models: &[Fallback]) -> String {
    let names: Vec<&str> = models
        .iter()
        .map(|fallback| fallback.model.name())
        .collect();
    format!("fallback({})", names.join(", "))
}

/// The error of a call whose models failed with `errors`, each with its place in the list
/// and its label, in turn: the one error when only one model was asked, else
/// [`ModelError::AllFailed`] (the errors of a model that is a fallback itself put in line
/// with the others, each named by its place in both lists: `model 1.2 (…)`).
fn failure(mut errors: Vec<(usize, String, ModelError)>) -> ModelError {
    // One model asked gives its own error; a fallback's `AllFailed` is still numbered in
    // this list too (`model 1.2`), below.
    if let [(_, _, error)] = errors.as_slice()
        && !matches!(error, ModelError::AllFailed { .. })
        && let Some((_, _, error)) = errors.pop()
    {
        return error;
    }
    let errors = errors
        .into_iter()
        .flat_map(|(at, label, error)| match error {
            ModelError::AllFailed { errors } => errors
                .into_iter()
                .map(|(inner, error)| (nested_label(at, &inner), error))
                .collect(),
            error => vec![(label, error)],
        })
        .collect();
    ModelError::AllFailed { errors }
}

/// The label of a model of the fallback at `at` (from 0) in its own list: `model 1.2 (…)`
/// for that fallback's `model 2 (…)`, else `model 1: <label>` (an `AllFailed` of a model of
/// one's own, labelled otherwise).
fn nested_label(at: usize, inner: &str) -> String {
    let place = at + 1;
    match inner.strip_prefix("model ") {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => {
            format!("model {place}.{rest}")
        }
        _ => format!("model {place}: {inner}"),
    }
}

impl fmt::Debug for FallbackModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let models: Vec<String> = self.models.iter().map(Fallback::label).collect();
        f.debug_struct("FallbackModel")
            .field("models", &models)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for FallbackPrimary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FallbackPrimary")
            .field(&self.0.label())
            .finish()
    }
}

#[async_trait]
impl ChatModel for FallbackModel {
    /// `fallback(<each model's name>)`, e.g. `fallback(anthropic, openai_chat)`.
    fn name(&self) -> &str {
        &self.name
    }

    async fn complete(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let mut errors = Vec::new();
        let mut at = 0;
        let mut fallback = &self.models[0];
        loop {
            let error = match fallback.model.complete(&fallback.request(request)).await {
                Ok(response) => return Ok(fallback.named(request, response)),
                Err(error) => error,
            };
            let next = self.next_after(at, &error, request);
            errors.push((at, fallback.label_at(at, request), error));
            match next {
                Some(next) => (at, fallback) = (at + 1, next),
                None => return Err(failure(errors)),
            }
        }
    }

    /// As [`complete`](Self::complete), but a model that has delivered any delta (but an
    /// empty text, which shows nothing) is not followed by another: its error is the
    /// call's, or the caller would see the answer begin twice. A tool call's delta counts,
    /// its name and id alone too: a caller may show that a call began.
    async fn stream(
        &self,
        request: &ChatRequest,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, ModelError> {
        let mut errors = Vec::new();
        let mut at = 0;
        let mut fallback = &self.models[0];
        loop {
            let mut delivered = false;
            let answer = {
                let mut forward = |delta: StreamDelta| {
                    // An empty text shows nothing: no answer began.
                    delivered |= !matches!(&delta, StreamDelta::Text(text) if text.is_empty());
                    on_delta(delta);
                };
                fallback
                    .model
                    .stream(&fallback.request(request), &mut forward)
                    .await
            };
            let error = match answer {
                Ok(response) => return Ok(fallback.named(request, response)),
                Err(error) => error,
            };
            let next = if delivered {
                None
            } else {
                self.next_after(at, &error, request)
            };
            errors.push((at, fallback.label_at(at, request), error));
            match next {
                Some(next) => (at, fallback) = (at + 1, next),
                None => return Err(failure(errors)),
            }
        }
    }

    /// Every model must take the tools: the first refusal.
    fn check_declarations(&self, tools: &[&Tool]) -> Result<(), ModelError> {
        self.models
            .iter()
            .try_for_each(|fallback| fallback.model.check_declarations(tools))
    }

    /// The largest any model would ask for with `request` (each asked with the request's
    /// settings under its own model name, without the conversation; `None` when none
    /// says): a
    /// session reserves it before knowing which model answers, and the model that answers
    /// must find its output's room in the window. The smaller one of the primary would
    /// leave a fallback asking more to be refused as too long, the moment the primary is
    /// down; the larger one costs the primary that many tokens of room it does not use.
    fn output_limit(&self, request: &ChatRequest) -> Option<u32> {
        self.models
            .iter()
            .filter_map(|fallback| fallback.model.output_limit(&fallback.settings(request)))
            .max()
    }

    /// What every model takes ([`ImageLimits::intersect`]): an image one of them refuses
    /// would have that one refuse the whole request, the moment it is asked.
    fn image_limits(&self) -> ImageLimits {
        self.models
            .iter()
            .map(|fallback| fallback.model.image_limits())
            .reduce(ImageLimits::intersect)
            .unwrap_or_default()
    }
}
