//! `#[args]` with a `#[derive(ToolArgs)]` command enum: the `#[tool_fn]` function is a
//! command group (one command per variant), run through `ToolCallManager::execute_one`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;
use toolsmith::{
    ArgsSchema, Tool, ToolAnnotations, ToolArgs, ToolArguments, ToolCallContext, ToolCommands,
    ToolError, ToolErrorKind, ToolImpl, ToolRetryConfig, UserModelContent, tool_fn,
};

use crate::support::json_calls::call;
use crate::support::probe::{Probe, call as tagged};
use crate::support::registered::manager_with;

/// The commands of the playlist: each variant a command, its fields the arguments.
#[derive(ToolArgs, Debug, PartialEq)]
enum PlaylistCommand {
    /// Add a song at the end.
    Add {
        /// The song's title.
        title: String,
        /// How many times to queue it.
        #[arg(default)]
        times: u32,
    },
    /// Remove a song by its position.
    Remove {
        /// Its position, from 0.
        position: usize,
    },
    /// Exchange two songs.
    #[arg(rename = "swap")]
    Exchange {
        /// One position.
        first: usize,
        /// The other.
        second: usize,
    },
    /// Empty the playlist.
    Clear,
}

/// A playlist's songs, and how many times the tool over them ran: each test's own, so that
/// one test's calls never count in another's.
#[derive(Default)]
struct Songs {
    list: Mutex<Vec<String>>,
    runs: AtomicU32,
}

/// The songs to play next, in order.
#[tool_fn(category = "music")]
async fn playlist(
    #[bind] songs: Arc<Songs>,
    #[args] command: PlaylistCommand,
) -> Result<String, ToolError> {
    songs.runs.fetch_add(1, Ordering::SeqCst);
    let mut songs = songs.list.lock().unwrap();
    match command {
        PlaylistCommand::Add { title, times } => {
            for _ in 0..times.max(1) {
                songs.push(title.clone());
            }
        }
        PlaylistCommand::Remove { position } if position < songs.len() => {
            songs.remove(position);
        }
        PlaylistCommand::Remove { position } => {
            return Err(ToolError::execution(
                "playlist",
                format!("there is no song at {position}"),
            ));
        }
        PlaylistCommand::Exchange { first, second } => songs.swap(first, second),
        PlaylistCommand::Clear => songs.clear(),
    }
    Ok(songs.join(", "))
}

#[test]
fn the_definition_is_the_hand_written_group() {
    // What a hand-written `ToolImpl` of the same group declared.
    let hand_written = Tool::group(
        "playlist",
        "The songs to play next, in order.",
        PlaylistCommand::command_definitions()
            .into_iter()
            .map(|command| command.with_category("music"))
            .collect(),
    );
    let tool = Playlist::new(Arc::default());
    assert_eq!(tool.definition(), hand_written);
    // The constructor gives the same, before any tool is built.
    assert_eq!(Playlist.definition(), hand_written);
    let names: Vec<_> = hand_written
        .commands()
        .iter()
        .map(|command| command.name.as_str())
        .collect();
    assert_eq!(names, ["add", "remove", "swap", "clear"]);
}

#[tokio::test]
async fn each_command_is_called_with_its_variant() {
    let songs = Arc::new(Songs::default());
    let manager = manager_with(vec![Arc::new(Playlist::new(Arc::clone(&songs)))]);
    let run = async |arguments: Value| {
        manager
            .execute_one(&call("playlist", arguments))
            .await
            .map(|result| result.content.to_text())
    };
    assert_eq!(
        run(json!({"command": "add", "title": "So What"})).await,
        Ok("So What".to_owned())
    );
    // Lenient, as `ToolArgs::parse`: a number as a string.
    assert_eq!(
        run(json!({"command": "add", "title": "Blue in Green", "times": "2"})).await,
        Ok("So What, Blue in Green, Blue in Green".to_owned())
    );
    assert_eq!(
        run(json!({"command": "swap", "first": 0, "second": 2})).await,
        Ok("Blue in Green, Blue in Green, So What".to_owned())
    );
    assert_eq!(
        run(json!({"command": "remove", "position": 1})).await,
        Ok("Blue in Green, So What".to_owned())
    );
    let err = run(json!({"command": "remove", "position": 9}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ToolError::execution("playlist", "there is no song at 9")
    );
    assert_eq!(run(json!({"command": "clear"})).await, Ok(String::new()));
    assert!(songs.list.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_unknown_command_is_refused_listing_the_valid_ones() {
    let songs = Arc::new(Songs::default());
    let tool = Playlist::new(Arc::clone(&songs));
    let manager = manager_with(vec![Arc::new(tool.clone())]);
    let listed = "valid commands are 'add', 'remove', 'swap', 'clear'";

    let err = manager
        .execute_one(&call("playlist", json!({"command": "shuffle"})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("\"shuffle\""), "{err}");
    assert!(err.to_string().contains(listed), "{err}");
    // The variant's Rust name is not the command's.
    let err = manager
        .execute_one(&call("playlist", json!({"command": "exchange"})))
        .await
        .unwrap_err();
    assert!(err.to_string().contains(listed), "{err}");
    let err = manager
        .execute_one(&call("playlist", json!({"title": "So What"})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("command"), "{err}");

    // Without the manager's validation in front: the reading refuses it the same way.
    let arguments = ToolArguments::try_from(json!({"command": "shuffle"})).unwrap();
    let err = tool.execute(arguments).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains(listed), "{err}");

    assert_eq!(songs.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn bad_arguments_of_a_command_are_refused_naming_their_path() {
    let songs = Arc::new(Songs::default());
    let tool = Playlist::new(Arc::clone(&songs));
    let manager = manager_with(vec![Arc::new(tool.clone())]);

    let err = manager
        .execute_one(&call(
            "playlist",
            json!({"command": "remove", "position": "first"}),
        ))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("/position"), "{err}");
    let err = manager
        .execute_one(&call("playlist", json!({"command": "add"})))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("\"title\" is a required property"),
        "{err}"
    );
    // Another command's argument is not this one's.
    let err = manager
        .execute_one(&call(
            "playlist",
            json!({"command": "clear", "position": 1}),
        ))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    assert!(err.to_string().contains("position"), "{err}");

    // The reading alone: the error `ToolArgs::parse` gives, naming the argument.
    let arguments =
        ToolArguments::try_from(json!({"command": "swap", "first": 0, "second": [1]})).unwrap();
    let expected = ToolArgs::new("playlist", &arguments)
        .parse::<PlaylistCommand>()
        .unwrap_err();
    let err = tool.execute(arguments).await.unwrap_err();
    assert_eq!(err.to_string(), expected.to_string());
    assert!(err.to_string().contains("second"), "{err}");

    assert_eq!(songs.runs.load(Ordering::SeqCst), 0);
}

/// The commands of a remote store.
#[derive(ToolArgs)]
enum StoreCommand {
    /// Reads a key.
    Get {
        /// The key.
        key: String,
    },
    /// Waits, then reads nothing.
    Wait {
        /// How long, in milliseconds.
        millis: u64,
    },
}

/// What the store answers.
#[derive(Serialize, JsonSchema)]
struct Entry {
    /// The key read.
    key: String,
    /// On which run it was read.
    run: u32,
}

/// How many times `store` ran.
static STORE_RUNS: AtomicU32 = AtomicU32::new(0);

/// A remote store, unreachable on its first two runs.
#[tool_fn(
    category = "storage",
    read_only,
    open_world,
    retries = 2,
    timeout = "1s"
)]
async fn store(#[args] command: StoreCommand) -> Result<Entry, ToolError> {
    match command {
        StoreCommand::Get { key } => {
            let run = STORE_RUNS.fetch_add(1, Ordering::SeqCst) + 1;
            if run < 3 {
                return Err(ToolError::network("store", "connection reset"));
            }
            Ok(Entry { key, run })
        }
        StoreCommand::Wait { millis } => {
            tokio::time::sleep(Duration::from_millis(millis)).await;
            Ok(Entry {
                key: String::new(),
                run: 0,
            })
        }
    }
}

#[test]
fn the_tools_category_result_and_annotations_are_each_commands() {
    let definition = Store.definition();
    let commands = definition.commands();
    assert_eq!(commands.len(), 2);
    for command in commands {
        assert_eq!(command.category, "storage");
        assert_eq!(command.annotations.read_only, Some(true));
        assert_eq!(command.annotations.open_world, Some(true));
        assert_eq!(command.annotations.destructive, None);
        let returns = command
            .returns
            .as_ref()
            .expect("the function's result schema");
        assert!(returns.property_names().eq(["key", "run"]));
    }
    assert_eq!(Store.retry_config(), Some(ToolRetryConfig::exponential(2)));
    assert_eq!(Store.timeout(), Some(Duration::from_secs(1)));
}

#[tokio::test(start_paused = true)]
async fn retries_and_the_time_limit_apply_to_the_commands() {
    let manager = manager_with(vec![Arc::new(Store)]);
    let outcome = manager
        .execute_with_retry(&call("store", json!({"command": "get", "key": "k"})))
        .await;
    assert_eq!(
        outcome.result.unwrap().content,
        UserModelContent::Json(json!({"key": "k", "run": 3}))
    );
    assert_eq!(outcome.attempts, 3);

    let err = manager
        .execute_one(&call("store", json!({"command": "wait", "millis": 5000})))
        .await
        .unwrap_err();
    assert_eq!(err, ToolError::timeout("store"));
}

/// The commands of a counter.
#[derive(ToolArgs)]
#[serde(rename_all = "kebab-case")]
enum CounterCommand {
    /// Adds to the count.
    AddTo {
        /// How much.
        amount: u32,
    },
    /// Names the call.
    WhichCall,
}

/// Counts.
#[tool_fn]
fn counter(#[args] command: CounterCommand, #[ctx] call: ToolCallContext) -> String {
    match command {
        CounterCommand::AddTo { amount } => (amount + 1).to_string(),
        CounterCommand::WhichCall => call.call_id().to_owned(),
    }
}

/// Counts, on the blocking pool.
#[tool_fn(blocking, destructive)]
fn count_slowly(#[args] command: CounterCommand) -> u32 {
    match command {
        CounterCommand::AddTo { amount } => amount * 2,
        CounterCommand::WhichCall => 0,
    }
}

#[tokio::test]
async fn sync_and_blocking_groups_beside_the_call_context() {
    let definition = Counter.definition();
    assert!(matches!(&definition, Tool::MultiCommands(name, _) if name == "counter"));
    assert_eq!(definition.group_description(), Some("Counts."));
    let names: Vec<_> = definition
        .commands()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["add-to", "which-call"]);
    assert_eq!(
        CountSlowly.definition().group_description(),
        Some("Counts, on the blocking pool.")
    );
    assert!(
        CountSlowly
            .definition()
            .commands()
            .iter()
            .all(|c| c.annotations.destructive == Some(true))
    );

    let manager = manager_with(vec![Arc::new(Counter), Arc::new(CountSlowly)]);
    let outcomes = manager
        .execute_batch(&[call("counter", json!({"command": "which-call"}))])
        .await;
    assert_eq!(
        outcomes[0].result.as_ref().unwrap().content.to_text(),
        "call-1"
    );
    let result = manager
        .execute_one(&call("counter", json!({"command": "add-to", "amount": 4})))
        .await
        .unwrap();
    assert_eq!(result.content.to_text(), "5");
    let err = manager
        .execute_one(&call("counter", json!({"command": "add-to", "amount": -4})))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/amount"), "{err}");
    let result = manager
        .execute_one(&call(
            "count_slowly",
            json!({"command": "add-to", "amount": 4}),
        ))
        .await
        .unwrap();
    assert_eq!(result.content, UserModelContent::Json(json!(8)));
}

#[test]
fn a_struct_stays_one_command() {
    /// A rectangle.
    #[derive(ToolArgs)]
    struct Rectangle {
        /// Its width.
        width: f64,
        /// Its height.
        height: f64,
    }
    /// Its area.
    #[tool_fn]
    fn area(#[args] rectangle: Rectangle) -> f64 {
        rectangle.width * rectangle.height
    }
    let Tool::SingleCommand(command) = Area.definition() else {
        panic!("a single command")
    };
    assert_eq!(command.arguments, Rectangle::args_schema());
    assert_eq!(command.description, "Its area.");
}

/// The commands of a shelf in a remote library: two say with `#[command(..)]` what they do
/// to the books, `put` leaves it to the tool's own hints.
#[derive(ToolArgs)]
enum ShelfCommand {
    /// Look a book up.
    #[command(read_only)]
    Find {
        /// Which call this is.
        tag: String,
        /// How long it takes, in milliseconds.
        #[arg(default)]
        ms: u64,
        /// How many of this tag's first runs fail as a lost connection does.
        #[arg(default)]
        failures: u32,
    },
    /// Put a book back.
    Put {
        /// Which call this is.
        tag: String,
        /// How long it takes, in milliseconds.
        #[arg(default)]
        ms: u64,
        /// How many of this tag's first runs fail as a lost connection does.
        #[arg(default)]
        failures: u32,
    },
    /// Take every book off the shelf.
    #[command(destructive, idempotent = false)]
    Empty {
        /// Which call this is.
        tag: String,
        /// How long it takes, in milliseconds.
        #[arg(default)]
        ms: u64,
        /// How many of this tag's first runs fail as a lost connection does.
        #[arg(default)]
        failures: u32,
    },
}

/// Runs a shelf's command: `tag`'s run, failing its first `failures` runs.
async fn shelve(probe: &Arc<Probe>, command: ShelfCommand) -> Result<String, ToolError> {
    let (ShelfCommand::Find { tag, ms, failures }
    | ShelfCommand::Put { tag, ms, failures }
    | ShelfCommand::Empty { tag, ms, failures }) = command;
    let (run, _running) = probe.start(&tag);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    if run <= failures {
        return Err(ToolError::network("shelf", "connection reset"));
    }
    Ok(tag)
}

/// A shelf of books, kept by a remote library.
#[tool_fn(open_world)]
async fn shelf(
    #[bind] probe: Arc<Probe>,
    #[args] command: ShelfCommand,
) -> Result<String, ToolError> {
    shelve(&probe, command).await
}

/// A shelf whose every command is safe to repeat, unless it says otherwise.
#[tool_fn(idempotent, open_world = false)]
async fn steady_shelf(
    #[bind] probe: Arc<Probe>,
    #[args] command: ShelfCommand,
) -> Result<String, ToolError> {
    shelve(&probe, command).await
}

#[test]
fn a_variants_hints_are_its_commands_and_the_function_gives_the_rest() {
    let hints = |read_only, destructive, idempotent, open_world| ToolAnnotations {
        read_only,
        destructive,
        idempotent,
        open_world,
    };
    // The derive's own definitions: each variant's hints alone.
    let own: Vec<_> = ShelfCommand::command_definitions()
        .into_iter()
        .map(|command| (command.name, command.annotations))
        .collect();
    assert_eq!(
        own,
        [
            ("find".to_owned(), hints(Some(true), None, None, None)),
            ("put".to_owned(), ToolAnnotations::default()),
            (
                "empty".to_owned(),
                hints(None, Some(true), Some(false), None)
            ),
        ]
    );
    // In a tool: the function's hints where the variant gives none.
    let in_tool = |definition: Tool| -> Vec<(String, ToolAnnotations)> {
        definition
            .commands()
            .iter()
            .map(|command| (command.name.clone(), command.annotations))
            .collect()
    };
    assert_eq!(
        in_tool(Shelf.definition()),
        [
            ("find".to_owned(), hints(Some(true), None, None, Some(true))),
            ("put".to_owned(), hints(None, None, None, Some(true))),
            (
                "empty".to_owned(),
                hints(None, Some(true), Some(false), Some(true))
            ),
        ]
    );
    // The variant's `idempotent = false` wins over the function's `idempotent`.
    assert_eq!(
        in_tool(SteadyShelf.definition()),
        [
            (
                "find".to_owned(),
                hints(Some(true), None, Some(true), Some(false))
            ),
            ("put".to_owned(), hints(None, None, Some(true), Some(false))),
            (
                "empty".to_owned(),
                hints(None, Some(true), Some(false), Some(false))
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_destructive_commands_calls_run_one_at_a_time_beside_read_only_ones() {
    let probe = Probe::new();
    let manager = manager_with(vec![Arc::new(Shelf::new(Arc::clone(&probe)))]);
    let requests: Vec<_> = (0..3)
        .flat_map(|i| {
            [
                tagged(
                    &format!("empty{i}"),
                    "shelf",
                    json!({"command": "empty", "ms": 10}),
                ),
                tagged(
                    &format!("find{i}"),
                    "shelf",
                    json!({"command": "find", "ms": 10}),
                ),
            ]
        })
        .collect();
    let started = Instant::now();
    let outcomes = manager.execute_batch(&requests).await;
    assert!(outcomes.iter().all(|o| o.result.is_ok()), "{outcomes:?}");
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(30),
        "three destructive calls, one after another"
    );
    let starts = probe.starts();
    let at = |tag: String| starts.iter().find(|(t, _)| *t == tag).unwrap().1;
    for i in 0..3u32 {
        assert_eq!(at(format!("empty{i}")), Duration::from_millis(10) * i);
        assert_eq!(
            at(format!("find{i}")),
            Duration::ZERO,
            "read-only calls run alongside"
        );
    }
}

/// The attempts of each of a shelf's commands, each failing its first run as a lost
/// connection does, run through `execute_with_retry` (the manager's default config only).
async fn attempts_of_each_command(tool: Arc<dyn ToolImpl>) -> [u32; 3] {
    let name = tool.definition().name().to_owned();
    let manager = manager_with(vec![tool]);
    let mut attempts = [0; 3];
    for (command, attempts) in ["find", "put", "empty"].into_iter().zip(&mut attempts) {
        let outcome = manager
            .execute_with_retry(&tagged(
                command,
                &name,
                json!({"command": command, "failures": 1}),
            ))
            .await;
        *attempts = outcome.attempts;
        match outcome.attempts {
            1 => assert_eq!(
                outcome.result.unwrap_err(),
                ToolError::network("shelf", "connection reset")
            ),
            _ => assert_eq!(outcome.result.unwrap().content.to_text(), command),
        }
    }
    attempts
}

#[tokio::test(start_paused = true)]
async fn a_command_is_retried_by_default_as_its_hints_say() {
    // `find` is read-only: retried; the others have no hint that makes them safe to repeat.
    let attempts = attempts_of_each_command(Arc::new(Shelf::new(Probe::new()))).await;
    assert_eq!(attempts, [2, 1, 1]);
    // The function's `idempotent` makes `put` safe too; `empty`'s `idempotent = false` wins.
    let attempts = attempts_of_each_command(Arc::new(SteadyShelf::new(Probe::new()))).await;
    assert_eq!(attempts, [2, 2, 1]);
}
