//! `toolsmith tools`: the declarations a provider would receive.

use toolsmith::Provider;
use toolsmith::provider::{Declared, RenderOptions, StrictMode};

use crate::cli::{ProviderName, ToolsArgs};
use crate::presets;
use crate::{Failure, output};

/// Prints the preset's `tools` array in the provider's format.
pub fn run(args: &ToolsArgs) -> Result<(), Failure> {
    let manager = presets::manager(&args.preset)?;
    let provider = match args.provider {
        ProviderName::OpenaiChat => Provider::OpenAiChat,
        ProviderName::OpenaiResponses => Provider::OpenAiResponses,
        ProviderName::Anthropic => Provider::Anthropic,
        ProviderName::Gemini => Provider::Gemini,
        ProviderName::Text => Provider::Text,
    };
    let mut options = RenderOptions::default();
    if args.strict {
        options.strict = StrictMode::Always;
    }
    let rendered = manager.rendered_tools(provider, Declared::All, &options)?;
    // What could not be strict goes to stderr, so stdout stays the provider's JSON.
    for not_strict in &rendered.not_strict {
        output::note(format_args!("not strict: {not_strict}"));
    }
    output::line(serde_json::to_string_pretty(&rendered.tools)?)
}
