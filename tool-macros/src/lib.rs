//! Procedural macros of Toolsmith: `#[tool_fn]` and `#[derive(ToolArgs)]`.
//!
//! Use them through the `toolsmith` crate (or `toolsmith-core`), which re-exports them:
//! `use toolsmith::{tool_fn, ToolArgs};`.
//!
//! The crate is laid out like serde's derive: attributes and items are parsed into a typed
//! model (`attr`, `ast`), checked (`valid`, every problem reported in one build), and
//! generated (`expand`, with the argument code shared by both macros in `args`).

#![warn(missing_docs)]

mod args;
mod ast;
mod attr;
mod crate_path;
mod docs;
mod duration;
mod errors;
mod expand;
mod fixed;
mod names;
mod rename_rule;
mod returns;
mod serde_attr;
mod spelled;
mod stand_in;
mod valid;

use proc_macro::TokenStream;

use crate_path::Home;
use errors::Errors;

/// Turns a function into a tool, or an `impl` block into a command group.
///
/// (Not to be confused with the function `toolsmith::tool_fn(name, constructor)`, which makes
/// a tool constructor from a closure; one `use toolsmith::tool_fn;` brings both.)
///
/// # On a function
///
/// The function (async or sync) stays as it is, and a unit struct named after it in
/// PascalCase (`add_numbers` → `AddNumbers`, with the function's visibility) implements
/// `ToolImpl` and `Debug`. It has no other impls (`Clone`, `Copy`, `Default`: each would be
/// compiled for every tool): its value is its name, so write `AddNumbers` wherever one is
/// needed. Its name is the function's, its description the function's doc comment,
/// and each parameter is an argument described by its own doc comment.
///
/// When the module already has a type of that name (`fn constrained` beside
/// `struct Constrained`), name the generated struct with `struct_name`:
/// `#[tool_fn(struct_name = "ConstrainedTool")]`. Without it the compiler reports the clash
/// (E0428, "the name `Constrained` is defined multiple times", pointing at the function) and
/// an error of the macro's own saying "`#[tool_fn]` generates a struct `Constrained`, but this
/// module already has a type named `Constrained`", with `struct_name` as the fix.
///
/// ```
/// use toolsmith::{tool_fn, ToolImpl};
///
/// /// The caller's own type.
/// pub struct Constrained { pub limit: u32 }
///
/// /// Checks that a value stays under ten.
/// #[tool_fn(struct_name = "ConstrainedTool")]
/// fn constrained(value: u32) -> bool {
///     value < 10
/// }
///
/// assert_eq!(ConstrainedTool.definition().name(), "constrained");
/// # let _ = Constrained { limit: 1 }.limit;
/// ```
///
/// ```
/// use toolsmith::{tool_fn, ToolError, ToolImpl};
///
/// /// Adds two numbers together and returns the sum.
/// #[tool_fn(category = "math")]
/// async fn add(
///     /// The first number to add.
///     a: f64,
///     /// The second number to add.
///     b: f64,
/// ) -> Result<f64, ToolError> {
///     Ok(a + b)
/// }
///
/// let definition = Add.definition();
/// assert_eq!(definition.name(), "add");
/// assert_eq!(definition.category(), "math");
/// let schema = definition.commands()[0].arguments.schema();
/// assert_eq!(schema["properties"]["a"]["description"], "The first number to add.");
/// assert_eq!(schema["required"], serde_json::json!(["a", "b"]));
/// assert_eq!(schema["additionalProperties"], false);
/// # assert_eq!(futures::executor::block_on(add(1.0, 2.0)).unwrap(), 3.0);
/// ```
///
/// **Parameters.** Every type that is `serde::de::DeserializeOwned + schemars::JsonSchema`
/// works (primitives, `String`, `Vec<T>`, maps, `serde_json::Value`, your own types deriving
/// both, with their serde attributes honoured), and `&str`. A type without a schema fails to
/// compile with "`Point` has no JSON Schema: derive `schemars::JsonSchema` (schemars 1.x,
/// `schemars = "1"`)" (the bound is `HasJsonSchema`). A type deriving [`derive@ToolArgs`] is
/// not a parameter type: it is a tool's whole arguments, taken by a parameter marked
/// [`#[args]`](#args-the-whole-arguments-as-one-type) (below), so as a plain parameter it has
/// no schema (the error's notes say so), and deriving `Deserialize` beside `ToolArgs`
/// conflicts (E0119); to take such a type as one argument among others, derive
/// `serde::Deserialize` and `schemars::JsonSchema` on it instead of `ToolArgs`. A parameter
/// whose type reads from
/// `null` (`Option<T>`, `serde_json::Value`) may be left out and is not `required`. Arguments
/// are read leniently (`"42"` for 42, `"true"` for true); an error names the argument's path.
/// A rustdoc `# Arguments` list (`` * `a` - The first number ``) in the function's doc also
/// describes parameters, and is left out of the tool's description.
///
/// A description kept in a file (`#[doc = include_str!("search.md")]`, or any `#[doc = …]`
/// a macro writes, alone or among `///` lines) is the tool's, command's or group's
/// description as written, trimmed; the macro cannot read it, so no `# Arguments` list is
/// taken from it (a `# Arguments` heading among its `///` lines is an error). An argument's
/// description is `///` text or `#[arg(description = "...")]`.
///
/// **Result.** `String`/`&str` become text, `ToolCallResult` is kept, `()` is an empty success, an
/// `Image`, a `Vec<Image>`, an `Option<Image>` (`None` is `null`) or a `Vec<ContentPart>` is shown
/// to the model as images and text (not sent as their JSON), a `WithImages<T>` is structured JSON
/// with images beside it (`T`'s schema the `returns` schema, as below), any other `T: Serialize`
/// becomes structured JSON (and, when `T: JsonSchema`, the definition's `returns` schema). A
/// `Result<T, E>` unwraps `Ok` that way; `Err` becomes a `ToolError` (kept when `E` is `ToolError`,
/// converted when `E: Into<ToolError>`, otherwise `ToolError::Execution` with `E`'s `Display` text,
/// in its alternate form `{:#}`, which shows an `anyhow::Error`'s causes).
///
/// # Attributes of `#[tool_fn(...)]`
///
/// | key | meaning |
/// |---|---|
/// | `name = "..."` | the tool's name (default: the function's); must match `^[a-zA-Z0-9_-]{1,64}$` and not be `shed` |
/// | `description = "..."` | the description (default: the doc comment); a tool must have one (on an `impl` block: the group's description, optional) |
/// | `category = "..."` | the category (default `"custom"`) |
/// | `struct_name = "..."` | the generated struct's name (default: the function's name in PascalCase); on a function only |
/// | `timeout = "10s"` | the tool's time limit (`"500ms"`, `"10s"`, `"2m"`, `"1h"`); a sync function takes one with `blocking` only (inline, nothing could stop it) |
/// | `retries = N` | the tool's own retry config (`ToolImpl::retry_config`): `ToolRetryConfig::exponential(N)`, i.e. up to N retries of timeouts and network errors, 100 ms then doubling; `retries = 0` is `ToolRetryConfig::never()` |
/// | `blocking` | run a sync function on tokio's blocking pool (a sync function otherwise runs inline) |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | set that hint in `ToolDefinition.annotations` (`read_only = false` states the opposite; left out, a hint is unknown) |
/// | `crate = "path"` (or `crate_path = "path"`) | where the Toolsmith API is (default: the crate the macro was used from, `::toolsmith` or `::toolsmith_core`; set it when your `Cargo.toml` renames the dependency) |
///
/// All keys go in one attribute: `#[tool_fn(name = "search_docs", description = "...")]`.
/// A second `#[tool_fn(...)]` on the same item is an error at it ("`#[tool_fn]` given
/// twice").
///
/// ```
/// use toolsmith::{tool_fn, ToolImpl};
///
/// /// Counts the words of a text.
/// #[tool_fn(name = "word_count", category = "text", timeout = "500ms", blocking, read_only, idempotent)]
/// fn count_words(text: &str) -> usize {
///     text.split_whitespace().count()
/// }
///
/// let tool = CountWords;
/// assert_eq!(tool.definition().name(), "word_count");
/// assert_eq!(tool.timeout(), Some(std::time::Duration::from_millis(500)));
/// let tool_definition = tool.definition();
/// let definition = &tool_definition.commands()[0];
/// assert_eq!(definition.annotations.read_only, Some(true));
/// assert_eq!(definition.returns.as_ref().unwrap().schema()["type"], "integer");
/// ```
///
/// `retries = N` gives the tool its own retry config, used when the manager sets none for it:
///
/// ```
/// use toolsmith::{tool_fn, ToolError, ToolImpl, ToolRetryConfig};
///
/// /// Fetches a page.
/// #[tool_fn(retries = 2)]
/// async fn fetch(url: String) -> Result<String, ToolError> {
///     Err(ToolError::network("fetch", format!("{url}: connection reset")))
/// }
///
/// assert_eq!(Fetch.retry_config(), Some(ToolRetryConfig::exponential(2)));
/// ```
///
/// `crate = "..."` names where the API is when the crate is re-exported under another path:
///
/// ```
/// mod api {
///     pub use toolsmith as tools;
/// }
///
/// /// Echoes its text.
/// #[toolsmith::tool_fn(crate = "crate::api::tools")]
/// fn echo(text: String) -> String {
///     text
/// }
///
/// fn main() {
///     use toolsmith::ToolImpl;
///     assert_eq!(Echo.definition().name(), "echo");
/// }
/// ```
///
/// # Attributes of a parameter
///
/// | attribute | meaning |
/// |---|---|
/// | `/// text` | the argument's description |
/// | `#[arg(rename = "...")]` | the argument's name (default: the parameter's) |
/// | `#[arg(description = "...")]` | the description, instead of the doc comment |
/// | `#[arg(default)]`, `#[arg(default = "path")]` | not required; `Default::default()` or `path()` when left out (a `null` sent counts as left out, as strict models send it: an `Option` whose default is `Some` cannot be set to `None`) |
/// | `#[ctx]` | not an argument: the value is taken from the session (below) |
/// | `#[bind]` | not an argument: the value is given to the generated `new(..)` (below) |
/// | `#[args]` | the whole arguments, read into the parameter's `ToolArgs` type (below) |
///
/// ```
/// use toolsmith::{tool_fn, ToolImpl};
///
/// fn ten() -> u32 { 10 }
///
/// /// Searches the notes.
/// #[tool_fn]
/// fn search(
///     #[arg(rename = "q", description = "What to look for.")] query: String,
///     #[arg(default = "ten")] limit: u32,
///     /// Only notes with this tag.
///     tag: Option<String>,
/// ) -> String {
///     format!("{query} {limit} {tag:?}")
/// }
///
/// let schema = Search.definition().commands()[0].arguments.schema().clone();
/// assert_eq!(schema["required"], serde_json::json!(["q"]));
/// assert_eq!(schema["properties"]["q"]["description"], "What to look for.");
/// ```
///
/// # `#[ctx]`: values from the session
///
/// A parameter marked `#[ctx]` is left out of the schema; its type implements
/// `FromSessionParts` (`SessionParts`, `Arc<dyn ContextSearch>`, `Arc<dyn MemoryAccess>`,
/// `Option<Arc<dyn Embedder>>`, `State<T>`, or your own) and must be `Clone`. The generated
/// struct is then a `ToolConstructor` (`ToolShed::tool(Remember)`): when the session is built
/// it takes each value from the session's parts and builds the tool. When a value is missing
/// the tool is still registered, and each call fails saying what was missing.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{tool_fn, MemoryAccess, ToolConstructor, ToolError};
///
/// /// Remembers a fact about the user.
/// #[tool_fn(category = "memory")]
/// async fn remember(#[ctx] memory: Arc<dyn MemoryAccess>, text: String) -> Result<String, ToolError> {
///     let added = memory.add(text).await.map_err(|e| ToolError::execution("remember", e))?;
///     Ok(format!("remembered #{}", added.value.id))
/// }
///
/// let constructor: Box<dyn ToolConstructor> = Remember.into();
/// assert_eq!(constructor.name(), "remember");
/// assert!(constructor.needs_session());
/// ```
///
/// A `#[ctx]` parameter of type `ToolCallContext` is not a session value but the running
/// call's own context (its id, its cancellation token, `progress(..)`), given to each call
/// as it starts. It leaves the generated struct as it would be without it: here a unit value
/// with no `new` and no session to build from, registered as `Arc::new(Count)`. Whoever runs
/// the call sets the context (a batch, so every agent turn; an MCP server); a bare
/// `execute_one` sets none, and the tool then gets one with an empty id that no one cancels
/// or hears progress from. A command of a group (below) reads the same context with
/// `ToolCallContext::current()`.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{tool_fn, ToolArguments, ToolCallContext, ToolCallManager, ToolCallRequest};
///
/// /// Counts to `n`, reporting its progress.
/// #[tool_fn]
/// async fn count(#[ctx] call: ToolCallContext, n: u32) -> String {
///     for done in 0..n {
///         call.progress(f64::from(done), Some(f64::from(n)), "counting");
///     }
///     format!("counted to {n} in call {}", call.call_id())
/// }
///
/// let manager = ToolCallManager::new("session");
/// manager.register(Arc::new(Count)).unwrap();
/// let arguments = ToolArguments::try_from(serde_json::json!({"n": 3})).unwrap();
/// let request = ToolCallRequest::new("call-7", "count", arguments);
/// let outcomes = futures::executor::block_on(manager.execute_batch(&[request.clone()]));
/// let result = outcomes[0].result.as_ref().unwrap();
/// assert_eq!(result.content.to_text(), "counted to 3 in call call-7");
///
/// let bare = futures::executor::block_on(manager.execute_one(&request)).unwrap();
/// assert_eq!(bare.content.to_text(), "counted to 3 in call ");
/// ```
///
/// # `#[bind]`: values the tool is built with
///
/// A single-command tool that carries state (a file system handle, limits, a shell runner)
/// marks it `#[bind]`: left out of the schema like `#[ctx]`, but given by you rather than the
/// session. The generated struct then has `new(..)`, taking the `#[bind]` and `#[ctx]` values
/// in the order of the parameters and returning a ready-made `impl ToolImpl + Clone`, and it
/// is not a session constructor. A tool with only `#[ctx]` parameters has the same `new` too,
/// to build it from values without a session. A `#[bind]` type must be `Clone + Send + Sync +
/// 'static`; it is cloned into each call.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::{tool_fn, ToolArguments, ToolImpl};
///
/// struct Greeting(String);
///
/// /// Greets someone.
/// #[tool_fn]
/// async fn greet(#[bind] greeting: Arc<Greeting>, name: String) -> String {
///     format!("{}, {name}!", greeting.0)
/// }
///
/// let tool = Greet::new(Arc::new(Greeting("Hello".into())));
/// let arguments = ToolArguments::from_iter([("name", serde_json::json!("Ada"))]);
/// let result = futures::executor::block_on(tool.execute(arguments)).unwrap();
/// assert_eq!(result.content.to_text(), "Hello, Ada!");
/// assert_eq!(tool.definition().commands()[0].arguments.schema()["required"], serde_json::json!(["name"]));
/// ```
///
/// # `#[args]`: the whole arguments as one type
///
/// A parameter marked `#[args]` takes the call's whole arguments, read into its type, which
/// derives [`derive@ToolArgs`] on a struct (any type implementing `ArgsSchema` and
/// `FromToolArgs` does) or on an enum of commands (below). The type says which tool the
/// function is (its `ToolShape`). The tool's schema is the struct's (`T::args_schema()`), so a call is
/// validated against it before the function runs, and the arguments are read as
/// `ToolArgs::parse::<T>()` reads them: leniently, the type's `#[serde]` and `#[arg]`
/// attributes (`rename_all`, defaults, `Option` fields) honoured, an error naming the
/// argument's path. The function's result is converted as any tool's, `timeout`, `retries`
/// and `blocking` apply, and a command of a group (below) may take one too.
///
/// ```
/// use toolsmith::{ArgsSchema, ToolArgs, ToolArguments, ToolCallContext, ToolImpl, tool_fn};
///
/// #[derive(ToolArgs)]
/// #[serde(rename_all = "camelCase")]
/// struct SearchArgs {
///     /// What to look for.
///     search_text: String,
///     /// At most this many hits.
///     #[serde(default)]
///     max_hits: u32,
/// }
///
/// /// Searches the notes.
/// #[tool_fn(read_only)]
/// async fn search(#[args] args: SearchArgs, #[ctx] call: ToolCallContext) -> String {
///     format!("{} {} ({})", args.search_text, args.max_hits, call.call_id())
/// }
///
/// assert_eq!(Search.definition().commands()[0].arguments, SearchArgs::args_schema());
/// let arguments = ToolArguments::try_from(serde_json::json!({"searchText": "tides", "maxHits": "5"})).unwrap();
/// let result = futures::executor::block_on(Search.execute(arguments)).unwrap();
/// assert_eq!(result.content.to_text(), "tides 5 ()");
/// ```
///
/// A function has one `#[args]` parameter at most, and then no other argument: beside it go
/// only `#[ctx]` and `#[bind]` parameters and the call's `ToolCallContext`. A second
/// `#[args]`, an argument parameter beside it, `#[args]` together with `#[ctx]`, `#[bind]` or
/// `#[arg]` (the type's fields are named and described in the type), and a borrowed type are
/// compile errors pointing at the parameter. The arguments are described by the doc comments
/// of the type's fields: a doc comment on the `#[args]` parameter itself is dropped, as on a
/// `#[ctx]` one, and a `# Arguments` list in the function's doc may name the parameter (its
/// text, as every `# Arguments` list, is left out of the description) but naming one of the
/// type's fields is an error saying to move the text to the field.
///
/// A command enum deriving `ToolArgs` makes the function a command group
/// (`Tool::MultiCommands`): one command per variant, as `T::command_definitions()` gives
/// them (the variant's name in snake_case unless renamed, its doc comment the command's
/// description, its fields the command's arguments). The function's doc comment is the
/// group's description; its `category` and result schema are each command's, and so are its
/// annotations (`read_only`, `destructive`, ...) where the variant gives none of its own with
/// `#[command(read_only)]` etc. (a variant's `destructive = false` wins over the function's
/// `destructive`). A hint steers how each call runs: a destructive command's calls in a batch
/// run one at a time, a read-only or idempotent one is retried by the manager's default
/// config. A call is
/// validated against the schema of the command its `command` argument names, then read into
/// that variant (`ToolArgs::parse::<T>()`: an unknown command is an error listing the valid
/// ones), and the function `match`es on it. `timeout`, `retries` and `blocking` apply to the
/// whole tool.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use toolsmith::{Tool, ToolArgs, ToolArguments, ToolError, ToolImpl, tool_fn};
///
/// /// The commands of the playlist.
/// #[derive(ToolArgs)]
/// enum PlaylistCommand {
///     /// Add a song at the end.
///     Add {
///         /// The song's title.
///         title: String,
///     },
///     /// Empty the playlist.
///     #[command(destructive)]
///     Clear,
/// }
///
/// /// The songs to play next, in order.
/// #[tool_fn(category = "music", idempotent)]
/// fn playlist(
///     #[bind] songs: Arc<Mutex<Vec<String>>>,
///     #[args] command: PlaylistCommand,
/// ) -> Result<String, ToolError> {
///     let mut songs = songs.lock().unwrap();
///     Ok(match command {
///         PlaylistCommand::Add { title } => {
///             songs.push(title);
///             format!("{} songs queued", songs.len())
///         }
///         PlaylistCommand::Clear => {
///             songs.clear();
///             "the playlist is empty".to_owned()
///         }
///     })
/// }
///
/// let tool = Playlist::new(Arc::default());
/// let definition = tool.definition();
/// assert!(matches!(&definition, Tool::MultiCommands(name, _) if name == "playlist"));
/// assert_eq!(definition.group_description(), Some("The songs to play next, in order."));
/// for command in definition.commands() {
///     assert_eq!((command.category.as_str(), command.annotations.idempotent), ("music", Some(true)));
/// }
/// let destructive: Vec<_> = definition.commands().iter().map(|c| c.annotations.destructive).collect();
/// assert_eq!(destructive, [None, Some(true)]);
/// let add = ToolArguments::try_from(serde_json::json!({"command": "add", "title": "So What"})).unwrap();
/// let result = futures::executor::block_on(tool.execute(add)).unwrap();
/// assert_eq!(result.content.to_text(), "1 songs queued");
/// ```
///
/// A type without the derive fails to compile with "`Query` is not a tool's whole arguments:
/// derive `ToolArgs` on it" (the bound is `ToolShape`). A command of a group (below) takes a
/// struct only: a command enum there fails with "`T` has no schema of a tool's whole
/// arguments" (`ArgsSchema`), a group having no commands within commands. What the macro
/// cannot see is left to registration: an `ArgsSchema` written by hand whose root is not an
/// object schema is refused there (`RegistrationError::ArgumentsNotAnObject`), as is a group
/// command's type with a field named `command` (the argument that picks the command).
///
/// # On an `impl` block: a command group
///
/// Each method with a `&self` receiver is a command (`Tool::MultiCommands`); the call picks
/// one with the `command` argument, and the state lives in `self`. The tool's name is
/// `name = "..."` or the type's name in snake_case. The block's own doc comment (or
/// `description = "..."`) is the group's description, what the model reads first, before the
/// list of commands (`Tool::group`, `Tool::group_description`); each command is described by
/// its method's doc comment. A group without either is described by its commands alone.
/// A method takes no `#[ctx]` or `#[bind]` parameter (a compile error says so): what it
/// needs is in `self`, and its call's context is `ToolCallContext::current()`. It may take
/// its command's whole arguments as one `#[args]` parameter (above). A `timeout`
/// on the block limits its `async` commands; a sync command answers inline on the caller's
/// thread, where no limit can stop it (the group has no `blocking`), so slow work belongs in
/// an `async` command.
///
/// | method attribute | meaning |
/// |---|---|
/// | `#[command(name = "...")]` | the command's name (default: the method's) |
/// | `#[command(description = "...")]` | the description, instead of the doc comment |
/// | `#[command(skip)]` | not a command |
/// | `#[command(read_only)]` (… `destructive`, `idempotent`, `open_world`) | a hint for this command |
///
/// ```
/// use std::sync::Mutex;
/// use toolsmith::{tool_fn, ToolError, ToolImpl};
///
/// #[derive(Default)]
/// struct Memory { facts: Mutex<Vec<String>> }
///
/// /// Long-term facts about the user.
/// #[tool_fn(name = "memory", category = "memory")]
/// impl Memory {
///     /// Remember a new fact.
///     async fn add(&self, /** The fact. */ text: String) -> Result<String, ToolError> {
///         let mut facts = self.facts.lock().unwrap();
///         facts.push(text);
///         Ok(format!("fact #{}", facts.len() - 1))
///     }
///
///     /// List every fact.
///     #[command(read_only)]
///     fn list(&self) -> Vec<String> {
///         self.facts.lock().unwrap().clone()
///     }
///
///     #[command(skip)]
///     fn count(&self) -> usize {
///         self.facts.lock().unwrap().len()
///     }
/// }
///
/// let tool = Memory::default().definition();
/// assert_eq!(tool.name(), "memory");
/// let names: Vec<_> = tool.commands().iter().map(|c| c.name.as_str()).collect();
/// assert_eq!(names, ["add", "list"]);
/// assert_eq!(tool.function_spec().description, "Long-term facts about the user.\n\n\
///     Commands (choose one with the `command` argument):\n\
///     - add: Remember a new fact.\n\
///     - list: List every fact.");
/// ```
///
/// Every problem (a missing description, an invalid or reserved name, an unknown key, a
/// pattern or generic parameter, a type that cannot be an argument or a result, duplicate
/// argument or command names) is a compile error pointing at the offending token. On an
/// error, the macro still defines the struct (or, on an `impl` block, the type's `ToolImpl`)
/// with the impls the success path gives it, as stand-ins that never run, so that the error
/// it reports is the only one, not one more at each use of the tool.
#[proc_macro_attribute]
pub fn tool_fn(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_tool_fn(Home::Facade, args, input)
}

/// [`macro@tool_fn`] as `toolsmith-core` re-exports it (as `tool_fn`): the generated code
/// names `::toolsmith_core` rather than `::toolsmith`, for crates that depend on the core
/// alone. The attribute is the same in every other way; its guide is `toolsmith::tool_fn`'s.
#[proc_macro_attribute]
pub fn core_tool_fn(args: TokenStream, input: TokenStream) -> TokenStream {
    expand_tool_fn(Home::Core, args, input)
}

fn expand_tool_fn(home: Home, args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let attr = attr::parse_tool_attr(args.into(), &mut errors);
    // A function is read without its body (never looked at), which is emitted as it came.
    let (without_body, body) = ast::FnBody::split(input.clone().into());
    let item = match (body, syn::parse2::<syn::Item>(without_body)) {
        (Some(body), Ok(syn::Item::Fn(item))) => Ok((syn::Item::Fn(item), Some(body))),
        _ => syn::parse::<syn::Item>(input.clone()).map(|item| (item, None)),
    };
    let (item, body) = match item {
        Ok(read) => read,
        Err(err) => return err.to_compile_error().into(),
    };
    let expanded = match (item, body) {
        (syn::Item::Fn(item), Some(body)) => {
            let tool = ast::ToolFn::parse(attr, item, body, &mut errors);
            valid::tool_fn(&tool, &mut errors);
            match errors.finish() {
                Ok(()) => expand::tool_fn(&tool, home),
                Err(err) => {
                    let mut out = with_item(err, &tool.emitted());
                    out.extend(stand_in::tool_fn(&tool, home));
                    out
                }
            }
        }
        (syn::Item::Impl(item), _) => {
            let group = ast::ToolGroup::parse(attr, item, &mut errors);
            valid::tool_group(&group, &mut errors);
            match errors.finish() {
                Ok(()) => expand::tool_group(&group, home),
                Err(err) => {
                    let mut out = with_item(err, &group.item);
                    out.extend(stand_in::tool_group(&group, home));
                    out
                }
            }
        }
        (other, _) => {
            errors.spanned(
                &other,
                "`#[tool_fn]` goes on a function (a tool) or an inherent `impl` block (a command group)",
            );
            let mut out = errors.into_compile_errors();
            out.extend(proc_macro2::TokenStream::from(input));
            out
        }
    };
    expanded.into()
}

/// The errors, followed by the item itself (so that the rest of the crate still resolves it
/// and does not report errors of its own about a missing function); the caller adds the
/// stand-ins of what the item would have generated (`stand_in`).
fn with_item(err: syn::Error, item: &impl quote::ToTokens) -> proc_macro2::TokenStream {
    let mut out = err.to_compile_error();
    item.to_tokens(&mut out);
    out
}

/// Reads a struct's fields or an enum's commands as tool arguments.
///
/// # On a struct with named fields
///
/// Implements `FromToolArgs` (so `ToolArgs::parse::<T>()` reads the struct, leniently, with
/// errors naming the field) and `ArgsSchema` (`T::args_schema()`, the provider-safe object
/// schema, field doc comments as descriptions). `#[tool_fn]` generates exactly this code for
/// its parameters.
///
/// ```
/// use toolsmith::{ArgsSchema, ToolArgs, ToolArguments};
/// use serde_json::json;
///
/// #[derive(ToolArgs, Debug, PartialEq)]
/// struct Search {
///     /// What to look for.
///     query: String,
///     /// How many hits, at most.
///     #[arg(default)]
///     limit: u32,
///     #[arg(rename = "tag", description = "Only hits with this tag.")]
///     only_tag: Option<String>,
/// }
///
/// let schema = Search::args_schema();
/// assert_eq!(schema.schema()["required"], json!(["query"]));
/// assert_eq!(schema.schema()["properties"]["tag"]["description"], "Only hits with this tag.");
///
/// let arguments = ToolArguments::try_from(json!({"query": "rust", "limit": "5"})).unwrap();
/// let search: Search = ToolArgs::new("search", &arguments).parse().unwrap();
/// assert_eq!(search, Search { query: "rust".into(), limit: 5, only_tag: None });
/// ```
///
/// On an error, the derive still implements `FromToolArgs` and `ArgsSchema` (or
/// `ToolCommands`) for the type, as stand-ins that never run, so that the error it reports is
/// the only one, not one more at each use of the type.
///
/// A derived type must not also derive `serde::Deserialize`: every `Deserialize` type is
/// already read by a blanket `FromToolArgs` impl, and the two would conflict. It may derive
/// `Serialize`, and its `#[serde(...)]` attributes are honoured (below).
///
/// # On an enum: commands
///
/// Each variant is a command (its name in snake_case unless renamed, its doc comment the
/// command's description, its `#[command(..)]` hints the command's annotations), its named
/// fields the command's arguments. Implements `FromToolArgs` (the `command` argument picks
/// the variant) and `ToolCommands` (`T::command_definitions()`, the definitions of a
/// hand-written `Tool::MultiCommands`, or of `Tool::group(name, description, ..)` for a group
/// with a description of its own).
///
/// ```
/// use toolsmith::{ToolArgs, ToolArguments, ToolCommands};
/// use serde_json::json;
///
/// #[derive(ToolArgs, Debug, PartialEq)]
/// enum MemoryCommand {
///     /// Remember a fact.
///     Add { /** The fact. */ text: String },
///     /// Forget a fact.
///     #[arg(rename = "forget")]
///     Remove { id: u64 },
///     /// Forget everything.
///     #[command(destructive)]
///     Clear,
/// }
///
/// let definitions = MemoryCommand::command_definitions();
/// let names: Vec<_> = definitions.iter().map(|d| d.name.as_str()).collect();
/// assert_eq!(names, ["add", "forget", "clear"]);
/// assert_eq!(definitions[2].annotations.destructive, Some(true));
/// assert!(definitions[0].annotations.is_empty());
/// let arguments = ToolArguments::try_from(json!({"command": "forget", "id": "3"})).unwrap();
/// let command: MemoryCommand = ToolArgs::new("memory", &arguments).parse().unwrap();
/// assert_eq!(command, MemoryCommand::Remove { id: 3 });
/// ```
///
/// # Attributes
///
/// | attribute | on | meaning |
/// |---|---|---|
/// | `/// text` | field, variant | the description (a variant must have one) |
/// | `#[arg(rename = "...")]` | field, variant | the argument's or command's name |
/// | `#[arg(description = "...")]` | field, variant | the description, instead of the doc comment |
/// | `#[arg(default)]`, `#[arg(default = "path")]` | field | not required; `Default::default()` or `path()` when left out (or sent as `null`, as with `#[tool_fn]`) |
/// | `#[command(read_only)]` (… `destructive`, `idempotent`, `open_world`; `= false` states the opposite) | variant | a hint for this command, in its definition's annotations; a `#[tool_fn]` taking the enum gives the command its own hints where the variant gives none. A variant's name, description and skipping are said as above (`#[arg]`/`#[serde]`, the doc comment), not with `#[command]` |
/// | `#[toolsmith(crate = "path")]` (or `crate_path`) | type | where the Toolsmith API is (default: the crate the derive was used from, `::toolsmith` or `::toolsmith_core`) |
///
/// # `#[serde(...)]`
///
/// The derive reads the type's serde attributes as schemars does, so that the schema and the
/// reader name and fill the arguments as the type's serde form does (a type that also derives
/// `Serialize` writes the names the tool reads). `#[serde]` may be written without deriving
/// serde's traits.
///
/// | attribute | on | meaning |
/// |---|---|---|
/// | `rename_all = "..."` | struct | the case of the arguments' names, any of serde's eight (`"camelCase"`, `"kebab-case"`, …) |
/// | `rename_all = "..."` | enum | the case of the commands' names, split as serde splits them (`GetURL` in `"snake_case"` is `get_u_r_l`) |
/// | `rename_all_fields = "..."` | enum | the case of every command's arguments |
/// | `rename_all = "..."` | variant | the case of that command's arguments (before `rename_all_fields`) |
/// | `rename = "..."` | field, variant | the argument's or command's name |
/// | `default`, `default = "path"` | field | as `#[arg(default ..)]` |
/// | `default`, `default = "path"` | struct | every field left out takes its value in the struct's `Default::default()` (or `path()`), built once a read and only when a field takes a value from it (a skipped one always does) |
/// | `skip`, `skip_deserializing` | field | not an argument (not in the schema): filled from the field's default, else the struct's, else `Default::default()` |
/// | `skip`, `skip_deserializing` | variant | not a command |
/// | `deny_unknown_fields` | struct | what the schema does already (`additionalProperties: false`) |
/// | `tag = "command"` | enum | what the derive does already |
///
/// `rename_all(deserialize = "...")` and `rename(deserialize = "...")` are read; the
/// `serialize` half is not. An explicit `rename` (of `#[arg]` or `#[serde]`) wins over
/// `rename_all`. `#[arg]` and `#[serde]` on one field or variant must agree: a `rename` or a
/// `default` given by both with different values is a compile error naming both.
///
/// The keys whose shape the derive cannot follow are compile errors saying what to write
/// instead: `flatten`, `with`, `deserialize_with`, `borrow`, `alias` (a call is checked against
/// the tool's schema, closed to other names, before it is read: an alias would be refused),
/// another `tag`, `content`, `untagged`, `other`, `transparent`, `from`, `try_from`, `remote`,
/// `variant_identifier`, `field_identifier`, and keys the derive does not know. The keys that
/// only change serialization are passed over: `skip_serializing`, `skip_serializing_if`,
/// `serialize_with`, `getter`, `into`, `bound`, `crate`, `expecting`, a type's own `rename`.
///
/// ```
/// use toolsmith::{ArgsSchema, ToolArgs, ToolArguments};
/// use serde_json::json;
///
/// #[derive(ToolArgs, Debug, PartialEq)]
/// #[serde(rename_all = "camelCase")]
/// struct Search {
///     /// What to look for.
///     search_text: String,
///     /// At most this many hits.
///     #[serde(default)]
///     max_hits: u32,
///     #[serde(skip)]
///     served_from_cache: bool,
/// }
///
/// let schema = Search::args_schema();
/// assert_eq!(schema.property_names().collect::<Vec<_>>(), ["searchText", "maxHits"]);
/// assert_eq!(schema.schema()["required"], json!(["searchText"]));
///
/// let arguments = ToolArguments::try_from(json!({"searchText": "rust"})).unwrap();
/// let search: Search = ToolArgs::new("search", &arguments).parse().unwrap();
/// assert_eq!(search, Search { search_text: "rust".into(), max_hits: 0, served_from_cache: false });
/// ```
///
/// ```
/// mod api {
///     pub use toolsmith as tools;
/// }
///
/// #[derive(toolsmith::ToolArgs)]
/// #[toolsmith(crate = "crate::api::tools")]
/// struct Echo {
///     /// The text to echo.
///     text: String,
/// }
///
/// fn main() {
///     use toolsmith::ArgsSchema;
///     assert_eq!(Echo::args_schema().schema()["required"], serde_json::json!(["text"]));
/// }
/// ```
#[proc_macro_derive(ToolArgs, attributes(arg, command, toolsmith, serde))]
pub fn derive_tool_args(input: TokenStream) -> TokenStream {
    expand_tool_args(Home::Facade, input)
}

/// [`derive@ToolArgs`] as `toolsmith-core` re-exports it (as `ToolArgs`): the generated code
/// names `::toolsmith_core` rather than `::toolsmith`. The derive is the same in every other
/// way; its guide is `toolsmith::ToolArgs`'s.
#[proc_macro_derive(CoreToolArgs, attributes(arg, command, toolsmith, serde))]
pub fn derive_core_tool_args(input: TokenStream) -> TokenStream {
    expand_tool_args(Home::Core, input)
}

fn expand_tool_args(home: Home, input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let mut errors = Errors::default();
    let krate_override = attr::parse_crate_override(&input.attrs, &mut errors);
    let krate = crate_path::resolve(krate_override.path.as_ref(), home);
    let parsed = ast::DeriveInput::parse(&input, &mut errors);
    match &parsed {
        Some(ast::DeriveInput::Struct(s)) => valid::args_struct(&s.fields, &mut errors),
        Some(ast::DeriveInput::Enum(e)) => valid::command_enum(e, &mut errors),
        None => {}
    }
    if let Err(err) = errors.finish() {
        let mut out = err.to_compile_error();
        out.extend(stand_in::tool_args(&input, &krate_override, home));
        return out.into();
    }
    match parsed {
        Some(ast::DeriveInput::Struct(s)) => expand::args_struct(&s, &krate),
        Some(ast::DeriveInput::Enum(e)) => expand::command_enum(&e, &krate),
        None => proc_macro2::TokenStream::new(),
    }
    .into()
}
