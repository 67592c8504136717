use toolsmith::ToolArgs;

#[derive(Default, serde::Deserialize, schemars::JsonSchema)]
struct Paging {
    page: u32,
}

#[derive(ToolArgs)]
#[serde(transparent, from = "String", deny_unknown_fields)]
struct Search {
    /// The query.
    #[serde(alias = "query")]
    q: String,
    /// Where to start.
    #[serde(flatten)]
    paging: Paging,
    /// When.
    #[serde(with = "my_dates", skip_serializing_if = "Option::is_none")]
    after: Option<String>,
    /// Until.
    #[serde(deserialize_with = "my_dates::deserialize")]
    before: String,
}

fn main() {}
