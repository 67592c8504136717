//! The ToolShed, the `shed` meta-tool and tool discovery (spec 01 §2–§3).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::async_trait;
use toolsmith::in_memory::HashingEmbedder;
use toolsmith::shed::{
    MAX_SELECTED, MAX_SHED_LIMIT, MatchedBy, ShedResult, ToolShed, ToolShedError,
};
use toolsmith::{
    Args, Embedder, FnTool, RegistrationError, ServiceError, SessionParts, State, Tool, ToolArgs,
    ToolArguments, ToolCallManager, ToolCallRequest, ToolCallResult, ToolConstructor,
    ToolDefinition, ToolError, ToolErrorKind, ToolImpl, scheme, tool_fn,
};

fn tool(name: &str, description: &str) -> FnTool {
    let answer = format!("{name} ran");
    FnTool::new(
        name,
        description,
        Args::new(
            scheme::object()
                .optional("input", scheme::string().describe("What to work on"))
                .build(),
        ),
        move |_: ToolArgs<'_>| {
            let answer = answer.clone();
            async move { Ok(ToolCallResult::text(answer)) }
        },
    )
}

fn catalogue() -> Vec<FnTool> {
    vec![
        tool("get_weather", "Current weather conditions for a city."),
        tool("read_file", "Read the contents of a file from disk."),
        tool("write_file", "Write text to a file."),
        tool("send_email", "Send an email message to someone."),
        tool("convert_currency", "Convert money between currencies."),
        tool("book_hotel", "Book a hotel room in a city."),
    ]
}

fn manager_with(tools: Vec<FnTool>) -> ToolCallManager {
    ToolShed::new()
        .tools(tools)
        .build(SessionParts::in_memory("test"))
        .expect("the shed builds")
}

fn shed_call(arguments: Value) -> ToolCallRequest {
    ToolCallRequest::new(
        "shed-1",
        "shed",
        ToolArguments::try_from(arguments).expect("an object"),
    )
}

async fn shed(manager: &ToolCallManager, arguments: Value) -> Result<ShedResult, ToolError> {
    let result = manager.execute_one(&shed_call(arguments)).await?;
    Ok(serde_json::from_str(&result.content.to_text()).expect("a ShedResult"))
}

fn names(result: &ShedResult) -> Vec<&str> {
    result.tools.iter().map(|t| t.name.as_str()).collect()
}

// --- ToolShed ---------------------------------------------------------------------------------

#[test]
fn a_name_added_twice_fails_the_build() {
    let shed = ToolShed::new()
        .tool(tool("a", "first"))
        .tool(tool("b", "other"))
        .tool(tool("a", "second"));
    assert_eq!(shed.names(), ["a", "b"]);
    let err = shed.build(SessionParts::in_memory("s")).unwrap_err();
    assert_eq!(err, ToolShedError::DuplicateTool("a".into()));
    assert_eq!(err.to_string(), "the tool 'a' was added to the shed twice");
}

#[test]
fn the_name_shed_is_reserved() {
    let err = ToolShed::new()
        .tool(tool("ok", "fine"))
        .tool(tool("shed", "an impostor"))
        .build(SessionParts::in_memory("s"))
        .unwrap_err();
    assert_eq!(err, ToolShedError::ReservedName("shed".into()));
}

#[test]
fn a_constructor_that_builds_another_name_is_refused() {
    let err = ToolShed::new()
        .tool(tool_fn("notes", |_| {
            Arc::new(tool("memo", "misnamed")) as Arc<dyn ToolImpl>
        }))
        .build(SessionParts::in_memory("s"))
        .unwrap_err();
    assert_eq!(
        err,
        ToolShedError::NameMismatch {
            expected: "notes".into(),
            built: "memo".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "the constructor for 'notes' built a tool named 'memo'"
    );
}

#[test]
fn registration_errors_name_the_tool() {
    let err = ToolShed::new()
        .tool(tool("bad name", "spaces are not allowed"))
        .build(SessionParts::in_memory("s"))
        .unwrap_err();
    let ToolShedError::Registration { tool, source } = &err else {
        panic!("expected a registration error, got {err:?}");
    };
    assert_eq!(tool, "bad name");
    assert!(matches!(source, RegistrationError::InvalidName { .. }));
    assert!(
        err.to_string()
            .starts_with("the tool 'bad name' could not be registered: ")
    );
}

#[test]
fn lookups_and_names_follow_insertion_order() {
    let shed = ToolShed::new()
        .tool(tool("zeta", "z"))
        .tools(vec![tool("alpha", "a"), tool("mid", "m")])
        .tool(Arc::new(tool("arc", "an Arc<T>")))
        .tool(Arc::new(tool("dyn", "an Arc<dyn ToolImpl>")) as Arc<dyn ToolImpl>);
    assert_eq!(shed.names(), ["zeta", "alpha", "mid", "arc", "dyn"]);
    assert!(shed.contains("mid") && !shed.contains("nope"));
    assert_eq!(shed.get("alpha").map(|c| c.name()), Some("alpha".into()));
    assert!(shed.get("nope").is_none());
    assert_eq!(shed.len(), 5);
    let manager = shed.build(SessionParts::in_memory("s")).unwrap();
    assert_eq!(manager.names(), ["zeta", "alpha", "mid", "arc", "dyn"]);
}

struct Greeting(String);

#[tokio::test]
async fn constructors_get_the_session_parts_and_state() {
    let constructor = tool_fn("greet", |parts| {
        let greeting: State<Greeting> =
            toolsmith::FromSessionParts::from_session_parts(parts).expect("state was added");
        let session = parts.session_id.clone();
        Arc::new(FnTool::new(
            "greet",
            "Greet.",
            Args::empty(),
            move |_: ToolArgs<'_>| {
                let text = format!("{} from {session}", greeting.0.0);
                async move { Ok(ToolCallResult::text(text)) }
            },
        )) as Arc<dyn ToolImpl>
    });
    assert!(constructor.needs_session());
    let manager = ToolShed::new()
        .with_state(Greeting("hello".into()))
        .tool(constructor)
        .build(SessionParts::in_memory("s-42"))
        .unwrap();
    let call = ToolCallRequest::new("c", "greet", ToolArguments::new());
    let result = manager.execute_one(&call).await.unwrap();
    assert_eq!(result.content.to_text(), "hello from s-42");
}

#[test]
fn tools_that_need_a_session_cannot_be_built_without_one() {
    let ready = ToolShed::new().tool(tool("ping", "pong"));
    assert!(ready.needing_session().is_empty());
    assert_eq!(ready.build_without_session("s").unwrap().names(), ["ping"]);

    let err = ToolShed::new()
        .tool(tool("ping", "pong"))
        .tool(tool_fn("notes", |_| {
            Arc::new(tool("notes", "n")) as Arc<dyn ToolImpl>
        }))
        .build_without_session("s")
        .unwrap_err();
    assert_eq!(err, ToolShedError::NeedsSession("notes".into()));
}

// --- What the model sees ----------------------------------------------------------------------

#[tokio::test]
async fn an_empty_session_declares_nothing() {
    let manager = ToolShed::new().build(SessionParts::in_memory("s")).unwrap();
    assert!(manager.offered_tools().is_empty());
    assert_eq!(
        manager
            .execute_one(&shed_call(json!({"description": "anything"})))
            .await,
        Err(ToolError::UnknownTool("shed".into()))
    );
    assert_eq!(
        manager.check_offered("shed"),
        Err(ToolError::UnknownTool("shed".into()))
    );
    assert!(manager.search_tools("anything", 5).await.is_empty());
}

#[tokio::test]
async fn only_shed_is_offered_until_it_returns_tools() {
    let manager = manager_with(catalogue());
    let offered = manager.offered_tools();
    assert_eq!(offered.shed.as_ref().map(Tool::name), Some("shed"));
    assert!(offered.tools.is_empty());

    let refused = manager.check_offered("get_weather").unwrap_err();
    assert_eq!(refused.kind(), ToolErrorKind::NotActive);
    assert!(
        refused
            .to_string()
            .contains("look it up with the `shed` tool first")
    );

    let found = shed(
        &manager,
        json!({"description": "what is the weather in Oslo", "limit": 2}),
    )
    .await
    .unwrap();
    assert_eq!(names(&found)[0], "get_weather");
    assert!(found.tools.len() <= 2);
    for name in names(&found) {
        assert!(manager.is_active(name));
        assert!(manager.check_offered(name).is_ok());
    }
    let summary = &found.tools[0];
    assert_eq!(
        summary.description,
        "Current weather conditions for a city."
    );
    assert_eq!(summary.category, "custom");
    assert_eq!(summary.arguments["properties"]["input"]["type"], "string");

    let offered: Vec<String> = manager
        .offered_tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(offered[0], "shed");
    assert_eq!(&offered[1..], names(&found));

    let call = ToolCallRequest::new("c", "get_weather", ToolArguments::new());
    assert_eq!(
        manager.execute_one(&call).await.unwrap().content.to_text(),
        "get_weather ran"
    );
    assert_eq!(
        manager.check_offered("send_email").unwrap_err().kind(),
        ToolErrorKind::NotActive
    );
}

/// A session of a few tools can declare them all and no `shed`: each is offered, active and
/// callable with no search first, tools registered later too, the offer's shared
/// declarations follow the switch both ways, and `shed` still answers a model that calls it.
#[tokio::test]
async fn every_tool_can_be_declared_without_shed() {
    let manager = manager_with(catalogue());
    let before = manager.offered_declarations();
    assert!(before.shed.is_some() && before.tools.is_empty());

    manager.set_every_tool_declared(true);
    assert!(manager.declares_every_tool());
    let offered = manager.offered_declarations();
    assert!(offered.shed.is_none(), "{offered:?}");
    let declared: Vec<&str> = offered.tools.iter().map(Tool::name).collect();
    let catalogue_names: Vec<String> = catalogue()
        .iter()
        .map(|t| t.definition().name().to_owned())
        .collect();
    assert_eq!(declared, catalogue_names);
    assert_eq!(manager.active_definitions().len(), catalogue_names.len());
    assert!(manager.is_active("send_email"));
    assert!(!manager.is_active("no_such_tool"));
    assert!(manager.check_offered("send_email").is_ok());
    assert_eq!(
        manager.check_offered("no_such_tool"),
        Err(ToolError::UnknownTool("no_such_tool".into()))
    );
    // The batch path's offer check lets it run.
    let call = ToolCallRequest::new("c", "send_email", ToolArguments::new());
    let ran = manager
        .execute_batch_with(
            &[call],
            &toolsmith::BatchOptions::new().with_offer_check(true),
        )
        .await;
    assert_eq!(
        ran[0].result.as_ref().unwrap().content.to_text(),
        "send_email ran"
    );

    // A tool registered later is declared on the next request.
    manager
        .register(Arc::new(tool(
            "late_tool",
            "Registered after the session began.",
        )))
        .unwrap();
    let offered = manager.offered_declarations();
    assert_eq!(offered.tools.last().map(Tool::name), Some("late_tool"));

    // `shed` still answers, though not declared.
    let found = shed(
        &manager,
        json!({"description": "weather in Oslo", "limit": 1}),
    )
    .await
    .unwrap();
    assert_eq!(names(&found), ["get_weather"]);

    // Back to the specification's offer: `shed` and what it returned.
    manager.set_every_tool_declared(false);
    let offered = manager.offered_declarations();
    assert!(offered.shed.is_some());
    let active: Vec<&str> = offered.tools.iter().map(Tool::name).collect();
    assert_eq!(active, ["get_weather"]);
    assert_eq!(
        manager.check_offered("send_email").unwrap_err().kind(),
        ToolErrorKind::NotActive
    );
}

#[tokio::test]
async fn select_activates_exact_names_and_reports_unknown_ones() {
    let manager = manager_with(catalogue());
    let found = shed(
        &manager,
        json!({"description": "select: send_email, nope ,read_file,send_email", "limit": 1}),
    )
    .await
    .unwrap();
    assert_eq!(names(&found), ["send_email", "read_file"]);
    assert_eq!(found.unknown, ["nope"]);
    assert!(manager.is_active("send_email") && manager.is_active("read_file"));
    assert!(!manager.is_active("write_file"));

    let none = shed(&manager, json!({"description": "select:"}))
        .await
        .unwrap();
    assert!(none.tools.is_empty() && none.unknown.is_empty());
}

#[tokio::test]
async fn select_takes_at_most_max_selected_names_and_says_where_it_stopped() {
    let tools: Vec<FnTool> = (0..30)
        .map(|i| tool(&format!("report_{i:02}"), "Build a sales report."))
        .collect();
    let manager = manager_with(tools);
    let mut wanted: Vec<String> = (0..30).rev().map(|i| format!("report_{i:02}")).collect();
    wanted.insert(3, "nope".into());
    let found = shed(
        &manager,
        json!({"description": format!("select:{}", wanted.join(","))}),
    )
    .await
    .unwrap();
    // The first MAX_SELECTED names, in order: one of them unknown.
    assert_eq!(MAX_SELECTED, 20);
    let expected: Vec<&str> = wanted[..MAX_SELECTED]
        .iter()
        .map(String::as_str)
        .filter(|name| *name != "nope")
        .collect();
    assert_eq!(names(&found), expected);
    assert_eq!(found.unknown, ["nope"]);
    assert_eq!(manager.active_definitions().len(), MAX_SELECTED - 1);
    assert!(!manager.is_active(&wanted[MAX_SELECTED]));
    let hint = found.hint.unwrap();
    assert!(
        hint.contains("at most 20 names")
            && hint.contains(&format!("11 names from '{}' on", wanted[MAX_SELECTED])),
        "{hint}"
    );

    // All known: the hint says only where it stopped.
    let manager = manager_with(
        (0..30)
            .map(|i| tool(&format!("report_{i:02}"), "Build a sales report."))
            .collect(),
    );
    let known: Vec<String> = (0..25).map(|i| format!("report_{i:02}")).collect();
    let found = shed(
        &manager,
        json!({"description": format!("select:{}", known.join(","))}),
    )
    .await
    .unwrap();
    assert_eq!(found.tools.len(), MAX_SELECTED);
    assert!(found.unknown.is_empty() && found.closest.is_empty());
    let hint = found.hint.unwrap();
    assert!(hint.contains("5 names from 'report_20' on"), "{hint}");
    assert!(!manager.is_active("report_20"));
}

#[tokio::test]
async fn long_unknown_select_names_are_not_sent_back_whole() {
    let manager = manager_with(catalogue());
    let long = "x".repeat(100_000);
    let call = shed_call(json!({"description": format!("select:{long},read_file,{long}y")}));
    let result = manager.execute_one(&call).await.unwrap();
    let text = result.content.to_text();
    assert!(text.len() < 2_000, "{} characters", text.len());
    let found: ShedResult = serde_json::from_str(&text).unwrap();
    assert_eq!(names(&found), ["read_file"]);
    assert_eq!(found.unknown.len(), 2);
    for unknown in &found.unknown {
        assert!(
            unknown.starts_with("xxx") && unknown.ends_with('…'),
            "{unknown}"
        );
        assert_eq!(
            unknown.chars().count(),
            241,
            "cut after 240 characters, then …"
        );
    }
}

#[tokio::test]
async fn limit_defaults_to_five_and_is_capped() {
    let tools: Vec<FnTool> = (0..30)
        .map(|i| tool(&format!("report_{i:02}"), "Build a sales report."))
        .collect();
    let manager = manager_with(tools);
    let default = shed(&manager, json!({"description": "sales report"}))
        .await
        .unwrap();
    assert_eq!(default.tools.len(), 5);
    // Equal scores: name order.
    assert_eq!(
        names(&default),
        [
            "report_00",
            "report_01",
            "report_02",
            "report_03",
            "report_04"
        ]
    );
    let capped = shed(
        &manager,
        json!({"description": "sales report", "limit": 500}),
    )
    .await
    .unwrap();
    assert_eq!(capped.tools.len(), MAX_SHED_LIMIT);
    // Past what `usize` holds, a limit is capped all the same (it was refused as no integer).
    for huge in [json!(1e20), json!(u64::MAX), json!("100000000000000000000")] {
        let capped = shed(
            &manager,
            json!({"description": "sales report", "limit": huge}),
        )
        .await
        .unwrap();
        assert_eq!(capped.tools.len(), MAX_SHED_LIMIT, "{huge}");
    }
    let one = shed(
        &manager,
        json!({"description": "sales report", "limit": "1"}),
    )
    .await
    .unwrap();
    assert_eq!(one.tools.len(), 1);

    for bad in [
        json!({"description": "sales report", "limit": 0}),
        json!({"description": "sales report", "limit": -3}),
        json!({"description": ""}),
        json!({"limit": 3}),
    ] {
        let err = shed(&manager, bad.clone()).await.unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{bad}");
        assert!(
            err.to_string()
                .starts_with("Invalid arguments for tool 'shed'")
        );
    }
}

#[tokio::test]
async fn nothing_matching_returns_no_tools() {
    let manager = manager_with(catalogue());
    let found = shed(&manager, json!({"description": "xylophone zebra"}))
        .await
        .unwrap();
    assert!(found.tools.is_empty());
    assert!(manager.active_definitions().is_empty());
}

/// The names `shed` finds for `description` among `tools` (the catalogue's and these).
async fn found_among(tools: Vec<FnTool>, description: &str) -> Vec<String> {
    let mut all = catalogue();
    all.extend(tools);
    let manager = manager_with(all);
    let found = shed(&manager, json!({"description": description}))
        .await
        .unwrap();
    names(&found).into_iter().map(str::to_owned).collect()
}

#[tokio::test]
async fn a_tool_described_in_thai_is_found_by_one_word_of_its_description() {
    // Thai puts no space between words: its sentence was one term, found only whole.
    let thai = || {
        vec![
            // "Convert currency at today's exchange rate." / "Book a hotel room."
            tool("thai_currency", "แปลงสกุลเงินตามอัตราแลกเปลี่ยนปัจจุบัน"),
            tool("thai_hotel", "จองห้องพักโรงแรม"),
        ]
    };
    // "money", "hotel"; "weather" is in neither.
    assert_eq!(found_among(thai(), "เงิน").await, ["thai_currency"]);
    assert_eq!(found_among(thai(), "โรงแรม").await, ["thai_hotel"]);
    assert!(found_among(thai(), "อากาศ").await.is_empty());
}

#[tokio::test]
async fn a_tool_described_in_korean_is_found_by_a_word_written_there_with_a_particle() {
    // Korean writes a particle onto its word: "날씨를" (weather + object particle) was one
    // term, and the query "날씨" missed it.
    let korean = || {
        vec![
            // "Tells the weather of Seoul." / "Books a hotel room."
            tool("korean_weather", "서울의 날씨를 알려줍니다"),
            tool("korean_hotel", "호텔 객실을 예약합니다"),
        ]
    };
    assert_eq!(found_among(korean(), "날씨").await, ["korean_weather"]);
    assert_eq!(found_among(korean(), "객실").await, ["korean_hotel"]);
    // "exchange rate" is in neither.
    assert!(found_among(korean(), "환율").await.is_empty());
}

#[tokio::test]
async fn a_tool_is_found_by_a_katakana_word_inside_a_longer_one() {
    // A run of katakana was one term: "データ" (data) missed "データベース" (database).
    let japanese = || {
        vec![
            // "Send a query to the database." / "Book a hotel room."
            tool("japanese_db", "データベースにクエリを送る"),
            tool("japanese_hotel", "ホテルの部屋を予約する"),
        ]
    };
    assert_eq!(found_among(japanese(), "データ").await, ["japanese_db"]);
    assert_eq!(found_among(japanese(), "ホテル").await, ["japanese_hotel"]);
    // "Server" is in neither.
    assert!(found_among(japanese(), "サーバー").await.is_empty());
}

fn categorised(name: &str, description: &str, category: &str) -> FnTool {
    tool(name, description).with_category(category)
}

/// A search that finds nothing tells the model what there is: the names closest to its
/// words (a misspelt name), the categories of the session's tools, and what to do next.
#[tokio::test]
async fn a_search_that_finds_nothing_names_the_closest_tools_and_the_categories() {
    let manager = manager_with(vec![
        categorised("get_weather", "Current conditions for a city.", "weather"),
        categorised("read_file", "Read the contents of a file.", "files"),
        categorised("write_file", "Write text to a file.", "files"),
        tool("send_email", "Send an email message to someone."),
    ]);
    let result = manager
        .execute_one(&shed_call(json!({"description": "wether xylophone"})))
        .await
        .unwrap();
    let text = result.content.to_text();
    let found: ShedResult = serde_json::from_str(&text).unwrap();
    assert!(found.tools.is_empty());
    assert_eq!(found.closest, ["get_weather"]);
    // Sorted; the default category ("custom") says nothing and is left out.
    assert_eq!(found.categories, ["files", "weather"]);
    let hint = found.hint.as_deref().expect("a hint");
    assert!(
        hint.contains("No tool matched \"wether xylophone\""),
        "{hint}"
    );
    assert!(hint.contains("get_weather"), "{hint}");
    assert!(hint.contains("files, weather"), "{hint}");
    assert!(hint.contains("select:"), "{hint}");
    assert!(manager.active_definitions().is_empty());

    // A misspelt name given alone.
    let found = shed(&manager, json!({"description": "raed_flie"}))
        .await
        .unwrap();
    assert!(found.tools.is_empty());
    assert_eq!(found.closest, ["read_file"]);

    // Unknown `select:` names get their closest names too.
    let found = shed(
        &manager,
        json!({"description": "select:write_flie,send_email"}),
    )
    .await
    .unwrap();
    assert_eq!(names(&found), ["send_email"]);
    assert_eq!(found.unknown, ["write_flie"]);
    assert_eq!(found.closest, ["write_file"]);
    assert!(found.categories.is_empty(), "tools were found");
    let hint = found.hint.as_deref().expect("a hint");
    assert!(
        hint.contains("'write_flie'") && hint.contains("write_file"),
        "{hint}"
    );

    // A search that finds something says nothing more: the fields are left out.
    let result = manager
        .execute_one(&shed_call(json!({"description": "weather in a city"})))
        .await
        .unwrap();
    let value: Value = serde_json::from_str(&result.content.to_text()).unwrap();
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["tools"]);
}

/// The names an explanation compares with are kept between calls, and follow the registry:
/// a tool registered since the last explanation is suggested, one removed is not, and the
/// categories change with them.
#[tokio::test]
async fn explanations_follow_registrations_and_removals() {
    let manager = manager_with(vec![categorised(
        "read_file",
        "Read the contents of a file.",
        "files",
    )]);
    let unknown = json!({"description": "select:send_emial"});
    let found = shed(&manager, unknown.clone()).await.unwrap();
    assert_eq!(found.unknown, ["send_emial"]);
    assert!(found.closest.is_empty(), "{:?}", found.closest);
    assert_eq!(found.categories, ["files"]);

    manager
        .register(Arc::new(categorised(
            "send_email",
            "Send an email message.",
            "mail",
        )))
        .unwrap();
    let found = shed(&manager, unknown.clone()).await.unwrap();
    assert_eq!(found.closest, ["send_email"]);
    assert_eq!(found.categories, ["files", "mail"]);
    // Asked again with nothing changed: the same answer.
    let again = shed(&manager, unknown.clone()).await.unwrap();
    assert_eq!(again.closest, ["send_email"]);

    assert!(manager.deregister("send_email").is_some());
    let found = shed(&manager, unknown).await.unwrap();
    assert!(found.closest.is_empty(), "{:?}", found.closest);
    assert_eq!(found.categories, ["files"]);
}

/// Explanations worked out while other threads register and remove tools answer from some
/// state of the registry, and once the changes stop, from the last one.
#[test]
fn explanations_during_changes_settle_on_the_last_state() {
    let manager = Arc::new(manager_with(vec![tool("read_file", "Read a file.")]));
    let changing = {
        let manager = Arc::clone(&manager);
        std::thread::spawn(move || {
            for round in 0..300 {
                let name = format!("extra_tool_{}", round % 7);
                let _ = manager.register(Arc::new(tool(&name, "One more tool.")));
                if round % 3 != 0 {
                    manager.deregister(&name);
                }
            }
        })
    };
    let explaining = {
        let manager = Arc::clone(&manager);
        std::thread::spawn(move || {
            for _ in 0..300 {
                let found = futures::executor::block_on(shed(
                    &manager,
                    json!({"description": "select:extra_tool_9"}),
                ))
                .unwrap();
                assert_eq!(found.unknown, ["extra_tool_9"]);
                // Whatever state it saw, it suggests only names of this session's tools.
                for name in &found.closest {
                    assert!(name.starts_with("extra_tool_"), "{name}");
                }
            }
        })
    };
    changing.join().unwrap();
    explaining.join().unwrap();
    let registered: HashSet<String> = manager
        .names()
        .into_iter()
        .filter(|name| name.starts_with("extra_tool_"))
        .collect();
    let found = futures::executor::block_on(shed(
        &manager,
        json!({"description": "select:extra_tool_9"}),
    ))
    .unwrap();
    let suggested: HashSet<String> = found.closest.into_iter().collect();
    assert!(!registered.is_empty());
    // Every registered `extra_tool_N` is as close as the others to `extra_tool_9`; at most
    // three are listed, and only registered ones.
    assert!(
        suggested.is_subset(&registered),
        "{suggested:?} {registered:?}"
    );
    assert_eq!(suggested.len(), registered.len().min(3), "{suggested:?}");
}

#[tokio::test]
async fn a_manager_built_directly_has_shed_and_discovery() {
    let manager = ToolCallManager::new("direct");
    for t in catalogue() {
        manager.register(Arc::new(t)).unwrap();
    }
    let found = shed(&manager, json!({"description": "send a message by email"}))
        .await
        .unwrap();
    assert_eq!(names(&found)[0], "send_email");

    // Deregistering takes a tool out of search (and of the active set).
    assert!(manager.deregister("send_email").is_some());
    let found = shed(&manager, json!({"description": "send a message by email"}))
        .await
        .unwrap();
    assert!(!names(&found).contains(&"send_email"));
    assert!(!manager.is_active("send_email"));
    assert_eq!(manager.discovery().len(), manager.len());
}

#[tokio::test]
async fn search_is_deterministic() {
    let manager = manager_with(catalogue());
    let first = manager.search_tools("write a file in a city", 6).await;
    for _ in 0..5 {
        assert_eq!(
            manager.search_tools("write a file in a city", 6).await,
            first
        );
    }
    // search_tools does not activate.
    assert!(manager.active_definitions().is_empty());
}

// --- Embedder path ------------------------------------------------------------------------------

/// Embeds by concept: words of the same concept share a dimension, so "automobile" finds a
/// tool that only ever says "car" (which lexical search cannot).
struct ConceptEmbedder;

const CONCEPTS: &[&[&str]] = &[
    &["car", "automobile", "vehicle"],
    &["rent", "rental", "hire", "lease"],
    &["weather", "forecast", "temperature"],
    &["file", "document"],
    &["email", "mail", "message"],
];

#[async_trait]
impl Embedder for ConceptEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut v = vec![0.0; CONCEPTS.len()];
                for word in text
                    .split(|c: char| !c.is_alphanumeric())
                    .map(str::to_lowercase)
                {
                    if let Some(i) = CONCEPTS.iter().position(|c| c.contains(&word.as_str())) {
                        v[i] += 1.0;
                    }
                }
                v
            })
            .collect())
    }

    fn dimensions(&self) -> usize {
        CONCEPTS.len()
    }
}

#[tokio::test]
async fn with_an_embedder_shed_searches_by_meaning_and_fills_lexically() {
    let mut tools = catalogue();
    tools.push(tool("car_hire", "Hire a car for a few days."));
    let manager = ToolShed::new()
        .tools(tools)
        .build(SessionParts::in_memory("s").with_embedder(Arc::new(ConceptEmbedder)))
        .unwrap();
    assert!(manager.discovery().has_embedder());
    assert!(
        manager
            .search_tools("lease an automobile", 5)
            .await
            .iter()
            .any(|t| t.name == "car_hire")
    );

    let hits = manager
        .discovery()
        .search("lease an automobile city", 3)
        .await;
    assert_eq!(hits[0].name, "car_hire");
    assert_eq!(hits[0].matched_by, MatchedBy::Embedding);
    // Only car_hire has a positive similarity; the rest of the limit is lexical.
    assert_eq!(hits.len(), 3);
    assert!(hits[1..].iter().all(|h| h.matched_by == MatchedBy::Lexical));
    assert!(
        hits[1..]
            .iter()
            .any(|h| h.name == "get_weather" || h.name == "book_hotel")
    );
    assert_eq!(manager.discovery().embedded(), manager.len());

    // Without an embedder, "automobile" finds nothing.
    let lexical = manager_with(vec![tool("car_hire", "Hire a car for a few days.")]);
    assert!(
        lexical
            .search_tools("lease an automobile", 5)
            .await
            .is_empty()
    );
}

/// Embeds as real models do: every text, whatever it says, shares one direction (the first
/// dimension) besides its concepts, so that any two texts are somewhat similar.
struct SharedDirectionEmbedder;

#[async_trait]
impl Embedder for SharedDirectionEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        let by_concept = ConceptEmbedder.embed(texts).await?;
        Ok(by_concept
            .into_iter()
            .map(|concepts| std::iter::once(1.0).chain(concepts).collect())
            .collect())
    }

    fn dimensions(&self) -> usize {
        1 + CONCEPTS.len()
    }
}

#[tokio::test]
async fn a_blank_description_is_refused_not_searched() {
    let manager = ToolShed::new()
        .tools(catalogue())
        .build(SessionParts::in_memory("s").with_embedder(Arc::new(SharedDirectionEmbedder)))
        .unwrap();
    // Spaces and zero-width characters pass the schema's `minLength`; by embedding, they
    // found (and activated) the tools nearest to nothing.
    for blank in [" ", "  \n\t", "\u{200B}", "\u{FEFF} \u{2060}"] {
        let error = shed(&manager, json!({"description": blank}))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::InvalidArguments, "{blank:?}");
        assert!(
            error.to_string().contains("/description: is blank"),
            "{blank:?}: {error}"
        );
        assert!(manager.active_definitions().is_empty(), "{blank:?}");
    }
    // A description that says something still searches by embedding.
    let found = shed(&manager, json!({"description": "forecast"}))
        .await
        .unwrap();
    assert_eq!(names(&found)[0], "get_weather");
}

#[tokio::test]
async fn selecting_shed_itself_says_it_needs_no_selecting() {
    let manager = ToolShed::new()
        .tools(catalogue())
        .build(SessionParts::in_memory("s"))
        .unwrap();
    let found = manager.shed("select:shed", None).await;
    assert!(found.tools.is_empty());
    assert!(found.unknown.is_empty(), "{:?}", found.unknown);
    let hint = found.hint.unwrap();
    assert!(
        hint.starts_with("`shed` is this tool, offered all along: it needs no selecting. "),
        "{hint}"
    );
    assert!(!hint.contains("Not tools of this session"), "{hint}");

    // Beside other names, those are selected (or named unknown) as ever.
    let found = manager.shed("select:shed,get_weather,nope", None).await;
    let names: Vec<&str> = found.tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["get_weather"]);
    assert_eq!(found.unknown, ["nope"]);
    let hint = found.hint.unwrap();
    assert!(
        hint.starts_with("Not tools of this session: 'nope'. `shed` is this tool"),
        "{hint}"
    );
}

#[tokio::test]
async fn a_blank_query_finds_nothing_through_the_api_either() {
    let manager = ToolShed::new()
        .tools(catalogue())
        .build(SessionParts::in_memory("s").with_embedder(Arc::new(SharedDirectionEmbedder)))
        .unwrap();
    for blank in [" ", "  \n\t", "\u{200B}", "\u{FEFF} \u{2060}"] {
        // `shed` activates nothing, and its hint says what was wrong.
        let found = manager.shed(blank, None).await;
        assert!(found.tools.is_empty(), "{blank:?}: {:?}", found.tools);
        let hint = found.hint.unwrap();
        assert!(hint.starts_with("The description is blank."), "{hint}");
        assert!(manager.active_definitions().is_empty(), "{blank:?}");
        // The searches that activate nothing find nothing either.
        assert!(manager.search_tools(blank, 5).await.is_empty(), "{blank:?}");
        assert!(manager.discovery().search(blank, 5).await.is_empty());
        assert!(manager.discovery().search_lexical(blank, 5).is_empty());
    }
    assert_eq!(
        manager.search_tools("forecast", 5).await[0].name,
        "get_weather"
    );
}

#[tokio::test]
async fn tools_registered_later_are_embedded_and_deregistered_ones_dropped() {
    let manager = ToolCallManager::new("s");
    manager
        .register(Arc::new(tool("read_file", "Read a file.")))
        .unwrap();
    manager.enable_discovery(Arc::new(HashingEmbedder::new(128)));
    assert_eq!(
        manager.discovery().embedded(),
        0,
        "embedded lazily, by a search"
    );
    manager
        .register(Arc::new(tool("send_email", "Send an email.")))
        .unwrap();

    let hits = manager.discovery().search("send email", 1).await;
    assert_eq!(hits[0].name, "send_email");
    assert_eq!(hits[0].matched_by, MatchedBy::Embedding);
    assert_eq!(manager.discovery().embedded(), 2);

    manager.deregister("send_email");
    assert_eq!(manager.discovery().embedded(), 1);
    let hits = manager.discovery().search("send email", 5).await;
    assert!(hits.iter().all(|h| h.name != "send_email"));

    manager.disable_embedding_discovery();
    assert!(!manager.discovery().has_embedder());
    let hits = manager.discovery().search("read file", 1).await;
    assert_eq!(hits[0].matched_by, MatchedBy::Lexical);
}

/// An embedding model with a context of 512 tokens, as text-embeddings-inference serves
/// one: it refuses a text longer than about 2,000 characters.
struct ShortContextEmbedder(HashingEmbedder);

#[async_trait]
impl Embedder for ShortContextEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        if let Some(long) = texts.iter().position(|text| text.chars().count() > 2_000) {
            return Err(ServiceError::new(
                "embedder",
                format!("input {long} must have less than 512 tokens"),
            ));
        }
        self.0.embed(texts).await
    }

    fn dimensions(&self) -> usize {
        self.0.dimensions()
    }
}

#[tokio::test]
async fn a_tool_with_a_long_description_does_not_keep_the_others_from_being_embedded() {
    // The tools are embedded in batches; a text longer than the model takes failed its batch
    // on every search, and no tool of that batch was ever embedded.
    let manager = ToolCallManager::new("s");
    let long = format!(
        "Look things up in the catalogue. {}",
        "Details. ".repeat(600)
    );
    manager
        .register(Arc::new(tool("catalogue_lookup", &long)))
        .unwrap();
    manager
        .register(Arc::new(tool("get_weather", "Current weather for a city.")))
        .unwrap();
    manager.enable_discovery(Arc::new(ShortContextEmbedder(HashingEmbedder::new(128))));
    let hits = manager.discovery().search("weather for a city", 1).await;
    assert_eq!(hits[0].name, "get_weather");
    assert_eq!(hits[0].matched_by, MatchedBy::Embedding);
    // The long one too, from the start of its text.
    assert_eq!(manager.discovery().embedded(), 2);
}

/// An embedder that refuses every request holding a text with `refused` in it (a content
/// filter), counting the requests that held one.
struct RefusingEmbedder {
    inner: HashingEmbedder,
    refused: &'static str,
    refusals: Mutex<usize>,
}

#[async_trait]
impl Embedder for RefusingEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        if texts.iter().any(|text| text.contains(self.refused)) {
            *self.refusals.lock().unwrap() += 1;
            return Err(ServiceError::new(
                "embedder",
                "input refused by the content filter",
            ));
        }
        self.inner.embed(texts).await
    }

    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }
}

/// An embedder whose vector for a text with "broken" in it holds a NaN, counting requests.
struct NanEmbedder {
    inner: HashingEmbedder,
    requests: Mutex<usize>,
}

#[async_trait]
impl Embedder for NanEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        *self.requests.lock().unwrap() += 1;
        let mut vectors = self.inner.embed(texts).await?;
        for (text, vector) in texts.iter().zip(&mut vectors) {
            if text.contains("broken") {
                vector[0] = f32::NAN;
            }
        }
        Ok(vectors)
    }

    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }
}

#[tokio::test]
async fn a_vector_that_is_not_finite_leaves_its_tool_to_words_and_the_others_embedded() {
    let manager = manager_with(catalogue());
    manager
        .register(Arc::new(tool("broken_tool", "A broken gadget.")))
        .unwrap();
    let embedder = Arc::new(NanEmbedder {
        inner: HashingEmbedder::new(128),
        requests: Mutex::new(0),
    });
    manager.enable_discovery(Arc::clone(&embedder) as Arc<dyn Embedder>);
    let hits = manager.discovery().search("weather for a city", 1).await;
    assert_eq!(hits[0].name, "get_weather");
    assert_eq!(hits[0].matched_by, MatchedBy::Embedding);
    // One request for the seven tools, one for the query: the NaN failed nothing.
    assert_eq!(*embedder.requests.lock().unwrap(), 2);
    let hits = manager.discovery().search("gadget", 1).await;
    assert_eq!(hits[0].name, "broken_tool");
    assert_eq!(hits[0].matched_by, MatchedBy::Lexical);
    assert_eq!(*embedder.requests.lock().unwrap(), 3);
}

#[tokio::test]
async fn a_text_the_embedder_refuses_does_not_keep_the_others_from_being_embedded() {
    // Two batches: the refused text in the first, which failed on every search and was
    // always taken first, so that neither batch was ever embedded.
    let manager = ToolCallManager::new("s");
    manager
        .register(Arc::new(tool(
            "aaa_forbidden",
            "Mentions the forbidden word.",
        )))
        .unwrap();
    for i in 0..99 {
        let name = format!("gadget_{i:03}");
        let description = format!("Gadget number {i}.");
        manager
            .register(Arc::new(tool(&name, &description)))
            .unwrap();
    }
    let embedder = Arc::new(RefusingEmbedder {
        inner: HashingEmbedder::new(128),
        refused: "forbidden",
        refusals: Mutex::new(0),
    });
    manager.enable_discovery(Arc::clone(&embedder) as Arc<dyn Embedder>);
    for _ in 0..10 {
        manager.discovery().search("gadget number 42", 3).await;
    }
    assert_eq!(manager.discovery().embedded(), 99);
    let hits = manager.discovery().search("gadget number 42", 3).await;
    assert!(
        hits.iter().all(|h| h.matched_by == MatchedBy::Embedding),
        "{hits:?}"
    );
    // The refused text alone is tried again less and less often.
    let refusals = *embedder.refusals.lock().unwrap();
    for _ in 0..40 {
        manager.discovery().search("gadget number 7", 3).await;
    }
    let later = *embedder.refusals.lock().unwrap() - refusals;
    assert!(later <= 6, "refused {later} times in 40 searches");
    assert!(later >= 1, "still tried now and then");
    assert_eq!(manager.discovery().embedded(), 99);
}

/// An embedder that is down, or one that answers with the wrong dimension.
struct BrokenEmbedder {
    wrong_dimension: bool,
}

#[async_trait]
impl Embedder for BrokenEmbedder {
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ServiceError> {
        if self.wrong_dimension {
            Ok(texts.iter().map(|_| vec![1.0; 3]).collect())
        } else {
            Err(ServiceError::new("embedder", "connection refused"))
        }
    }

    fn dimensions(&self) -> usize {
        8
    }
}

/// Collects the `WARN` events of the thread it is the default subscriber of, as their
/// messages.
#[derive(Clone, Default)]
struct WarningLines(Arc<Mutex<Vec<String>>>);

struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for WarningLines {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        self.0.lock().unwrap().push(message.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test]
async fn a_failing_embedder_falls_back_to_lexical_search_and_is_logged() {
    let log = WarningLines::default();
    let _guard = tracing::subscriber::set_default(log.clone());
    for (wrong_dimension, says) in [(false, "connection refused"), (true, "dimension is 8")] {
        let manager = ToolShed::new()
            .tools(catalogue())
            .build(
                SessionParts::in_memory("s")
                    .with_embedder(Arc::new(BrokenEmbedder { wrong_dimension })),
            )
            .unwrap();
        let found = shed(&manager, json!({"description": "read a file from disk"}))
            .await
            .expect("a failing embedder never fails the shed call");
        assert_eq!(names(&found)[0], "read_file");
        assert!(manager.is_active("read_file"));
        let hits = manager.discovery().search("read a file from disk", 2).await;
        assert!(hits.iter().all(|h| h.matched_by == MatchedBy::Lexical));
        assert_eq!(manager.discovery().embedded(), 0);
        let logged = log.0.lock().unwrap();
        assert!(
            logged
                .iter()
                .any(|line| line.contains("embedder") && line.contains(says)),
            "{logged:?}"
        );
    }
}

// --- Concurrency -------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_shed_calls_and_registrations() {
    // One gadget is there before any task starts, so a search that runs before every
    // registration still has a gadget to find (the scheduler may run the searches first).
    let mut tools = catalogue();
    tools.push(tool("seed_tool", "Seed gadget of team none."));
    let manager = Arc::new(manager_with(tools));
    manager.enable_discovery(Arc::new(HashingEmbedder::new(64)));
    let mut tasks = Vec::new();
    for task in 0..8 {
        let manager = Arc::clone(&manager);
        tasks.push(tokio::spawn(async move {
            for i in 0..25 {
                let name = format!("task{task}_tool{i}");
                manager
                    .register(Arc::new(tool(
                        &name,
                        &format!("Gadget number {i} of team {task}."),
                    )))
                    .unwrap();
                if i % 5 == 4 {
                    assert!(
                        manager
                            .deregister(&format!("task{task}_tool{}", i - 1))
                            .is_some()
                    );
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    for task in 0..8 {
        let manager = Arc::clone(&manager);
        tasks.push(tokio::spawn(async move {
            for i in 0..25 {
                let query = if i % 2 == 0 {
                    "gadget team"
                } else {
                    "read a file"
                };
                let found = shed(&manager, json!({"description": query, "limit": 10}))
                    .await
                    .unwrap();
                assert!(!found.tools.is_empty(), "task {task}: {query}");
                for t in &found.tools {
                    assert!(manager.contains(&t.name) || t.name.contains("_tool"));
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("no task panicked");
    }
    // 6 + the seed + 8 × (25 − 5) tools, every one searchable, the index in step with the
    // registry.
    assert_eq!(manager.len(), 6 + 1 + 8 * 20);
    assert_eq!(manager.discovery().len(), manager.len());
    let all = manager.discovery().search_lexical("gadget", 1000);
    let found: HashSet<String> = all.into_iter().map(|h| h.name).collect();
    let registered: HashSet<String> = manager
        .names()
        .into_iter()
        .filter(|n| n.contains("_tool"))
        .collect();
    assert_eq!(found, registered);
    let hits = manager
        .discovery()
        .search("gadget number 24 of team 7", 1)
        .await;
    assert_eq!(hits[0].name, "task7_tool24");
    assert_eq!(manager.discovery().embedded(), manager.len());
}

// --- Ranking on a small labelled set -------------------------------------------------------

/// A manager holding the tools of the labelled set in `tests/fixtures/{set}` (the records
/// `shed_eval` reads), and the set's queries.
fn fixture_set(set: &str) -> (ToolCallManager, Vec<Value>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(set);
    let manager = ToolCallManager::new("fixture");
    for line in std::fs::read_to_string(dir.join("tools.jsonl"))
        .unwrap()
        .lines()
    {
        let record: Value = serde_json::from_str(line).unwrap();
        let category = record["category"].as_str().unwrap();
        let definition = ToolDefinition::new(
            record["name"].as_str().unwrap(),
            record["description"].as_str().unwrap(),
            Args::new(record["parameters"].clone()),
        )
        .with_category(if category.is_empty() {
            "custom"
        } else {
            category
        });
        manager
            .register(Arc::new(Fixed(Tool::SingleCommand(definition))))
            .unwrap();
    }
    let queries: Vec<Value> = std::fs::read_to_string(dir.join("queries.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (manager, queries)
}

/// The tool names a fixture query expects.
fn expected_of(query: &Value) -> Vec<&str> {
    query["expected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn fixture_queries_find_their_tools() {
    let (manager, queries) = fixture_set("tool-retrieval");
    let mut hits_at_5 = 0;
    for query in &queries {
        let found = manager
            .search_tools(query["query"].as_str().unwrap(), 5)
            .await;
        let expected = expected_of(query);
        if found.iter().any(|t| expected.contains(&t.name.as_str())) {
            hits_at_5 += 1;
        } else {
            eprintln!(
                "missed {}: {:?}",
                query["id"],
                found.iter().map(|t| &t.name).collect::<Vec<_>>()
            );
        }
    }
    // Some fixture queries share no word with their tool ("Save this paragraph"); the rest
    // must be found.
    assert!(
        hits_at_5 >= queries.len() - 3,
        "{hits_at_5} of {}",
        queries.len()
    );
}

/// Chinese (simplified and traditional) and Japanese tools and queries, written for this
/// test: near neighbours share characters (天气 "weather", 今天 "today" and 天然气 "natural
/// gas"; 文件 "file", 文件夹 "folder" and 邮件 "mail"; 数据库 "database" and 数据 "data"),
/// so a query read one ideograph at a time meets the wrong tools. The figures are floors at
/// what the analyzer measured with ideograph runs read as their letters and pairs (.927 /
/// .979 / .955; one ideograph a term measured .896 / .969 / .936: docs/PERFORMANCE.md,
/// "Retrieval quality"); one query of 96 is .0104 of R@1, so losing one fails. Each query
/// has one right tool.
#[tokio::test]
async fn chinese_and_japanese_queries_find_their_tools() {
    let (manager, queries) = fixture_set("tool-retrieval-cjk");
    assert!(manager.len() >= 40 && queries.len() >= 60);
    let (mut at_1, mut at_3, mut reciprocal_rank) = (0.0, 0.0, 0.0);
    for query in &queries {
        let text = query["query"].as_str().unwrap();
        let found = manager.search_tools(text, 10).await;
        let expected = expected_of(query);
        assert_eq!(expected.len(), 1, "{}", query["id"]);
        match found.iter().position(|t| t.name == expected[0]) {
            Some(rank) => {
                at_1 += f64::from(u8::from(rank < 1));
                at_3 += f64::from(u8::from(rank < 3));
                reciprocal_rank += 1.0 / (rank + 1) as f64;
                if rank > 0 {
                    eprintln!("{}: {text:?} found at {}", query["id"], rank + 1);
                }
            }
            None => eprintln!("{}: {text:?} not in the top 10", query["id"]),
        }
    }
    let n = queries.len() as f64;
    let (at_1, at_3, mrr) = (at_1 / n, at_3 / n, reciprocal_rank / n);
    eprintln!("R@1={at_1:.3} R@3={at_3:.3} MRR={mrr:.3}");
    assert!(
        at_1 >= 0.927 && at_3 >= 0.979 && mrr >= 0.955,
        "R@1={at_1:.3} R@3={at_3:.3} MRR={mrr:.3}"
    );
}

struct Fixed(Tool);

#[async_trait]
impl ToolImpl for Fixed {
    fn definition(&self) -> Tool {
        self.0.clone()
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Ok(ToolCallResult::empty())
    }
}

#[tokio::test]
async fn sheds_collect_from_iterators_and_huge_limits_are_safe() {
    let mut shed: ToolShed = catalogue().into_iter().collect();
    shed.extend(vec![tool("extra", "One more tool.")]);
    assert_eq!(shed.len(), 7);
    let manager = shed.build(SessionParts::in_memory("s")).unwrap();
    manager.enable_discovery(Arc::new(HashingEmbedder::default()));
    let hits = manager.discovery().search("file", usize::MAX).await;
    let unique: HashSet<&str> = hits.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(unique.len(), hits.len(), "no tool twice: {hits:?}");
    assert!(unique.contains("read_file") && unique.contains("write_file"));
    assert!(hits.len() <= manager.len());
    assert_eq!(
        manager.search_tools("file", usize::MAX).await.len(),
        hits.len()
    );
}

/// `shed` runs through every call path, not only `execute_one`: a shed-first turn works as a
/// batch, as a model's turn (offer-checked), with retries and as a planned workflow, and its
/// activations apply to the next turn. A call in the same turn to a tool `shed` is only now
/// returning is still `NotActive` (the model had not been offered it).
#[tokio::test]
async fn a_shed_first_turn_runs_through_every_call_path() {
    let weather = |id: &str| {
        ToolCallRequest::new(
            id,
            "get_weather",
            ToolArguments::try_from(json!({"input": "Paris"})).unwrap(),
        )
    };
    let find = || shed_call(json!({"description": "weather for a city", "limit": 1}));
    let found = |result: &Result<ToolCallResult, ToolError>| -> Vec<String> {
        let text = result.as_ref().expect("shed answers").content.to_text();
        let result: ShedResult = serde_json::from_str(&text).unwrap();
        result.tools.iter().map(|t| t.name.clone()).collect()
    };

    // A model's turn: `shed` and a call to a tool not yet offered.
    let manager = manager_with(catalogue());
    let outcomes = manager.execute_turn(&[find(), weather("w-1")]).await;
    assert_eq!(found(&outcomes[0].result), ["get_weather"]);
    assert_eq!(outcomes[0].attempts, 1);
    assert_eq!(
        outcomes[1].result,
        Err(ToolError::NotActive("get_weather".into()))
    );
    // The next turn may call it.
    let outcomes = manager.execute_turn(&[weather("w-2")]).await;
    assert_eq!(
        outcomes[0].result.as_ref().unwrap().content.to_text(),
        "get_weather ran"
    );

    // A plain batch, a retried call and a planned workflow run `shed` too.
    let manager = manager_with(catalogue());
    let outcomes = manager.execute_batch(&[find()]).await;
    assert_eq!(found(&outcomes[0].result), ["get_weather"]);
    assert!(manager.is_active("get_weather"));

    let manager = manager_with(catalogue());
    let outcome = manager.execute_with_retry(&find()).await;
    assert_eq!(found(&outcome.result), ["get_weather"]);

    let manager = manager_with(catalogue());
    let requests = [find(), weather("w-3").depends_on(["shed-1"])];
    let workflow = manager.build_workflow(&requests).unwrap();
    let outcomes = manager.execute_workflow(&workflow).await;
    assert_eq!(found(&outcomes[0].result), ["get_weather"]);
    assert_eq!(
        outcomes[1].result.as_ref().unwrap().content.to_text(),
        "get_weather ran"
    );

    // Invalid `shed` arguments are an error for that call, as through `execute_one`.
    let manager = manager_with(catalogue());
    let outcomes = manager
        .execute_turn(&[shed_call(json!({"limit": 2}))])
        .await;
    let error = outcomes[0].result.as_ref().unwrap_err();
    assert!(
        matches!(error, ToolError::InvalidArguments { tool, .. } if tool == "shed"),
        "{error}"
    );
}

/// The `shed` call writes its result as JSON text directly (without building a `ShedResult`
/// first, from each tool's summary rendered once): it is exactly `ShedResult`'s
/// serialization, field order included, in every shape a result takes — found tools (a
/// command group among them), `select:` with unknown names, nothing found — and the call
/// activates the same tools. A second call, from the summaries kept, writes the same text.
#[tokio::test]
async fn the_shed_call_writes_exactly_the_shed_result() {
    let group = Tool::group(
        "notes",
        "Notes about a city trip.",
        vec![
            ToolDefinition::new(
                "add",
                "Add a note about a city.",
                Args::new(scheme::object().required("text", scheme::string()).build()),
            )
            .with_category("notes"),
            ToolDefinition::new(
                "remove",
                "Remove a note.",
                Args::new(scheme::object().required("id", scheme::integer()).build()),
            ),
        ],
    );
    let build = || {
        let manager = manager_with(catalogue());
        manager.register(Arc::new(Fixed(group.clone()))).unwrap();
        manager
    };
    let mut shapes = Vec::new();
    for arguments in [
        json!({"description": "weather or a hotel in a city, or notes", "limit": 10}),
        json!({"description": "select:notes,get_weather,nope,raed_file"}),
        json!({"description": "select:"}),
        json!({"description": "xylophone zebra"}),
        json!({"description": "wether"}),
    ] {
        let (by_call, by_method) = (build(), build());
        let result = by_call.execute_one(&shed_call(arguments.clone())).await;
        let toolsmith::UserModelContent::JsonText(text) = result.unwrap().content else {
            panic!("shed answers with JSON text");
        };
        let description = arguments["description"].as_str().unwrap();
        let limit = arguments["limit"].as_u64().map(|l| l as usize);
        let expected = by_method.shed(description, limit).await;
        // The very text serializing the `ShedResult` gives: same fields in the same order.
        assert_eq!(
            text.as_str(),
            serde_json::to_string(&expected).unwrap(),
            "{arguments}"
        );
        let written = text.to_value();
        assert_eq!(written, serde_json::to_value(&expected).unwrap());
        let again = by_call.execute_one(&shed_call(arguments.clone())).await;
        assert_eq!(again.unwrap().content.to_text(), text.as_str());
        assert_eq!(
            by_call.offered_tools().tools,
            by_method.offered_tools().tools,
            "{arguments}"
        );
        let names: Vec<&str> = written["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        let keys: Vec<&str> = written
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        shapes.push(format!("{names:?} {keys:?}"));
    }
    // Every shape was met: a group found, unknown names, nothing found with the closest.
    assert!(
        shapes[0].contains("\"notes\"") && shapes[0].contains("get_weather"),
        "{shapes:?}"
    );
    assert_eq!(
        shapes[1],
        r#"["notes", "get_weather"] ["tools", "unknown", "closest", "hint"]"#
    );
    assert_eq!(shapes[2], r#"[] ["tools", "categories", "hint"]"#);
    assert!(
        shapes[3].ends_with(r#"["tools", "categories", "hint"]"#),
        "{shapes:?}"
    );
    assert!(
        shapes[4].ends_with(r#"["tools", "closest", "categories", "hint"]"#),
        "{shapes:?}"
    );
}

/// A tool's summary is rendered once per registration: a tool registered again under the
/// same name is shown as it is now, not as `shed` first showed it.
#[tokio::test]
async fn a_tool_registered_again_is_shown_anew() {
    let manager = manager_with(catalogue());
    let weather = json!({"description": "select:get_weather"});
    let before = shed(&manager, weather.clone()).await.unwrap();
    assert!(manager.deregister("get_weather").is_some());
    let forecast = FnTool::new(
        "get_weather",
        "Tomorrow's forecast for a town.",
        Args::new(scheme::object().required("town", scheme::string()).build()),
        |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("rain")) },
    );
    manager.register(Arc::new(forecast)).unwrap();
    let after = shed(&manager, weather).await.unwrap();
    assert_ne!(before.tools[0], after.tools[0]);
    assert_eq!(
        after.tools[0].description,
        "Tomorrow's forecast for a town."
    );
    assert_eq!(
        after.tools[0].arguments["required"],
        json!(["town"]),
        "{after:?}"
    );
    assert_eq!(after, manager.shed("select:get_weather", None).await);
}
