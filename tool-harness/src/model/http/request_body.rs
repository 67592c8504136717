//! A chat request's body as sent: its fields in the order the client wrote them, the
//! declared tools among them as the array rendered once for their set
//! ([`RenderedSets`](super::rendered_sets::RenderedSets)), written out as it is rather than
//! copied into each body.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The body's fields, and the `tools` array to write in the place of its `tools` field.
#[derive(Debug, Default)]
pub(crate) struct RequestBody {
    fields: Map<String, Value>,
    /// Written for the `tools` field (which holds `null` to keep its place in the order).
    tools: Option<Arc<RawValue>>,
}

/// The key the rendered array goes under, in every API's body.
const TOOLS: &str = "tools";

impl RequestBody {
    /// Declares `tools` (a rendered `tools` array) as the body's `tools` field, written after
    /// the fields already there and before those inserted later.
    pub(crate) fn declare_tools(&mut self, tools: Arc<RawValue>) {
        self.fields.insert(TOOLS.to_owned(), Value::Null);
        self.tools = Some(tools);
    }
}

impl From<Map<String, Value>> for RequestBody {
    fn from(fields: Map<String, Value>) -> Self {
        Self {
            fields,
            tools: None,
        }
    }
}

/// The fields, read and written as a map (the `tools` field holds `null` in it).
impl Deref for RequestBody {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Self::Target {
        &self.fields
    }
}

impl DerefMut for RequestBody {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.fields
    }
}

/// As the JSON object of the fields, the `tools` field the rendered array: to the byte what
/// the object with the array as a value would serialize to.
impl Serialize for RequestBody {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.fields.len()))?;
        for (name, value) in &self.fields {
            match &self.tools {
                Some(tools) if name == TOOLS => map.serialize_entry(name, &**tools)?,
                _ => map.serialize_entry(name, value)?,
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use toolsmith_core::provider::{Provider, RenderOptions, StrictMode};
    use toolsmith_core::{Args, Tool, ToolDeclarations, ToolDefinition, scheme};

    use super::super::api::HttpApi;
    use super::super::{
        AnthropicModel, GeminiModel, HttpModelBuilder, OpenAiChatModel, OpenAiResponsesModel,
        PromptCaching,
    };
    use crate::model::http::body::render_tools;
    use crate::model::{ChatOptions, ChatRequest, Message, ToolChoice};

    /// `add` can be strict; `set_env` takes an open map, which strict mode cannot express.
    fn declarations() -> ToolDeclarations {
        let add = ToolDefinition::new(
            "add",
            "Add two integers.",
            Args::new(
                scheme::object()
                    .required("a", scheme::integer())
                    .required("b", scheme::integer())
                    .build(),
            ),
        );
        let set_env = ToolDefinition::new(
            "set_env",
            "Set environment variables.",
            Args::new(
                json!({"type": "object", "properties": {"vars": {"type": "object",
                "additionalProperties": {"type": "string"}}}, "required": ["vars"]}),
            ),
        );
        ToolDeclarations {
            shed: None,
            tools: vec![Tool::SingleCommand(add), Tool::SingleCommand(set_env)],
        }
    }

    fn local<M>(builder: HttpModelBuilder<M>) -> HttpModelBuilder<M> {
        builder.api_key("k").base_url("http://127.0.0.1:9/v1")
    }

    /// The bytes of the body `api` sends for `request` (asked twice: the second time its
    /// tools come from the rendered set) are the bytes of the same body holding the tools
    /// rendered as a value, as every body did before sets were rendered once, its last
    /// tool given `mark` as its `cache_control` where there is one (Anthropic's).
    fn sends_the_body_of_old(
        api: &impl HttpApi,
        provider: Provider,
        request: &ChatRequest,
        mark: Option<serde_json::Value>,
    ) {
        for asked in ["first", "again"] {
            let body = api.body(request).unwrap();
            let sent = serde_json::to_vec(&body).unwrap();
            let options = RenderOptions {
                strict: request.options.strict,
            };
            let mut old = body.fields.clone();
            let mut tools = render_tools(provider, &request.tools, &options)
                .unwrap()
                .unwrap();
            if let Some(mark) = &mark {
                let last = tools.as_array_mut().unwrap().last_mut().unwrap();
                last["cache_control"] = mark.clone();
            }
            old.insert("tools".to_owned(), tools);
            let old = serde_json::to_vec(&serde_json::Value::Object(old)).unwrap();
            assert_eq!(
                String::from_utf8(sent).unwrap(),
                String::from_utf8(old).unwrap(),
                "{provider} ({asked})"
            );
        }
    }

    #[test]
    fn a_body_with_a_rendered_set_is_the_body_with_the_tools_rendered_in_it() {
        let set = Arc::new(declarations());
        for strict in [StrictMode::Always, StrictMode::Never] {
            let request = ChatRequest {
                model: "m".to_owned(),
                system: Some("Be brief.".to_owned()),
                messages: vec![Message::user("Set HOME and add 2 and 3.")],
                tools: Arc::clone(&set),
                options: ChatOptions {
                    strict,
                    temperature: Some(0.2),
                    max_output_tokens: Some(100),
                    tool_choice: ToolChoice::Tool("add".to_owned()),
                },
            };
            let chat = local(OpenAiChatModel::builder()).build().unwrap();
            sends_the_body_of_old(&chat, Provider::OpenAiChat, &request, None);
            let responses = local(OpenAiResponsesModel::builder()).build().unwrap();
            sends_the_body_of_old(&responses, Provider::OpenAiResponses, &request, None);
            // Marked for the prompt cache by default, its set rendered with the mark; not
            // marked when caching is off.
            let anthropic = local(AnthropicModel::builder()).build().unwrap();
            let mark = json!({"type": "ephemeral"});
            sends_the_body_of_old(&anthropic, Provider::Anthropic, &request, Some(mark));
            let one_hour = local(AnthropicModel::builder())
                .prompt_caching(PromptCaching::OneHour)
                .build()
                .unwrap();
            let mark = json!({"type": "ephemeral", "ttl": "1h"});
            sends_the_body_of_old(&one_hour, Provider::Anthropic, &request, Some(mark));
            let uncached = local(AnthropicModel::builder())
                .prompt_caching(PromptCaching::Off)
                .build()
                .unwrap();
            sends_the_body_of_old(&uncached, Provider::Anthropic, &request, None);
            let gemini = local(GeminiModel::builder()).build().unwrap();
            sends_the_body_of_old(&gemini, Provider::Gemini, &request, None);
        }
    }
}
