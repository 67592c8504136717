//! A server whose tool list never ends (every page has a next one), or whose tools are huge,
//! cannot make our client grow without bound or list for ever: the listing stops at the
//! client's tool limit, its page limit, its byte limit or its time limit, and says which,
//! keeping the list it had.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use toolsmith_harness::mcp::{McpClient, McpClientOptions, McpError, McpNames, McpTransport};

use super::fake_http::{FakeAnswer, FakeHttpServer};
use super::original_names;

/// How the fake server pages its list.
const ONE_PAGE: usize = 0;
const ENDLESS_TOOLS: usize = 1;
const ENDLESS_EMPTY_PAGES: usize = 2;
const SLOW_EMPTY_PAGES: usize = 3;

/// The time limit of the test that reaches it: room for a connection and twenty pages on a
/// loaded machine (500 ms was not: CI-like load ran out of it while connecting).
const LIST_TIME_LIMIT: Duration = Duration::from_secs(5);
/// How long each of `SLOW_EMPTY_PAGES` takes: twenty of them take well past the limit,
/// however fast the machine is.
const SLOW_PAGE: Duration = Duration::from_millis(600);

async fn paging_server(mode: &Arc<AtomicUsize>) -> FakeHttpServer {
    let mode = Arc::clone(mode);
    let pages = AtomicUsize::new(0);
    FakeHttpServer::start(move |method, _| {
        if method != "tools/list" {
            return FakeAnswer::Result(json!({}));
        }
        let page = pages.fetch_add(1, Ordering::SeqCst);
        let tool = json!({"name": format!("t{page}"), "description": "A tool.",
            "inputSchema": {"type": "object"}});
        let next = format!("after-{page}");
        match mode.load(Ordering::SeqCst) {
            ONE_PAGE => FakeAnswer::Result(json!({"tools": [tool]})),
            ENDLESS_TOOLS => FakeAnswer::Result(json!({"tools": [tool], "nextCursor": next})),
            ENDLESS_EMPTY_PAGES => FakeAnswer::Result(json!({"tools": [], "nextCursor": next})),
            _ => FakeAnswer::Delayed(
                SLOW_PAGE,
                Box::new(FakeAnswer::Result(json!({"tools": [], "nextCursor": next}))),
            ),
        }
    })
    .await
}

fn options(max_tools: usize, list_timeout: Duration) -> McpClientOptions {
    McpClientOptions::default()
        .with_names(McpNames::new())
        .with_max_tools(max_tools)
        .with_connect_timeout(list_timeout)
}

/// `listing`, which must end well within thirty seconds whatever the server does.
async fn bounded<T>(listing: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), listing)
        .await
        .expect("the listing ends by its own limits")
}

fn reason(error: &McpError) -> String {
    match error {
        McpError::Request {
            request, reason, ..
        } => {
            assert_eq!(request, "tools/list");
            reason.clone()
        }
        other => panic!("not a failed listing: {other}"),
    }
}

#[tokio::test]
async fn connecting_to_a_list_that_never_ends_stops_at_the_tool_limit() {
    let mode = Arc::new(AtomicUsize::new(ENDLESS_TOOLS));
    let server = paging_server(&mode).await;
    let error = bounded(McpClient::connect_with(
        McpTransport::http(server.url()),
        options(50, Duration::from_secs(30)),
    ))
    .await
    .unwrap_err();
    let reason = reason(&error);
    assert!(reason.contains("past 50 tools or pages"), "{reason}");
}

#[tokio::test]
async fn listing_again_stops_at_the_page_and_time_limits_and_keeps_the_list() {
    let mode = Arc::new(AtomicUsize::new(ONE_PAGE));
    let server = paging_server(&mode).await;
    let client = McpClient::connect_with(
        McpTransport::http(server.url()),
        options(20, LIST_TIME_LIMIT),
    )
    .await
    .unwrap();
    let names = |client: &McpClient| {
        client
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&client), ["t0"]);

    mode.store(ENDLESS_EMPTY_PAGES, Ordering::SeqCst);
    let error = bounded(client.refresh_tools()).await.unwrap_err();
    assert!(reason(&error).contains("past 20 tools or pages"), "{error}");
    assert_eq!(names(&client), ["t0"]);

    mode.store(SLOW_EMPTY_PAGES, Ordering::SeqCst);
    let error = bounded(client.refresh_tools()).await.unwrap_err();
    assert!(
        reason(&error).contains(&format!("took longer than {LIST_TIME_LIMIT:?}")),
        "{error}"
    );
    assert_eq!(names(&client), ["t0"]);

    mode.store(ONE_PAGE, Ordering::SeqCst);
    client.refresh_tools().await.unwrap();
    assert_eq!(client.tools().len(), 1);
    client.close().await;
}

/// Two listings at once whose answers come back in the other order (a slow answer to the
/// first, over another connection): the list ends as the listing that started last found it,
/// not as the one whose answer came last.
#[tokio::test]
async fn a_slow_listing_does_not_undo_a_newer_one() {
    let listings = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&listings);
    let server = FakeHttpServer::start(move |method, _| {
        if method != "tools/list" {
            return FakeAnswer::Result(json!({}));
        }
        let tool = |name: &str| {
            json!({"tools": [{"name": name, "description": "A tool.",
            "inputSchema": {"type": "object"}}]})
        };
        match counted.fetch_add(1, Ordering::SeqCst) {
            0 => FakeAnswer::Result(tool("old")),
            // The list as it was when this listing arrived, answered late.
            1 => FakeAnswer::Delayed(
                Duration::from_millis(600),
                Box::new(FakeAnswer::Result(tool("old"))),
            ),
            _ => FakeAnswer::Result(tool("new")),
        }
    })
    .await;
    let client = McpClient::connect_with(
        McpTransport::http(server.url()),
        options(10, Duration::from_secs(10)),
    )
    .await
    .unwrap();
    assert_eq!(original_names(&client), ["old"]);
    let (slow, fast) = tokio::join!(bounded(client.refresh_tools()), async {
        while listings.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let fast = bounded(client.refresh_tools()).await;
        assert_eq!(original_names(&client), ["new"]);
        fast
    });
    slow.unwrap();
    fast.unwrap();
    assert_eq!(original_names(&client), ["new"]);
    client.close().await;
}

/// A list whose tools, few as they are, take more bytes than the client keeps fails to list
/// at the tool that passes the limit, naming the server and that tool; a listing again keeps
/// the list it had.
#[tokio::test]
async fn a_list_past_the_byte_limit_fails_at_the_tool_that_passes_it() {
    let huge = Arc::new(AtomicUsize::new(0));
    let descriptions = Arc::clone(&huge);
    let pages = AtomicUsize::new(0);
    let server = FakeHttpServer::start(move |method, _| {
        if method != "tools/list" {
            return FakeAnswer::Result(json!({}));
        }
        let description = "d".repeat(descriptions.load(Ordering::SeqCst));
        let tool = |i: usize| {
            json!({"name": format!("t{i}"), "description": description,
                "inputSchema": {"type": "object"}})
        };
        // Two pages a listing (the listings come one after another): the bytes are counted
        // across them.
        FakeAnswer::Result(if pages.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
            json!({"tools": [tool(0), tool(1)], "nextCursor": "second"})
        } else {
            json!({"tools": [tool(2)]})
        })
    })
    .await;
    let options = options(100, Duration::from_secs(10)).with_max_listing_bytes(25_000);
    let client = McpClient::connect_with(McpTransport::http(server.url()), options.clone())
        .await
        .unwrap();
    assert_eq!(original_names(&client), ["t0", "t1", "t2"]);

    // Each tool now takes over 10,000 bytes: the third passes 25,000.
    huge.store(10_000, Ordering::SeqCst);
    let error = bounded(client.refresh_tools()).await.unwrap_err();
    let message = error.to_string();
    assert!(message.contains(&server.url()), "{message}");
    let why = reason(&error);
    assert!(
        why.contains("passes 25000 bytes at the tool `t2`")
            && why.contains("with_max_listing_bytes"),
        "{why}"
    );
    assert_eq!(original_names(&client), ["t0", "t1", "t2"]);
    client.close().await;

    let error = bounded(McpClient::connect_with(
        McpTransport::http(server.url()),
        options,
    ))
    .await
    .unwrap_err();
    assert!(reason(&error).contains("at the tool `t2`"), "{error}");
}
