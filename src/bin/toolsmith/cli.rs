//! The command line, as clap reads it.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use toolsmith::harness::agent::DEFAULT_MAX_TURNS;

use crate::fallback_arg::{Fallback, FallbackParser};

/// Toolsmith's tools from the command line: serve them over MCP, show their declarations,
/// call one, give them to a model with a question, or list a remote MCP server's tools.
#[derive(Debug, Parser)]
#[command(name = "toolsmith", version, after_long_help = LOG_HELP)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// What `--help` says of the library's log on stderr and `RUST_LOG`.
const LOG_HELP: &str = "\
Environment:
  RUST_LOG  Which of the library's log events are shown on stderr, as a tracing filter
            (`toolsmith=info`, `toolsmith_harness::mcp=debug`, `off`); by default the
            toolsmith crates' warnings and errors (`toolsmith=warn`), which a filter
            naming neither a toolsmith target nor a level for all (`hyper=debug`) keeps.";

impl Cli {
    /// Reads the command line (exiting with clap's message and code 2 on a usage error),
    /// noting where `serve`'s token came from.
    pub fn read() -> Self {
        let matches = Self::command().get_matches();
        let mut cli = Self::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
        if let (Command::Serve(args), Some(serve)) =
            (&mut cli.command, matches.subcommand_matches("serve"))
        {
            args.token_from_env = serve.value_source("token") == Some(ValueSource::EnvVariable);
            args.http_only_flags_given = HTTP_ONLY_FLAGS
                .iter()
                .filter(|(id, _)| serve.value_source(id) == Some(ValueSource::CommandLine))
                .map(|&(_, flag)| flag)
                .collect();
        }
        cli
    }
}

/// `serve`'s flags that mean something with `--http` only (clap's id, the flag), noted as
/// ignored when given on stdio.
const HTTP_ONLY_FLAGS: [(&str, &str); 4] = [
    ("token", "--token"),
    ("allow_host", "--allow-host"),
    ("max_sessions", "--max-sessions"),
    ("session_idle_timeout", "--session-idle-timeout"),
];

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a preset's tools over MCP: stdio by default (stdout carries only JSON-RPC; logs
    /// go to stderr), streamable HTTP with --http.
    Serve(ServeArgs),
    /// Print the tool declarations a provider would receive for a preset.
    Tools(ToolsArgs),
    /// Run one tool call locally and print its result (exit code 1 on a tool error, 2 when
    /// the arguments are not a JSON object or the preset has no such tool; a bash command's
    /// own exit code is in its result, `[exit code: N]`).
    Call(CallArgs),
    /// Ask a model a question with a preset's tools: the answer streams to stdout, each tool
    /// call to stderr. The model finds its tools through `shed`.
    Run(RunArgs),
    /// Talk to a remote MCP server.
    Mcp {
        /// What to ask it.
        #[command(subcommand)]
        command: McpCommand,
    },
}

/// Which tools, sandboxed to which directory.
#[derive(Debug, Args)]
pub struct PresetArgs {
    /// The directory the tools work in: files outside it are refused, and `bash` runs (and,
    /// where Landlock is supported, writes) only there.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// The bundle of tools.
    #[arg(long, value_enum, default_value_t = PresetName::Standard)]
    pub preset: PresetName,
}

/// The harness presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PresetName {
    /// read, write, edit, search_file, bash and memory.
    Standard,
    /// read, write, edit and search_file.
    Files,
    /// bash.
    Shell,
    /// read, write, edit and bash.
    Minimal,
}

/// `toolsmith serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The tools.
    #[command(flatten)]
    pub preset: PresetArgs,
    /// Serve streamable HTTP on ADDR (`127.0.0.1:8080`, or a port alone for 127.0.0.1)
    /// instead of stdio; MCP is at /mcp.
    #[arg(long, value_name = "ADDR", value_parser = crate::serve::parse_addr)]
    pub http: Option<SocketAddr>,
    /// Offer only `shed` at first; the tools it finds are added to the client's list.
    #[arg(long)]
    pub shed: bool,
    /// With --http: require `Authorization: Bearer TOKEN`.
    #[arg(long, env = "TOOLSMITH_MCP_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Whether `token` came from `TOOLSMITH_MCP_TOKEN` rather than `--token`: an exported
    /// token is for the HTTP servers and clients it is meant for, not worth a note on stdio.
    #[arg(skip)]
    pub token_from_env: bool,
    /// The flags of those for `--http` alone that the command line gave (not an environment
    /// variable, not a default), in the order of `--help`: on stdio they are noted as ignored.
    #[arg(skip)]
    pub http_only_flags_given: Vec<&'static str>,
    /// With --http: also accept requests whose Host is HOST (a name or address clients reach
    /// this machine by, `name:port` for one port; compared exactly, no wildcards);
    /// repeatable. Bound to 0.0.0.0, only the loopback names are accepted without it.
    #[arg(long, value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// With --http: the most MCP sessions open at once (at least 1); past it, a new client
    /// gets 503.
    #[arg(long, value_name = "N", default_value_t = toolsmith::harness::mcp::DEFAULT_MAX_SESSIONS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_sessions: usize,
    /// With --http: end a session after SECONDS idle, with no call running and no message
    /// passing (0: never). A running call keeps its session, however long it runs.
    #[arg(long, value_name = "SECONDS", default_value_t = toolsmith::harness::mcp::DEFAULT_SESSION_IDLE_TIMEOUT.as_secs())]
    pub session_idle_timeout: u64,
    /// The largest message read from a client, in bytes (a `write` of a large file needs
    /// more); a larger one is refused with the limit named, and serving goes on.
    #[arg(long, value_name = "BYTES", default_value_t = toolsmith::harness::mcp::DEFAULT_MAX_MESSAGE_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_message_bytes: usize,
    /// The most JSON values (each string, number, array, object...) read in one message from
    /// a client; a message of more is refused with the limit named.
    #[arg(long, value_name = "N", default_value_t = toolsmith::harness::mcp::DEFAULT_SERVER_MAX_VALUES,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_values: usize,
}

/// `toolsmith tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The tools.
    #[command(flatten)]
    pub preset: PresetArgs,
    /// The provider's wire format.
    #[arg(long, value_enum, default_value_t = ProviderName::OpenaiChat)]
    pub provider: ProviderName,
    /// Render every tool in the provider's strict mode (OpenAI, Anthropic).
    #[arg(long)]
    pub strict: bool,
}

/// The provider formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderName {
    /// OpenAI Chat Completions.
    OpenaiChat,
    /// OpenAI Responses.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini.
    Gemini,
    /// Text-based backends (llama.cpp, Candle).
    Text,
}

/// `toolsmith call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tools.
    #[command(flatten)]
    pub preset: PresetArgs,
    /// The tool to call.
    pub name: String,
    /// The arguments, a JSON object; `-` reads them from stdin (16 MiB at most).
    #[arg(default_value = "{}")]
    pub json: String,
}

/// `toolsmith run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The tools.
    #[command(flatten)]
    pub preset: PresetArgs,
    /// The model's API. The key comes from the API's variable (`OPENAI_API_KEY`,
    /// `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`); a local server (`--base-url`) may need none.
    #[arg(long, value_enum, default_value_t = ModelApi::OpenaiChat)]
    pub api: ModelApi,
    /// The model to ask (`gpt-4.1-mini`, `claude-sonnet-4-5`, `gemini-2.5-flash`, a local
    /// server's model).
    #[arg(long, env = "TOOLSMITH_MODEL", value_parser = model_name)]
    pub model: String,
    /// The API's base URL, for a local server or a proxy (`http://localhost:11434/v1` for
    /// Ollama); default: the API's own, or its `*_BASE_URL` variable.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// A model to ask when the one before it fails on its provider's side (rate limited
    /// after the client's retries, overloaded, a 5xx, a time-out, no connection):
    /// `API:MODEL`, or `API:MODEL@URL` at a base URL (`openai-chat:gpt-4.1-mini`,
    /// `anthropic:claude-haiku-4-5`, `openai-chat:llama3:8b@http://localhost:11434/v1`).
    /// Repeat it for more, asked in turn; its key comes from its API's variable.
    #[arg(long, value_name = "API:MODEL[@URL]", value_parser = FallbackParser)]
    pub fallback: Vec<Fallback>,
    /// The system prompt.
    #[arg(long)]
    pub system: Option<String>,
    /// The most model calls of the run (at least 1); the library's default.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_TURNS as u32,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: u32,
    /// The model's context window, in tokens. From 80% of it, the conversation's older
    /// part is summarised by the model (the newest 20% and the question kept word for
    /// word); past it, the oldest exchanges are dropped. Without it, a run that outgrows
    /// the window ends with the model's error.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    pub context_window: Option<u64>,
    /// Declare every tool of the preset on every request, and no `shed`: the model calls
    /// them without searching first (a turn saved for a preset of a few tools).
    #[arg(long)]
    pub every_tool: bool,
    /// Print the run on stdout as JSON lines, for a program to read: each event as
    /// `{"type": "tool_call_started", "data": {..}}` (the model's text as `text_delta`s),
    /// then `{"type": "answer", "data": {"text", "model_calls", "tool_calls", "usage"}}`, or
    /// `{"type": "error", "data": "<message>"}` when the run fails or ends without an answer
    /// (exit code 1, the message on stderr too) or is interrupted (`interrupted by SIGINT
    /// (Ctrl-C)`, exit code 130; 143 for SIGTERM). Nothing else is printed on stdout; on stderr,
    /// only failures, warnings, and the questions about destructive calls (or, where none
    /// can be asked, that one was refused).
    #[arg(long)]
    pub json: bool,
    /// Let the model run destructive tools (write, edit, bash) without asking. Otherwise
    /// each such call is asked about on the terminal, or refused when stdin is not one or
    /// held the prompt (`-`).
    #[arg(long)]
    pub yes: bool,
    /// The question; `-` reads it from stdin (16 MiB at most; destructive calls are then
    /// refused without --yes, stdin being spent).
    pub prompt: String,
}

/// Reads `--model` (or `TOOLSMITH_MODEL`): a blank name, which no API serves, is a usage
/// error naming the flag, rather than a failure of the agent session's builder.
fn model_name(text: &str) -> Result<String, String> {
    if toolsmith::is_blank(text) {
        return Err(
            "the model's name is empty: give one with --model or TOOLSMITH_MODEL".to_owned(),
        );
    }
    Ok(text.to_owned())
}

/// The model APIs `run` can ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelApi {
    /// OpenAI Chat Completions, and the servers that speak it (vLLM, llama.cpp, Ollama).
    OpenaiChat,
    /// OpenAI Responses.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini.
    Gemini,
}

/// `toolsmith mcp …`.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List a server's tools as Toolsmith sees them (the names a model is given), through
    /// the MCP bridge: `toolsmith mcp list -- CMD ARGS..` or `toolsmith mcp list --url URL`.
    // Neither a command nor --url is refused by `remote::list`, which names both: clap's own
    // error named the command alone. The usage shows the two forms.
    #[command(
        override_usage = "toolsmith mcp list [OPTIONS] -- <COMMAND>...\n       \
                                toolsmith mcp list [OPTIONS] --url <URL>"
    )]
    List {
        /// The server's streamable HTTP endpoint, instead of a command.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// With --url: the bearer token.
        #[arg(long, env = "TOOLSMITH_MCP_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// The command that starts the server, after `--`.
        #[arg(last = true)]
        command: Vec<OsString>,
    },
}
