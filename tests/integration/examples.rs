//! The examples that show the harness run to the end and print what they are there to show.
//! `cargo test` builds the examples but runs none, so their sources are compiled in here and
//! their `run` called with a buffer for what they print.

#[cfg(feature = "mcp")]
#[path = "../../examples/mcp.rs"]
// Its `main` is the example's entry point, not called here.
#[allow(dead_code)]
mod mcp_example;

#[path = "../../examples/agent_server.rs"]
#[allow(dead_code)]
mod agent_server_example;

#[cfg(feature = "http-models")]
#[path = "../../examples/quickstart.rs"]
#[allow(dead_code)]
mod quickstart_example;

#[path = "../../examples/shed_eval.rs"]
#[allow(dead_code)]
mod shed_eval_example;

#[path = "../../examples/typed_answers.rs"]
#[allow(dead_code)]
mod typed_answers_example;

/// What `run` printed, every line of `expected` found in it.
fn assert_prints(printed: Vec<u8>, expected: &[&str]) {
    let printed = String::from_utf8(printed).expect("the example prints UTF-8");
    for line in expected {
        assert!(
            printed.contains(line),
            "the example's output lacks {line:?}:\n{printed}"
        );
    }
}

#[cfg(feature = "mcp")]
#[tokio::test]
async fn the_mcp_example_serves_lists_calls_and_shuts_down() {
    let mut printed = Vec::new();
    mcp_example::run(&mut printed)
        .await
        .expect("the example runs to the end");
    assert_prints(
        printed,
        &[
            "MCP server at http://127.0.0.1:",
            "  forecast: The weather forecast for a city",
            "  celsius_to_fahrenheit: Convert degrees Celsius to degrees Fahrenheit.",
            "forecast(Lisbon, 1) -> Lisbon, tomorrow: sunny",
            // The server's validation, with the argument's path, as invalid arguments of
            // the local tool, named once.
            r#"forecast with bad arguments -> error: Invalid arguments for tool 'forecast': /days_ahead: "tomorrow" is not of type "integer""#,
            // The session called the remote tool and answered from its result.
            r#"  forecast({"city":"Porto","days_ahead":0}) -> Porto, today: sunny"#,
            "the session's answer: The forecast says: Porto, today: sunny",
            "server shut down",
        ],
    );
}

#[tokio::test]
async fn the_typed_answers_example_mends_an_answer_and_prints_the_value() {
    let mut printed = Vec::new();
    typed_answers_example::run(&mut printed)
        .await
        .expect("the example runs to the end");
    assert_prints(
        printed,
        &[
            "the model's words: Tomorrow Lisbon gets 24 °C",
            // The doc comments are the schema's descriptions.
            r#""description": "The highest temperature, in degrees Celsius.""#,
            r#"sent back to the model: Invalid arguments for tool 'final_answer': /celsius: "warm" is not of type "number""#,
            "the answer: Lisbon tomorrow: 24 °C, Clear, 10 % chance of rain",
            "3 model calls",
        ],
    );
}

#[tokio::test]
async fn the_agent_server_example_streams_each_client_its_own_run() {
    let mut printed = Vec::new();
    agent_server_example::run(&mut printed)
        .await
        .expect("the example runs to the end");
    let printed = String::from_utf8(printed).expect("UTF-8");
    let lines = |client: &str| -> Vec<serde_json::Value> {
        printed
            .lines()
            .filter_map(|line| line.strip_prefix(client))
            .map(|json| serde_json::from_str(json).expect("a JSON line"))
            .collect()
    };
    let (first, second) = (lines("client 1: "), lines("client 2: "));
    // Each client's run alone: its own call, its own answer, last.
    for (read, call, answer) in [
        (
            &first,
            "count-22",
            "\"Is this the real life?\" has 5 words.",
        ),
        (
            &second,
            "count-21",
            "\"Is this just fantasy?\" has 4 words.",
        ),
    ] {
        let types: Vec<&str> = read.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            [
                "model_request",
                "model_response",
                "tool_call_started",
                "tool_call_finished",
                "turn_finished",
                "model_request",
                "model_response",
                "answer"
            ],
            "{printed}"
        );
        assert_eq!(read[2]["data"]["call_id"], call, "{printed}");
        assert_eq!(read[7]["data"], answer, "{printed}");
    }
}

/// What the quickstart makes of an environment given as `(name, value)` pairs: the model's
/// and the requested model's names, or the error it prints.
#[cfg(feature = "http-models")]
fn quickstart_model(environment: &[(&str, &str)]) -> Result<Option<(String, String)>, String> {
    let var = |name: &str| {
        environment
            .iter()
            .find(|(set, _)| *set == name)
            .map(|(_, value)| (*value).to_owned())
    };
    quickstart_example::model_from_env(&var)
        .map(|named| named.map(|(model, requested)| (model.name().to_owned(), requested)))
}

#[cfg(feature = "http-models")]
#[test]
fn the_quickstart_names_the_variables_it_cannot_use_instead_of_panicking() {
    let refused = quickstart_model(&[("OPENAI_BASE_URL", "not a url")])
        .expect_err("a base URL that is not one is refused");
    assert!(
        refused.starts_with("OPENAI_API_KEY / OPENAI_BASE_URL: ")
            && refused.contains("\"not a url\""),
        "{refused}"
    );
    let refused = quickstart_model(&[
        ("ANTHROPIC_API_KEY", "sk-ant-test"),
        ("ANTHROPIC_BASE_URL", "ftp://localhost"),
    ])
    .expect_err("a base URL that is not HTTP is refused");
    assert!(
        refused.starts_with("ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL: ")
            && refused.contains("\"ftp://localhost\""),
        "{refused}"
    );
    // Blank is unset, as for the clients' `from_env`: the scripted model runs.
    assert_eq!(quickstart_model(&[("OPENAI_API_KEY", "  ")]), Ok(None));
    assert_eq!(quickstart_model(&[]), Ok(None));
    assert_eq!(
        quickstart_model(&[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")]),
        Ok(Some(("openai_chat".to_owned(), "gpt-4.1-mini".to_owned())))
    );
}

/// The README's first command: the quickstart's session, on its scripted model, finds both
/// tools, recovers from the wrong argument and answers.
#[cfg(feature = "http-models")]
#[tokio::test]
async fn the_quickstart_runs_to_its_answer() {
    let model = std::sync::Arc::new(quickstart_example::scripted_model());
    let run = quickstart_example::ask(model, "scripted".to_owned())
        .await
        .expect("the quickstart's run ends with an answer");
    assert_eq!(
        run.text,
        "Paris: 64.4 °F and cloudy. Rome: 75.2 °F and sunny."
    );
    assert_eq!(run.model_calls, 5);
    let calls: Vec<(&str, bool)> = run
        .tool_calls
        .iter()
        .map(|call| (call.name.as_str(), call.result.is_error()))
        .collect();
    assert_eq!(
        calls,
        [
            ("shed", false),
            ("get_weather", false),
            // `town` for `city`: refused, and corrected the next turn.
            ("get_weather", true),
            ("get_weather", false),
            ("to_fahrenheit", false),
            ("to_fahrenheit", false),
        ]
    );
    let results: Vec<String> = run.tool_calls[3..]
        .iter()
        .map(|call| call.result.content.to_text())
        .collect();
    assert_eq!(results, ["24 °C, sunny", "64.4", "75.2"]);
    assert_eq!(
        (run.usage.input_tokens, run.usage.output_tokens),
        (600, 100)
    );
}

#[test]
fn shed_eval_refuses_a_second_set_or_an_unknown_option_rather_than_ignore_it() {
    let parse =
        |args: &[&str]| shed_eval_example::parse_options(args.iter().map(|arg| (*arg).to_owned()));
    assert_eq!(
        parse(&["data/bfcl", "--misses"]),
        Ok(shed_eval_example::Options {
            dir: "data/bfcl".into(),
            show_misses: true,
        })
    );
    assert_eq!(
        parse(&["data/bfcl", "data/seal"]),
        Err(r#"one DIR a run: given "data/bfcl" and "data/seal""#.to_owned())
    );
    assert_eq!(
        parse(&["data/bfcl", "--miss"]),
        Err(r#"unknown option "--miss""#.to_owned())
    );
    assert_eq!(parse(&["--misses"]), Err("no DIR given".to_owned()));
}
