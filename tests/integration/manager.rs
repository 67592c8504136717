//! The registry and single-call execution of `ToolCallManager`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::async_trait;
use toolsmith::{
    Args, FnTool, RegistrationError, Tool, ToolArgs, ToolArguments, ToolCallManager,
    ToolCallRequest, ToolCallResult, ToolDefinition, ToolError, ToolErrorKind, ToolImpl, scheme,
};

fn args(value: Value) -> ToolArguments {
    ToolArguments::try_from(value).expect("an object")
}

fn call(name: &str, value: Value) -> ToolCallRequest {
    ToolCallRequest::new("call-1", name, args(value))
}

/// A tool that counts its runs and echoes its arguments.
fn counting(name: &str, schema: Value, runs: Arc<AtomicUsize>) -> Arc<dyn ToolImpl> {
    Arc::new(FnTool::new(
        name,
        "Counts its runs.",
        Args::new(schema),
        move |a: ToolArgs<'_>| {
            runs.fetch_add(1, Ordering::SeqCst);
            let echoed = a.arguments().as_value().clone();
            async move { Ok(ToolCallResult::json(echoed)) }
        },
    ))
}

/// A tool named `explode` whose every call panics with `message`.
fn exploding(message: &'static str) -> Arc<dyn ToolImpl> {
    Arc::new(FnTool::new(
        "explode",
        "Panics.",
        Args::empty(),
        move |_: ToolArgs<'_>| async move {
            if true {
                panic!("{message}");
            }
            Ok(ToolCallResult::empty())
        },
    ))
}

fn calculator_schema() -> Value {
    scheme::object()
        .required("count", scheme::integer().minimum(0))
        .required("name", scheme::string().min_len(1))
        .build()
}

/// A command group written by hand: `memory` with `add` and `remove`.
struct Memory {
    facts: std::sync::Mutex<Vec<String>>,
}

#[async_trait]
impl ToolImpl for Memory {
    fn definition(&self) -> Tool {
        Tool::MultiCommands(
            "memory".into(),
            vec![
                ToolDefinition::new(
                    "add",
                    "Remember a new fact.",
                    Args::new(
                        scheme::object()
                            .required("text", scheme::string().min_len(1).describe("The fact."))
                            .build(),
                    ),
                ),
                ToolDefinition::new(
                    "remove",
                    "Forget a fact by its id.",
                    Args::new(
                        scheme::object()
                            .required(
                                "id",
                                scheme::integer().minimum(0).describe("The fact's id."),
                            )
                            .build(),
                    ),
                ),
            ],
        )
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let a = ToolArgs::new("memory", &arguments);
        let mut facts = self.facts.lock().expect("not poisoned");
        match a.str("command")? {
            "add" => {
                facts.push(a.str("text")?.to_owned());
                Ok(ToolCallResult::text(format!(
                    "added fact {}",
                    facts.len() - 1
                )))
            }
            "remove" => {
                let id = a.usize("id")?;
                if id >= facts.len() {
                    return Ok(ToolCallResult::error(format!("no fact {id}")));
                }
                facts.remove(id);
                Ok(ToolCallResult::empty())
            }
            other => Err(ToolError::execution(
                "memory",
                format!("unknown command {other}"),
            )),
        }
    }
}

#[tokio::test]
async fn duplicate_names_keep_the_first_tool() {
    let manager = ToolCallManager::new("s");
    let first = Arc::new(AtomicUsize::new(0));
    let second = Arc::new(AtomicUsize::new(0));
    manager
        .register(counting("calc", calculator_schema(), first.clone()))
        .unwrap();
    let err = manager
        .register(counting("calc", json!({"type": "object"}), second.clone()))
        .unwrap_err();
    assert_eq!(err, RegistrationError::DuplicateTool("calc".into()));
    assert_eq!(err.to_string(), "a tool named 'calc' is already registered");

    manager
        .execute_one(&call("calc", json!({"count": 1, "name": "x"})))
        .await
        .unwrap();
    assert_eq!(
        (first.load(Ordering::SeqCst), second.load(Ordering::SeqCst)),
        (1, 0)
    );
    assert_eq!(manager.names(), ["calc"]);
}

#[test]
fn names_providers_reject_are_refused() {
    let manager = ToolCallManager::new("s");
    let runs = Arc::new(AtomicUsize::new(0));
    for bad in ["read file", "a.b", "", "ünicode", &"x".repeat(65)] {
        let err = manager
            .register(counting(bad, json!({"type": "object"}), runs.clone()))
            .unwrap_err();
        assert!(
            matches!(&err, RegistrationError::InvalidName { name, .. } if name == bad),
            "{bad}: {err}"
        );
        assert!(err.to_string().contains("tool name"), "{err}");
    }
    let err = manager
        .register(counting("shed", json!({"type": "object"}), runs.clone()))
        .unwrap_err();
    assert_eq!(err, RegistrationError::ReservedName("shed".into()));

    // Command names follow the same rule, and must be unique within the group.
    struct Group(Vec<&'static str>);
    #[async_trait]
    impl ToolImpl for Group {
        fn definition(&self) -> Tool {
            Tool::MultiCommands(
                "group".into(),
                self.0
                    .iter()
                    .map(|c| ToolDefinition::new(*c, "A command.", Args::empty()))
                    .collect(),
            )
        }
        async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
            Ok(ToolCallResult::empty())
        }
    }
    let err = manager
        .register(Arc::new(Group(vec!["ok", "not ok"])))
        .unwrap_err();
    assert!(matches!(&err, RegistrationError::InvalidName { name, .. } if name == "not ok"));
    let err = manager
        .register(Arc::new(Group(vec!["a", "a"])))
        .unwrap_err();
    assert_eq!(err.to_string(), "tool 'group' has two commands named 'a'");
    let err = manager.register(Arc::new(Group(vec![]))).unwrap_err();
    assert_eq!(err, RegistrationError::NoCommands("group".into()));
    assert!(manager.is_empty());
}

#[test]
fn schemas_that_do_not_compile_are_refused_at_register() {
    let manager = ToolCallManager::new("s");
    let runs = Arc::new(AtomicUsize::new(0));
    let err = manager
        .register(counting(
            "broken",
            json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "(["}}}),
            runs,
        ))
        .unwrap_err();
    match &err {
        RegistrationError::InvalidSchema { tool, command, .. } => {
            assert_eq!(tool, "broken");
            assert_eq!(command, &None);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("the argument schema of tool 'broken' is not a valid JSON Schema")
    );
    assert!(!manager.contains("broken"));
}

/// An argument schema whose root refuses objects: every call would be refused (arguments
/// are a JSON object), so registration refuses it, naming the tool (and the command) and the
/// type. Roots that allow an object register.
#[test]
fn argument_schemas_whose_root_is_not_an_object_are_refused_at_register() {
    let manager = ToolCallManager::new("s");
    let runs = Arc::new(AtomicUsize::new(0));
    let err = manager
        .register(counting("stringy", json!({"type": "string"}), runs.clone()))
        .unwrap_err();
    assert_eq!(
        err,
        RegistrationError::ArgumentsNotAnObject {
            tool: "stringy".into(),
            command: None,
            declared: "\"string\"".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "the argument schema of tool 'stringy' has the root `\"type\": \"string\"`, which no \
         call's arguments (a JSON object) can match; write `\"type\": \"object\"`"
    );
    let err = manager
        .register(counting(
            "either",
            json!({"type": ["string", "number"]}),
            runs.clone(),
        ))
        .unwrap_err();
    assert!(
        err.to_string().contains(r#"`"type": ["string","number"]`"#),
        "{err}"
    );
    assert!(manager.is_empty());
    for (name, schema) in [
        ("nullable", json!({"type": ["object", "null"]})),
        ("untyped", json!({"properties": {"q": {"type": "string"}}})),
    ] {
        manager
            .register(counting(name, schema, runs.clone()))
            .unwrap();
    }
    assert_eq!(manager.len(), 2);
}

/// A tool's schema is compiled on its first call. Concurrent first calls (of every shape:
/// valid, repaired, invalid) each get the verdict a compiled schema gives, and the tool runs
/// only for the valid ones.
#[test]
fn concurrent_first_calls_validate_as_later_calls_do() {
    let manager = Arc::new(ToolCallManager::new("s"));
    let runs = Arc::new(AtomicUsize::new(0));
    manager
        .register(counting("calculator", calculator_schema(), runs.clone()))
        .unwrap();
    let start = Arc::new(std::sync::Barrier::new(12));
    let threads: Vec<_> = (0..12)
        .map(|i| {
            let (manager, start) = (manager.clone(), start.clone());
            std::thread::spawn(move || {
                let arguments = match i % 3 {
                    0 => json!({"count": 1, "name": "a"}),
                    1 => json!({"count": "2", "name": "b"}),
                    _ => json!({"count": -1, "name": ""}),
                };
                start.wait();
                futures::executor::block_on(manager.execute_one(&call("calculator", arguments)))
            })
        })
        .collect();
    for (i, thread) in threads.into_iter().enumerate() {
        let outcome = thread.join().unwrap();
        match i % 3 {
            0 => assert_eq!(
                outcome.unwrap().content.to_text(),
                r#"{"count":1,"name":"a"}"#
            ),
            1 => assert_eq!(
                outcome.unwrap().content.to_text(),
                r#"{"count":2,"name":"b"}"#
            ),
            _ => assert_eq!(
                outcome.unwrap_err().to_string(),
                "Invalid arguments for tool 'calculator': /count: -1 is less than the minimum \
                 of 0; /name: \"\" is shorter than 1 character"
            ),
        }
    }
    assert_eq!(runs.load(Ordering::SeqCst), 8);
}

#[tokio::test]
async fn invalid_arguments_never_run_the_tool() {
    let manager = ToolCallManager::new("s");
    let runs = Arc::new(AtomicUsize::new(0));
    manager
        .register(counting("calculator", calculator_schema(), runs.clone()))
        .unwrap();
    let err = manager
        .execute_one(&call("calculator", json!({"count": -1, "name": ""})))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'calculator': /count: -1 is less than the minimum of 0; /name: \"\" is shorter than 1 character"
    );
    let err = manager
        .execute_one(&call("calculator", json!({"name": "x", "extra": true})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        err.to_string().contains("\"count\" is a required property"),
        "{err}"
    );
    assert!(err.to_string().contains("'extra' was unexpected"), "{err}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    // Lenient spellings are repaired before the tool sees them.
    let result = manager
        .execute_one(&call("calculator", json!({"count": "3", "name": "x"})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), r#"{"count":3,"name":"x"}"#);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// Validation asserts `format`, which the JSON Schema draft leaves an annotation: a tool that
/// declares `uuid` or `date-time` reads a value of that form, so a malformed one is refused
/// before it runs. A format the validator does not know is ignored.
#[tokio::test]
async fn string_formats_are_asserted_and_unknown_ones_ignored() {
    let manager = ToolCallManager::new("s");
    let runs = Arc::new(AtomicUsize::new(0));
    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "when": {"type": "string", "format": "date-time"},
            "tag": {"type": "string", "format": "no-such-format"}
        },
        "additionalProperties": false
    });
    manager
        .register(counting("lookup", schema, runs.clone()))
        .unwrap();
    let err = manager
        .execute_one(&call("lookup", json!({"id": "FALSE", "when": "yesterday"})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        err.to_string().contains("/id: \"FALSE\" is not a \"uuid\""),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("/when: \"yesterday\" is not a \"date-time\""),
        "{err}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    let valid = json!({
        "id": "67e55044-10b1-426f-9247-bb680e5fe0c8",
        "when": "2026-12-05T07:30:00Z",
        "tag": "anything at all"
    });
    manager.execute_one(&call("lookup", valid)).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn unknown_tools_are_reported() {
    let manager = ToolCallManager::new("s");
    let err = manager
        .execute_one(&call("nope", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::UnknownTool("nope".into()));
    assert!(
        manager
            .validate_arguments("nope", &ToolArguments::new())
            .is_err()
    );
}

#[tokio::test]
async fn command_groups_validate_the_chosen_command() {
    let manager = ToolCallManager::new("s");
    manager
        .register(Arc::new(Memory {
            facts: Default::default(),
        }))
        .unwrap();

    let err = manager
        .execute_one(&call("memory", json!({"text": "x"})))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'memory': missing required argument 'command': choose one of 'add', 'remove'"
    );
    let err = manager
        .execute_one(&call("memory", json!({"command": "forget"})))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'memory': /command: unknown command \"forget\"; valid commands are 'add', 'remove'"
    );
    let err = manager
        .execute_one(&call("memory", json!({"command": 3})))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'memory': /command: expected a command name, got 3; choose one of 'add', 'remove'"
    );
    // Too deep to print: the error names the place instead.
    let mut deep = json!("add");
    for _ in 0..200 {
        deep = json!([deep]);
    }
    let err = manager
        .execute_one(&call("memory", json!({"command": deep})))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid arguments for tool 'memory': the arguments are nested deeper than 128 levels, in '/command'; send them with less nesting"
    );
    let err = manager
        .execute_one(&call("memory", json!({"command": "remove", "text": "x"})))
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("\"id\" is a required property"), "{msg}");
    assert!(msg.contains("'text' was unexpected"), "{msg}");

    let added = manager
        .execute_one(&call(
            "memory",
            json!({"command": "add", "text": "likes tea"}),
        ))
        .await
        .unwrap();
    assert_eq!(added.content.to_text(), "added fact 0");
    let removed = manager
        .execute_one(&call("memory", json!({"command": "remove", "id": "0"})))
        .await
        .unwrap();
    assert!(!removed.is_error());
    let missing = manager
        .execute_one(&call("memory", json!({"command": "remove", "id": 4})))
        .await
        .unwrap();
    assert_eq!(missing.error_detail.as_deref(), Some("no fact 4"));

    let checked = manager
        .validate_arguments("memory", &args(json!({"command": "remove", "id": "7"})))
        .unwrap();
    assert_eq!(checked.get("id"), Some(&json!(7)));
}

#[test]
fn command_groups_render_as_one_object_function() {
    let memory = Memory {
        facts: Default::default(),
    };
    let spec = memory.definition().function_spec();
    assert_eq!(spec.name, "memory");
    let p = &spec.parameters;
    assert_eq!(p["type"], "object");
    assert!(p.get("oneOf").is_none() && p.get("anyOf").is_none());
    assert_eq!(p["required"], json!(["command"]));
    assert_eq!(p["additionalProperties"], json!(false));
    assert_eq!(p["properties"]["command"]["enum"], json!(["add", "remove"]));
    assert_eq!(p["properties"]["text"]["type"], "string");
    assert_eq!(
        p["properties"]["text"]["description"],
        "The fact. (used by: add; required by: add)"
    );
    assert_eq!(
        p["properties"]["id"]["description"],
        "The fact's id. (used by: remove; required by: remove)"
    );
    assert!(spec.description.contains("- add: Remember a new fact."));
    assert!(
        spec.description
            .contains("- remove: Forget a fact by its id.")
    );
    assert!(jsonschema::meta::is_valid(p));
}

#[test]
fn shared_properties_with_different_types_become_a_union() {
    let tool = Tool::MultiCommands(
        "g".into(),
        vec![
            ToolDefinition::new(
                "a",
                "A.",
                Args::new(scheme::object().required("x", scheme::string()).build()),
            ),
            ToolDefinition::new(
                "b",
                "B.",
                Args::new(scheme::object().optional("x", scheme::integer()).build()),
            ),
            ToolDefinition::new(
                "c",
                "C.",
                Args::new(scheme::object().optional("x", scheme::string()).build()),
            ),
        ],
    );
    let p = tool.function_spec().parameters;
    assert_eq!(
        p["properties"]["x"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}],
               "description": "(used by: a, b, c; required by: a)"})
    );
}

#[tokio::test]
async fn panics_become_execution_errors_and_the_manager_keeps_serving() {
    let manager = ToolCallManager::new("s");
    manager.register(exploding("kaboom at step 3")).unwrap();
    manager
        .register(counting("ok", json!({"type": "object"}), Arc::default()))
        .unwrap();
    for _ in 0..3 {
        let err = manager
            .execute_one(&call("explode", json!({})))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            ToolError::execution("explode", "panicked: kaboom at step 3")
        );
        assert!(manager.execute_one(&call("ok", json!({}))).await.is_ok());
    }
}

/// Sets its flag when dropped: shows that a timed-out tool's future was dropped.
struct DropFlag(Arc<AtomicBool>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn time_limits_drop_the_tool_future() {
    let manager = ToolCallManager::new("s");
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    manager
        .register(Arc::new(FnTool::new(
            "slow",
            "Sleeps a minute.",
            Args::empty(),
            move |_: ToolArgs<'_>| {
                let guard = DropFlag(flag.clone());
                async move {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    drop(guard);
                    Ok(ToolCallResult::text("woke"))
                }
            },
        )))
        .unwrap();
    assert_eq!(manager.timeout("slow"), None);
    manager
        .set_timeout("slow", Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(manager.timeout("slow"), Some(Duration::from_secs(5)));

    let started = tokio::time::Instant::now();
    let err = manager
        .execute_one(&call("slow", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::timeout("slow"));
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool's future was dropped"
    );

    // Without the limit the tool finishes.
    manager.set_timeout("slow", None).unwrap();
    let ok = manager.execute_one(&call("slow", json!({}))).await.unwrap();
    assert_eq!(ok.content.to_text(), "woke");
    assert_eq!(
        manager.set_timeout("nope", None).unwrap_err(),
        ToolError::UnknownTool("nope".into())
    );
}

#[tokio::test(start_paused = true)]
async fn a_tools_own_time_limit_applies() {
    let manager = ToolCallManager::new("s");
    let tool = FnTool::new("nap", "Naps.", Args::empty(), |_: ToolArgs<'_>| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(ToolCallResult::empty())
    })
    .with_timeout(Duration::from_secs(1));
    manager.register(Arc::new(tool)).unwrap();
    assert_eq!(manager.timeout("nap"), Some(Duration::from_secs(1)));
    let err = manager
        .execute_one(&call("nap", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Timeout);
}

#[test]
fn registry_accessors() {
    let manager = ToolCallManager::new("session-9");
    assert_eq!(manager.session_id(), "session-9");
    for name in ["b", "a", "c"] {
        manager
            .register(counting(name, json!({"type": "object"}), Arc::default()))
            .unwrap();
    }
    assert_eq!(manager.names(), ["b", "a", "c"]);
    assert!(manager.contains("a") && manager.get("a").is_some());
    assert_eq!(manager.get_def("a").unwrap().name(), "a");
    assert!(manager.deregister("a").is_some());
    assert!(manager.deregister("a").is_none());
    assert_eq!(manager.names(), ["b", "c"]);
    let declared = manager.all_declarations();
    assert_eq!(
        declared.tools.iter().map(Tool::name).collect::<Vec<_>>(),
        ["b", "c"]
    );
    assert!(declared.shed.is_none());
    // A changed time limit keeps the tool's place; a tool registered again goes last.
    manager
        .set_timeout("b", Some(Duration::from_secs(1)))
        .unwrap();
    manager
        .register(counting("a", json!({"type": "object"}), Arc::default()))
        .unwrap();
    assert_eq!(manager.names(), ["b", "c", "a"]);
    assert_eq!(manager.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registering_while_calls_run_does_not_block_them() {
    let manager = Arc::new(ToolCallManager::new("s"));
    let runs = Arc::new(AtomicUsize::new(0));
    manager
        .register(counting("calc", calculator_schema(), runs.clone()))
        .unwrap();
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let manager = manager.clone();
            tokio::spawn(async move {
                for _ in 0..500 {
                    manager
                        .execute_one(&call("calc", json!({"count": 1, "name": "n"})))
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    let registrar = {
        let manager = manager.clone();
        tokio::spawn(async move {
            for i in 0..200 {
                manager
                    .register(counting(
                        &format!("t{i}"),
                        calculator_schema(),
                        Arc::default(),
                    ))
                    .unwrap();
                tokio::task::yield_now().await;
            }
        })
    };
    tokio::time::timeout(Duration::from_secs(60), async {
        for c in callers {
            c.await.unwrap();
        }
        registrar.await.unwrap();
    })
    .await
    .expect("no deadlock");
    assert_eq!(runs.load(Ordering::SeqCst), 2000);
    assert_eq!(manager.len(), 201);
}

#[test]
fn activation_gates_offered_calls() {
    let manager = ToolCallManager::new("s");
    manager
        .register(counting("read", json!({"type": "object"}), Arc::default()))
        .unwrap();
    manager
        .register(counting("write", json!({"type": "object"}), Arc::default()))
        .unwrap();
    assert!(!manager.is_active("read"));
    let err = manager.check_offered("read").unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::NotActive);
    assert!(err.to_string().contains("shed"), "{err}");
    assert_eq!(
        manager.check_offered("nope").unwrap_err(),
        ToolError::UnknownTool("nope".into())
    );
    assert!(manager.check_offered("shed").is_ok());

    let unknown = manager.activate(&["write".into(), "ghost".into(), "read".into()]);
    assert_eq!(unknown, ["ghost"]);
    assert!(manager.check_offered("read").is_ok());
    let active: Vec<String> = manager
        .active_definitions()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(active, ["write", "read"]);

    manager.deregister("write");
    assert!(!manager.is_active("write"));
    assert_eq!(manager.active_definitions().len(), 1);
    // A session with no tools offers nothing, not even `shed`.
    let empty = ToolCallManager::new("e");
    assert!(empty.check_offered("shed").is_err());
}

/// A hand-written tool that answers synchronously: `execute` must never be reached through
/// the manager, and `execute_now` sees the validated (repaired) arguments.
struct Synchronous {
    answered: AtomicUsize,
}

#[async_trait]
impl ToolImpl for Synchronous {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            "double",
            "Doubles a number, or panics when asked to.",
            Args::new(
                scheme::object()
                    .required("n", scheme::integer().minimum(0))
                    .optional("panic", scheme::boolean())
                    .build(),
            ),
        ))
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Err(ToolError::execution("double", "execute was called"))
    }

    fn execute_now(
        &self,
        arguments: &ToolArguments,
        answer: &mut Option<Result<ToolCallResult, ToolError>>,
    ) {
        self.answered.fetch_add(1, Ordering::SeqCst);
        // The repaired arguments arrive: "21" was turned into 21 by validation.
        assert!(
            arguments.get("n").is_some_and(Value::is_i64),
            "{arguments:?}"
        );
        let n = ToolArgs::new("double", arguments).i64("n");
        *answer = Some(n.map(|n| ToolCallResult::json(json!(n * 2))));
        // A panic after the answer was written is still the call's answer.
        if arguments.get("panic") == Some(&json!(true)) {
            panic!("asked to panic");
        }
    }
}

#[tokio::test]
async fn synchronous_answers_are_validated_contained_and_used() {
    let tool = Arc::new(Synchronous {
        answered: AtomicUsize::new(0),
    });
    let manager = ToolCallManager::new("test");
    manager.register(tool.clone()).unwrap();

    let result = manager
        .execute_one(&call("double", json!({"n": "21"})))
        .await;
    assert_eq!(result.unwrap().content.to_text(), "42");

    // Invalid arguments never reach it.
    let err = manager
        .execute_one(&call("double", json!({"n": -1})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(tool.answered.load(Ordering::SeqCst), 1);

    // A panic inside it is an execution error, and the manager keeps serving.
    let err = manager
        .execute_one(&call("double", json!({"n": 1, "panic": true})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Execution);
    assert!(err.to_string().contains("asked to panic"), "{err}");
    let result = manager.execute_one(&call("double", json!({"n": 4}))).await;
    assert_eq!(result.unwrap().content.to_text(), "8");

    // Batches run it the same way.
    let outcomes = manager
        .execute_batch(&[call("double", json!({"n": 5}))])
        .await;
    assert_eq!(outcomes[0].result.as_ref().unwrap().content.to_text(), "10");
    assert_eq!(outcomes[0].attempts, 1);
    assert_eq!(tool.answered.load(Ordering::SeqCst), 4);
}

/// A tool whose `execute_now` would answer, but which says it never does: the manager must
/// not ask it.
struct NeverNow;

#[async_trait]
impl ToolImpl for NeverNow {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            "later",
            "Answers through its future only.",
            Args::new(scheme::object().required("n", scheme::integer()).build()),
        ))
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let n = ToolArgs::new("later", &arguments).i64("n")?;
        if n < 0 {
            panic!("negative");
        }
        Ok(ToolCallResult::json(json!(n + 1)))
    }

    fn execute_now(
        &self,
        _: &ToolArguments,
        answer: &mut Option<Result<ToolCallResult, ToolError>>,
    ) {
        *answer = Some(Err(ToolError::execution("later", "execute_now was called")));
    }

    fn may_answer_now(&self) -> bool {
        false
    }
}

#[tokio::test]
async fn a_tool_that_never_answers_now_is_not_asked() {
    let manager = ToolCallManager::new("test");
    manager.register(Arc::new(NeverNow)).unwrap();
    let result = manager.execute_one(&call("later", json!({"n": "1"}))).await;
    assert_eq!(result.unwrap().content.to_text(), "2");
    // Still validated first, and its panics contained.
    let err = manager
        .execute_one(&call("later", json!({"n": "x"})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    let err = manager
        .execute_one(&call("later", json!({"n": -1})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Execution);
    assert!(err.to_string().contains("negative"), "{err}");
    let outcomes = manager
        .execute_batch(&[call("later", json!({"n": 4}))])
        .await;
    assert_eq!(outcomes[0].result.as_ref().unwrap().content.to_text(), "5");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_is_seen_by_the_next_call_while_other_calls_run() {
    let manager = Arc::new(ToolCallManager::new("s"));
    manager
        .register(counting("calc", calculator_schema(), Arc::default()))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..3)
        .map(|_| {
            let (manager, stop) = (manager.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    let ok = json!({"count": 1, "name": "n"});
                    manager.execute_one(&call("calc", ok)).await.unwrap();
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for i in 0..300 {
        let name = format!("t{i}");
        manager
            .register(counting(&name, calculator_schema(), Arc::default()))
            .unwrap();
        // Registered, then called at once: the call sees it.
        let ok = json!({"count": i, "name": "n"});
        manager.execute_one(&call(&name, ok.clone())).await.unwrap();
        manager
            .set_timeout(&name, Some(Duration::from_secs(5)))
            .unwrap();
        assert_eq!(manager.timeout(&name), Some(Duration::from_secs(5)));
        // Removed, then called at once: it is gone.
        assert!(manager.deregister(&name).is_some());
        let err = manager.execute_one(&call(&name, ok)).await.unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::UnknownTool);
    }
    stop.store(true, Ordering::SeqCst);
    for caller in callers {
        caller.await.unwrap();
    }
    assert_eq!(manager.names(), ["calc"]);
}

/// A hand-written tool that answers only synchronously, with `answer`; `execute`, which the
/// manager must never reach for it, reports an error.
struct AnswersNow<F> {
    name: String,
    schema: Value,
    answer: F,
}

type Answer = Option<Result<ToolCallResult, ToolError>>;

fn answers_now<F>(name: &str, schema: Value, answer: F) -> Arc<dyn ToolImpl>
where
    F: Fn(&ToolArguments) -> Answer + Send + Sync + 'static,
{
    Arc::new(AnswersNow {
        name: name.to_owned(),
        schema,
        answer,
    })
}

#[async_trait]
impl<F> ToolImpl for AnswersNow<F>
where
    F: Fn(&ToolArguments) -> Answer + Send + Sync,
{
    fn definition(&self) -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            &self.name,
            "Answers synchronously.",
            Args::new(self.schema.clone()),
        ))
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        Err(ToolError::execution(&self.name, "execute was called"))
    }

    fn execute_now(&self, arguments: &ToolArguments, answer: &mut Answer) {
        *answer = (self.answer)(arguments);
    }
}

#[tokio::test]
async fn a_tool_may_change_the_registry_while_it_runs() {
    let manager = Arc::new(ToolCallManager::new("s"));
    // A synchronous tool that registers another tool while it runs.
    let weak = Arc::downgrade(&manager);
    let schema = scheme::object().required("name", scheme::string()).build();
    let registrar = answers_now("registrar", schema, move |arguments| {
        let name = ToolArgs::new("registrar", arguments).str("name").ok()?;
        let manager = weak.upgrade()?;
        let registered =
            manager.register(counting(name, json!({"type": "object"}), Arc::default()));
        // The tool itself is still there and answers while the registry changes under it.
        Some(
            registered
                .map(|()| ToolCallResult::text(format!("registered {name}")))
                .map_err(|err| ToolError::execution("registrar", err.to_string())),
        )
    });
    manager.register(registrar).unwrap();
    let request = call("registrar", json!({"name": "fresh"}));
    let result = tokio::time::timeout(Duration::from_secs(10), manager.execute_one(&request))
        .await
        .expect("no deadlock")
        .unwrap();
    assert_eq!(result.content.to_text(), "registered fresh");
    manager
        .execute_one(&call("fresh", json!({})))
        .await
        .expect("the tool registered by a tool is callable");
}

#[tokio::test]
async fn a_removed_tool_is_released_once_its_calls_end() {
    let manager = ToolCallManager::new("s");
    let tool = counting("gone", json!({"type": "object"}), Arc::default());
    let watch = Arc::downgrade(&tool);
    manager.register(tool).unwrap();
    manager.execute_one(&call("gone", json!({}))).await.unwrap();
    let removed = manager.deregister("gone").expect("was registered");
    drop(removed);
    // Neither the registry nor the snapshot calls read keeps it alive.
    assert!(watch.upgrade().is_none(), "the removed tool is still held");
}

#[tokio::test]
async fn a_tool_that_keeps_its_definition_is_registered_without_a_copy() {
    let tool = Arc::new(
        FnTool::new(
            "greet",
            "Greets someone.",
            Args::new(scheme::object().required("name", scheme::string()).build()),
            |args: ToolArgs<'_>| {
                let name = args.str("name").map(str::to_owned);
                async move { Ok(ToolCallResult::text(format!("Hello, {}!", name?))) }
            },
        )
        .with_category("social"),
    );
    let definition = tool.shared_definition();
    // The builder's changes are in the one definition the tool keeps.
    assert_eq!(definition.category(), "social");
    assert_eq!(*definition, tool.definition());
    assert_eq!(Arc::strong_count(&definition), 2, "the tool's and this one");

    let manager = ToolCallManager::new("s");
    manager
        .register(Arc::clone(&tool) as Arc<dyn ToolImpl>)
        .unwrap();
    assert_eq!(
        Arc::strong_count(&definition),
        3,
        "the manager holds the tool's own definition, not a copy"
    );
    assert_eq!(manager.get_def("greet").as_ref(), Some(&*definition));
    let result = manager
        .execute_one(&call("greet", json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "Hello, Ada!");
    // Still validated against it: the tool does not run on arguments the schema refuses.
    let err = manager
        .execute_one(&call("greet", json!({"name": 7})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");

    drop(manager.deregister("greet"));
    assert_eq!(
        Arc::strong_count(&definition),
        2,
        "the manager lets go of the definition with the tool"
    );
}

#[tokio::test]
async fn a_tool_that_removes_itself_finishes_its_answer_and_is_then_released() {
    let manager = Arc::new(ToolCallManager::new("s"));
    let weak = Arc::downgrade(&manager);
    let tool = answers_now("once", json!({"type": "object"}), move |_| {
        let manager = weak.upgrade()?;
        let removed = manager.deregister("once").is_some();
        drop(manager);
        // The call borrows this tool from the registry: it must still be alive here.
        Some(Ok(ToolCallResult::text(format!("removed: {removed}"))))
    });
    let watch = Arc::downgrade(&tool);
    manager.register(tool).unwrap();
    let result = manager.execute_one(&call("once", json!({}))).await.unwrap();
    assert_eq!(result.content.to_text(), "removed: true");
    let err = manager
        .execute_one(&call("once", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::UnknownTool);
    assert!(watch.upgrade().is_none(), "the removed tool is still held");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_removed_while_it_runs_is_released_when_the_call_ends() {
    let manager = Arc::new(ToolCallManager::new("s"));
    let started = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let tool: Arc<dyn ToolImpl> = Arc::new(FnTool::new(
        "slow",
        "Waits to be released.",
        Args::new(json!({"type": "object"})),
        {
            let (started, release) = (started.clone(), release.clone());
            move |_: ToolArgs<'_>| {
                let (started, release) = (started.clone(), release.clone());
                async move {
                    started.notify_one();
                    release.notified().await;
                    Ok(ToolCallResult::text("done"))
                }
            }
        },
    ));
    let watch = Arc::downgrade(&tool);
    manager.register(tool).unwrap();
    let running = tokio::spawn({
        let manager = manager.clone();
        async move { manager.execute_one(&call("slow", json!({}))).await }
    });
    started.notified().await;
    drop(manager.deregister("slow").expect("was registered"));
    assert!(
        watch.upgrade().is_some(),
        "the running call still needs the tool"
    );
    release.notify_one();
    let result = running.await.unwrap().unwrap();
    assert_eq!(result.content.to_text(), "done");
    assert!(watch.upgrade().is_none(), "the removed tool is still held");
}

/// A tool that panics at the given step: 0 on its first poll, 1 after suspending once.
fn explodes_at(name: &str, step: u8) -> FnTool {
    FnTool::new(
        name,
        "Panics.",
        Args::empty(),
        move |_: ToolArgs<'_>| async move {
            if step > 0 {
                tokio::task::yield_now().await;
            }
            panic!("kaboom at step {step}");
        },
    )
}

#[tokio::test]
async fn panics_before_and_after_a_suspension_with_and_without_a_time_limit_are_contained() {
    let manager = ToolCallManager::new("s");
    let limit = Duration::from_secs(60);
    manager.register(Arc::new(explodes_at("first", 0))).unwrap();
    manager.register(Arc::new(explodes_at("later", 1))).unwrap();
    let timed = |name, step| Arc::new(explodes_at(name, step).with_timeout(limit));
    manager.register(timed("timed_first", 0)).unwrap();
    manager.register(timed("timed_later", 1)).unwrap();
    for (name, step) in [
        ("first", 0),
        ("later", 1),
        ("timed_first", 0),
        ("timed_later", 1),
    ] {
        let err = manager
            .execute_one(&call(name, json!({})))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            ToolError::execution(name, format!("panicked: kaboom at step {step}"))
        );
    }
}

#[tokio::test]
async fn an_async_tool_that_removes_itself_before_suspending_finishes_and_is_then_released() {
    let manager = Arc::new(ToolCallManager::new("s"));
    let weak = Arc::downgrade(&manager);
    let tool: Arc<dyn ToolImpl> = Arc::new(FnTool::new(
        "once",
        "Removes itself, then waits a turn.",
        Args::empty(),
        move |_: ToolArgs<'_>| {
            let weak = weak.clone();
            async move {
                // On the first poll, which borrows this tool from the registry: the call
                // must take a reference of its own before the suspension below.
                let removed = weak.upgrade().and_then(|m| m.deregister("once")).is_some();
                tokio::task::yield_now().await;
                Ok(ToolCallResult::text(format!("removed: {removed}")))
            }
        },
    ));
    let watch = Arc::downgrade(&tool);
    manager.register(tool).unwrap();
    let result = manager.execute_one(&call("once", json!({}))).await.unwrap();
    assert_eq!(result.content.to_text(), "removed: true");
    assert!(watch.upgrade().is_none(), "the removed tool is still held");
    let err = manager
        .execute_one(&call("once", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::UnknownTool);
}

/// A hand-written tool that records which of its two ways to start a call was used (they
/// answer differently, too).
#[derive(Default)]
struct Starts {
    given: AtomicUsize,
    lent: AtomicUsize,
}

#[async_trait]
impl ToolImpl for Starts {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            "starts",
            "Echoes `n`.",
            Args::new(scheme::object().required("n", scheme::integer()).build()),
        ))
    }

    async fn execute(&self, arguments: ToolArguments) -> Result<ToolCallResult, ToolError> {
        self.given.fetch_add(1, Ordering::SeqCst);
        let n = ToolArgs::new("starts", &arguments).i64("n")?;
        Ok(ToolCallResult::json(json!(n)))
    }

    fn execute_lent<'a>(&'a self, arguments: &ToolArguments) -> toolsmith::ToolFuture<'a> {
        self.lent.fetch_add(1, Ordering::SeqCst);
        let n = ToolArgs::new("starts", arguments).i64("n");
        Box::pin(async move { Ok(ToolCallResult::json(json!(n? * 10))) })
    }
}

#[tokio::test]
async fn the_manager_starts_calls_on_lent_arguments() {
    let tool = Arc::new(Starts::default());
    let manager = ToolCallManager::new("s");
    manager.register(tool.clone()).unwrap();
    let request = call("starts", json!({"n": 4}));
    let result = manager.execute_one(&request).await.unwrap();
    assert_eq!(result.content.to_text(), "40");
    assert_eq!(tool.lent.load(Ordering::SeqCst), 1);
    assert_eq!(tool.given.load(Ordering::SeqCst), 0);
    // The request keeps its arguments: nothing was taken from it.
    assert_eq!(request.arguments.get("n"), Some(&json!(4)));
    // A batch starts its calls the same way.
    let outcomes = manager.execute_batch(std::slice::from_ref(&request)).await;
    assert_eq!(outcomes[0].result.as_ref().unwrap().content.to_text(), "40");
    assert_eq!(tool.lent.load(Ordering::SeqCst), 2);
    assert_eq!(tool.given.load(Ordering::SeqCst), 0);
}

/// Counts its drops.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Registers a tool named `flicker` made by `make` and removes it again, 2,000 times, while
/// two threads call it as fast as they can. Every answer must be `true` (the tool checks its
/// own state and answers whether it is intact), and every removed tool must be released (the
/// tools count their drops in `dropped`).
fn race_calls_against_removals(dropped: &AtomicUsize, make: impl Fn() -> Arc<dyn ToolImpl>) {
    const ROUNDS: usize = 2_000;
    let manager = Arc::new(ToolCallManager::new("s"));
    let stop = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..2)
        .map(|_| {
            let (manager, stop) = (manager.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut answered = 0usize;
                while !stop.load(Ordering::SeqCst) {
                    let request = call("flicker", json!({}));
                    match futures::executor::block_on(manager.execute_one(&request)) {
                        Ok(result) => {
                            assert_eq!(result.content.to_text(), "true", "a damaged tool");
                            answered += 1;
                        }
                        Err(err) => assert_eq!(err.kind(), ToolErrorKind::UnknownTool),
                    }
                }
                answered
            })
        })
        .collect();
    for _ in 0..ROUNDS {
        manager.register(make()).unwrap();
        std::thread::yield_now();
        drop(manager.deregister("flicker").expect("registered"));
    }
    stop.store(true, Ordering::SeqCst);
    let answered: usize = callers.into_iter().map(|c| c.join().unwrap()).sum();
    assert!(answered > 0, "the callers never reached the tool");
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        ROUNDS,
        "every removed tool is released"
    );
}

#[test]
fn synchronous_calls_racing_removals_never_see_a_freed_tool_and_every_tool_is_released() {
    let dropped = Arc::new(AtomicUsize::new(0));
    // A synchronous tool that checks its own state on every answer and counts its drops.
    race_calls_against_removals(&dropped, || {
        let payload: Vec<u64> = (0..64).map(|i| i * 7).collect();
        let counter = DropCounter(dropped.clone());
        answers_now("flicker", json!({"type": "object"}), move |_| {
            let _alive = &counter;
            // A tool freed while borrowed would read garbage here.
            let intact = payload.iter().enumerate().all(|(i, &x)| x == i as u64 * 7);
            Some(Ok(ToolCallResult::json(json!(intact))))
        })
    });
}

/// Suspends once (wakes itself at once), so that a call goes on past its first poll.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// An async tool whose future borrows it across a suspension, checks its own state on both
/// sides of it, and counts its drops.
struct Flicker {
    payload: Vec<u64>,
    _drops: DropCounter,
}

impl Flicker {
    fn intact(&self) -> bool {
        self.payload
            .iter()
            .enumerate()
            .all(|(i, &x)| x == i as u64 * 7)
    }
}

#[async_trait]
impl ToolImpl for Flicker {
    fn definition(&self) -> Tool {
        Tool::SingleCommand(ToolDefinition::new(
            "flicker",
            "Suspends once.",
            Args::new(json!({"type": "object"})),
        ))
    }

    async fn execute(&self, _: ToolArguments) -> Result<ToolCallResult, ToolError> {
        let before = self.intact();
        YieldOnce(false).await;
        // A tool freed while its call was suspended would read garbage here.
        Ok(ToolCallResult::json(json!(before && self.intact())))
    }
}

#[tokio::test]
async fn a_tool_may_call_tools_of_its_own_manager() {
    let manager = Arc::new(ToolCallManager::new("s"));
    let inner = Flicker {
        payload: (0..64).map(|i| i * 7).collect(),
        _drops: DropCounter(Arc::default()),
    };
    manager.register(Arc::new(inner)).unwrap();
    let weak = Arc::downgrade(&manager);
    // Its first poll starts a call of its own, which suspends: both calls go on past it.
    let outer = FnTool::new(
        "outer",
        "Calls `flicker`.",
        Args::empty(),
        move |_: ToolArgs<'_>| {
            let weak = weak.clone();
            async move {
                let manager = weak.upgrade().expect("the manager is alive");
                let inner = manager.execute_one(&call("flicker", json!({}))).await?;
                Ok(ToolCallResult::text(format!(
                    "inner: {}",
                    inner.content.to_text()
                )))
            }
        },
    );
    manager.register(Arc::new(outer)).unwrap();
    let result = manager
        .execute_one(&call("outer", json!({})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "inner: true");
}

#[test]
fn suspended_calls_racing_removals_never_see_a_freed_tool_and_every_tool_is_released() {
    let dropped = Arc::new(AtomicUsize::new(0));
    race_calls_against_removals(&dropped, || {
        Arc::new(Flicker {
            payload: (0..64).map(|i| i * 7).collect(),
            _drops: DropCounter(dropped.clone()),
        })
    });
}

#[test]
fn a_tool_removed_while_another_thread_is_in_a_call_is_released_when_that_call_ends() {
    let manager = Arc::new(ToolCallManager::new("s"));
    let (entered_tx, entered) = std::sync::mpsc::sync_channel(1);
    let (open, open_rx) = std::sync::mpsc::channel();
    // A synchronous tool that answers only when told to.
    let open_rx = std::sync::Mutex::new(open_rx);
    let gate = answers_now("gate", json!({"type": "object"}), move |_| {
        entered_tx.send(()).ok()?;
        open_rx.lock().ok()?.recv().ok()?;
        Some(Ok(ToolCallResult::text("opened")))
    });
    manager.register(gate).unwrap();
    let victim = counting("victim", json!({"type": "object"}), Arc::default());
    let watch = Arc::downgrade(&victim);
    manager.register(victim).unwrap();

    let inside = std::thread::spawn({
        let manager = manager.clone();
        move || futures::executor::block_on(manager.execute_one(&call("gate", json!({}))))
    });
    entered.recv().unwrap();
    // Another thread is inside a synchronous call, which may have looked up any tool.
    drop(manager.deregister("victim").expect("registered"));
    open.send(()).unwrap();
    let result = inside.join().unwrap().unwrap();
    assert_eq!(result.content.to_text(), "opened");
    // That call has ended: nothing can reach the removed tool any more.
    assert!(watch.upgrade().is_none(), "the removed tool is still held");
}

/// A tool whose future owns a reference to `held` (released when the future is dropped) and
/// then answers `n * factor`, `n` read from the arguments.
fn holding(name: &str, held: &Arc<()>, factor: i64) -> FnTool {
    let held = Arc::clone(held);
    FnTool::new(
        name,
        "Holds a reference while it runs.",
        Args::new(scheme::object().required("n", scheme::integer()).build()),
        move |a: ToolArgs<'_>| {
            let n = a.i64("n");
            let held = Arc::clone(&held);
            async move {
                let _held = held;
                Ok(ToolCallResult::json(json!(n? * factor)))
            }
        },
    )
}

/// Finished futures leave their blocks to the next call's future (see `future_block`): calls
/// of tools whose futures share a layout, and of others, panics and invalid arguments among
/// them, each drop their future once and answer their own result.
#[tokio::test]
async fn calls_whose_futures_reuse_one_block_answer_and_drop_as_their_own() {
    /// Add two integers.
    #[toolsmith::tool_fn]
    async fn add_later(a: i64, b: i64) -> i64 {
        a + b
    }

    let manager = ToolCallManager::new("s");
    let held = Arc::new(());
    manager
        .register(Arc::new(holding("double", &held, 2)))
        .unwrap();
    manager
        .register(Arc::new(holding("triple", &held, 3)))
        .unwrap();
    manager.register(Arc::new(AddLater)).unwrap();
    manager.register(Arc::new(explodes_at("boom", 0))).unwrap();
    for n in 0..50_i64 {
        let ran = |name, arguments| {
            let request = call(name, arguments);
            let manager = &manager;
            async move { manager.execute_one(&request).await }
        };
        let doubled = ran("double", json!({"n": n})).await.unwrap();
        assert_eq!(doubled.content.to_text(), (2 * n).to_string());
        let tripled = ran("triple", json!({"n": n})).await.unwrap();
        assert_eq!(tripled.content.to_text(), (3 * n).to_string());
        let sum = ran("add_later", json!({"a": n, "b": 1})).await.unwrap();
        assert_eq!(sum.content.to_text(), (n + 1).to_string());
        let err = ran("boom", json!({})).await.unwrap_err();
        assert_eq!(
            err,
            ToolError::execution("boom", "panicked: kaboom at step 0")
        );
        let err = ran("add_later", json!({"a": "x", "b": 1}))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
        assert_eq!(
            Arc::strong_count(&held),
            3,
            "a future was dropped twice or kept"
        );
    }
}

/// `execute_call` (borrowed name and arguments) answers every kind of call as `execute_one`
/// does for the same request: a synchronous and an `async` answer, invalid arguments (the
/// tool not run, the error naming the tool and the argument), an unknown tool, a panic, a
/// time limit, and `shed`.
#[tokio::test(start_paused = true)]
async fn execute_call_answers_as_execute_one_does() {
    let manager = ToolCallManager::new("s");
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    manager
        .register(answers_now("now", calculator_schema(), move |arguments| {
            counted.fetch_add(1, Ordering::SeqCst);
            Some(Ok(ToolCallResult::json(arguments.as_value().clone())))
        }))
        .unwrap();
    manager
        .register(counting("later", calculator_schema(), Arc::clone(&runs)))
        .unwrap();
    manager.register(exploding("kaboom")).unwrap();
    let nap = FnTool::new("nap", "Naps.", Args::empty(), |_: ToolArgs<'_>| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(ToolCallResult::empty())
    })
    .with_timeout(Duration::from_secs(1));
    manager.register(Arc::new(nap)).unwrap();

    let valid = json!({"count": "3", "name": "x"});
    let cases = [
        ("now", valid.clone()),
        ("later", valid.clone()),
        ("now", json!({"count": -1, "name": "x"})),
        ("later", json!({"count": 1})),
        ("missing", json!({})),
        ("explode", json!({})),
        ("nap", json!({})),
        ("shed", json!({"description": "naps"})),
    ];
    for (name, value) in cases {
        let request = call(name, value);
        let borrowed = manager.execute_call(name, &request.arguments).await;
        let owned = manager.execute_one(&request).await;
        match (&borrowed, &owned) {
            // `shed`'s answer may say what the first of the two calls activated.
            (Ok(_), Ok(_)) if name == "shed" => {}
            (Ok(borrowed), Ok(owned)) => assert_eq!(borrowed, owned, "{name}"),
            _ => assert_eq!(borrowed, owned, "{name}"),
        }
    }
    // Each valid call ran its tool twice (once a way); no invalid call ran one.
    assert_eq!(runs.load(Ordering::SeqCst), 4);

    let arguments = args(json!({"count": "3", "name": "x"}));
    let answer = manager.execute_call("now", &arguments).await.unwrap();
    assert_eq!(answer.content.to_text(), r#"{"count":3,"name":"x"}"#);
    let err = manager
        .execute_call("now", &args(json!({"count": -1, "name": "x"})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        err.to_string().contains("'now'") && err.to_string().contains("/count"),
        "{err}"
    );
    assert_eq!(
        manager
            .execute_call("missing", &arguments)
            .await
            .unwrap_err(),
        ToolError::UnknownTool("missing".into())
    );
    assert_eq!(
        manager
            .execute_call("explode", &args(json!({})))
            .await
            .unwrap_err(),
        ToolError::execution("explode", "panicked: kaboom")
    );
    assert_eq!(
        manager
            .execute_call("nap", &args(json!({})))
            .await
            .unwrap_err(),
        ToolError::timeout("nap")
    );
}

/// A panic payload whose own drop panics: what a hostile tool can hand `panic_any`.
struct PayloadThatPanicsOnDrop;

impl Drop for PayloadThatPanicsOnDrop {
    fn drop(&mut self) {
        panic!("the panic payload panicked as it was dropped");
    }
}

/// A tool that panics with a [`PayloadThatPanicsOnDrop`] at the given step: 0 on its first
/// poll, 1 after suspending once, 2 as its future is dropped when its call is stopped, 3 as
/// it makes its future.
fn hostile_payload_at(name: &str, step: u8) -> FnTool {
    /// Panics with the hostile payload when dropped.
    struct Armed;
    impl Drop for Armed {
        fn drop(&mut self) {
            std::panic::panic_any(PayloadThatPanicsOnDrop);
        }
    }
    FnTool::new(
        name,
        "Panics with a payload that panics.",
        Args::empty(),
        move |_: ToolArgs<'_>| {
            if step == 3 {
                std::panic::panic_any(PayloadThatPanicsOnDrop);
            }
            async move {
                if step == 2 {
                    let _armed = Armed;
                    std::future::pending::<()>().await;
                }
                if step > 0 {
                    tokio::task::yield_now().await;
                }
                std::panic::panic_any(PayloadThatPanicsOnDrop)
            }
        },
    )
}

#[tokio::test(start_paused = true)]
async fn a_panic_whose_payload_panics_as_it_is_dropped_is_still_the_calls_error() {
    let manager = ToolCallManager::new("s");
    let limit = Duration::from_secs(60);
    let steps = [("at_start", 3), ("first", 0), ("later", 1)];
    for (name, step) in steps {
        manager
            .register(Arc::new(hostile_payload_at(name, step)))
            .unwrap();
        let timed = hostile_payload_at(&format!("timed_{name}"), step).with_timeout(limit);
        manager.register(Arc::new(timed)).unwrap();
    }
    let names = manager.names();
    let expected =
        |name: &str| ToolError::execution(name, "panicked: a panic with a non-text payload");
    for name in &names {
        let request = call(name, json!({}));
        let ran = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
            manager.execute_one(&request),
        ))
        .await;
        let result =
            ran.unwrap_or_else(|_| panic!("{name}: the panic reached execute_one's caller"));
        assert_eq!(result.unwrap_err(), expected(name));
        let outcome = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
            manager.execute_with_retry(&request),
        ))
        .await
        .unwrap_or_else(|_| panic!("{name}: the panic reached execute_with_retry's caller"));
        assert_eq!(outcome.result.unwrap_err(), expected(name));
    }
    let mut requests: Vec<ToolCallRequest> = names
        .iter()
        .map(|name| ToolCallRequest::new(name, name, ToolArguments::new()))
        .collect();
    manager
        .register(Arc::new(hostile_payload_at("armed", 2)))
        .unwrap();
    requests.push(ToolCallRequest::new("armed", "armed", ToolArguments::new()));
    let options = toolsmith::BatchOptions::new().with_deadline(Duration::from_secs(1));
    let outcomes = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
        manager.execute_batch_with(&requests, &options),
    ))
    .await
    .expect("the panic reached the batch's caller");
    for (outcome, name) in outcomes.iter().zip(&names) {
        assert_eq!(outcome.result, Err(expected(name)), "{name}");
    }
    assert_eq!(
        outcomes[names.len()].result,
        Err(ToolError::Cancelled(
            "stopped: the batch deadline of 1s passed".into()
        ))
    );
}

#[tokio::test(start_paused = true)]
async fn a_time_limit_of_zero_or_of_duration_max_is_applied_as_given() {
    let manager = ToolCallManager::new("s");
    let nap = |name: &str, limit| {
        FnTool::new(
            name,
            "Naps 10 ms.",
            Args::empty(),
            |_: ToolArgs<'_>| async {
                tokio::time::sleep(Duration::from_millis(10)).await;
                Ok(ToolCallResult::text("woke"))
            },
        )
        .with_timeout(limit)
    };
    let at_once = FnTool::new(
        "at_once",
        "Answers.",
        Args::empty(),
        |_: ToolArgs<'_>| async { Ok(ToolCallResult::text("here")) },
    )
    .with_timeout(Duration::ZERO);
    manager
        .register(Arc::new(nap("zero", Duration::ZERO)))
        .unwrap();
    manager
        .register(Arc::new(nap("max", Duration::MAX)))
        .unwrap();
    manager.register(Arc::new(at_once)).unwrap();
    let started = tokio::time::Instant::now();
    let err = manager
        .execute_one(&call("zero", json!({})))
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::timeout("zero"));
    assert_eq!(started.elapsed(), Duration::ZERO);
    // A call that takes no time is not longer than no time.
    let here = manager.execute_one(&call("at_once", json!({}))).await;
    assert_eq!(here.unwrap().content.to_text(), "here");
    // A limit too far to reach is no limit (no overflow, no panic).
    let woke = manager.execute_one(&call("max", json!({}))).await;
    assert_eq!(woke.unwrap().content.to_text(), "woke");
}
