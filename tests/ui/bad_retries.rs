use toolsmith::tool_fn;

/// Fetches a page.
#[tool_fn(retries = "three")]
async fn fetch(url: String) -> String {
    url
}

/// Fetches a page, again.
#[tool_fn(retries = 2.5)]
async fn fetch_again(url: String) -> String {
    url
}

/// Fetches a page, forever.
#[tool_fn(retries = 5000000000)]
async fn fetch_forever(url: String) -> String {
    url
}

fn main() {}
