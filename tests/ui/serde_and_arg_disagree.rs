use toolsmith::ToolArgs;

fn ten() -> u32 {
    10
}

#[derive(ToolArgs)]
#[serde(rename_all = "camelcase", rename_all_fields = "camelCase")]
struct Search {
    /// The query.
    #[arg(rename = "q")]
    #[serde(rename = "query")]
    text: String,
    /// At most.
    #[arg(default)]
    #[serde(default = "ten")]
    limit: u32,
    /// Same name, same default: fine.
    #[arg(rename = "p", default = "ten")]
    #[serde(rename = "p", default = "ten")]
    page: u32,
    #[arg(description = "Never read.")]
    #[serde(skip)]
    cache: Vec<u8>,
    /// Unknown.
    #[serde(optional)]
    tag: Option<String>,
}

#[derive(ToolArgs)]
enum Command {
    /// Clear.
    #[arg(rename = "clear")]
    #[serde(rename = "wipe", default)]
    Clear,
}

#[derive(ToolArgs)]
enum Skipped {
    #[serde(skip)]
    Nothing,
}

fn main() {}
