//! Golden tests: for each provider, the tools rendered, a documented response parsed and
//! run, and the results rendered, compared with hand-written fixtures.

use crate::support::provider_tools::{fixture, fixture_json, manager, run_calls};
use serde_json::{Value, json};
use toolsmith::provider::{Declared, Provider, RenderOptions};

async fn golden(provider: Provider) -> Vec<crate::support::provider_tools::Outcome> {
    let (manager, memory) = manager();
    let rendered = manager
        .rendered_tools(provider, Declared::All, &RenderOptions::default())
        .unwrap();
    assert!(rendered.not_strict.is_empty(), "{:?}", rendered.not_strict);
    let tools = &rendered.tools;
    assert_eq!(
        *tools,
        fixture_json(provider, "tools.json"),
        "{provider} tools:\n{tools:#}"
    );

    let response = match provider {
        Provider::Text => Value::String(fixture(provider, "response.txt")),
        _ => fixture_json(provider, "response.json"),
    };
    let calls = provider.parse_calls(&response).unwrap();
    let outcomes = run_calls(&manager, calls).await;
    let names: Vec<&str> = outcomes.iter().map(|o| o.1.as_str()).collect();
    assert_eq!(names, ["get_weather", "add", "memory", "get_wether"]);
    assert_eq!(memory.runs.load(std::sync::atomic::Ordering::SeqCst), 1);

    let results = manager.render_results(provider, &outcomes);
    assert_eq!(
        Value::Array(results.clone()),
        fixture_json(provider, "results.json"),
        "{provider} results:\n{:#}",
        Value::Array(results)
    );
    outcomes
}

#[tokio::test]
async fn openai_chat() {
    let outcomes = golden(Provider::OpenAiChat).await;
    let ids: Vec<&str> = outcomes.iter().map(|o| o.0.as_str()).collect();
    assert_eq!(
        ids,
        [
            "call_weather_1",
            "call_add_2",
            "call_memory_3",
            "call_typo_4"
        ]
    );
}

#[tokio::test]
async fn openai_responses() {
    let outcomes = golden(Provider::OpenAiResponses).await;
    // Results refer to `call_id`, not the output item's `id`.
    assert_eq!(outcomes[0].0, "call_weather_1");
}

#[tokio::test]
async fn anthropic() {
    let outcomes = golden(Provider::Anthropic).await;
    assert_eq!(outcomes[1].0, "toolu_02B19r91rx91mr928946mr0");
}

#[tokio::test]
async fn gemini() {
    let outcomes = golden(Provider::Gemini).await;
    assert_eq!(outcomes[0].0, "toolsmith-call-0");
}

#[tokio::test]
async fn text() {
    let outcomes = golden(Provider::Text).await;
    // `{'name': 'add', 'arguments': {a: "2", b: 40,},}` was repaired, "2" read as 2.
    assert_eq!(outcomes[1].2.as_ref().unwrap().content.to_text(), "42");
}

#[test]
fn every_provider_has_fixtures() {
    for provider in Provider::ALL {
        let tools = fixture_json(provider, "tools.json");
        assert!(tools.is_array(), "{provider}");
        assert!(
            fixture_json(provider, "results.json").is_array(),
            "{provider}"
        );
    }
    assert_eq!(
        fixture_json(Provider::Gemini, "tools.json")[0]["functionDeclarations"][2]["name"],
        json!("add")
    );
}
