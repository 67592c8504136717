//! Bodies that never end: a line without its end, an event without its blank line, a JSON
//! answer of gigabytes. Each client stops reading at `MAX_RESPONSE_BYTES` (32 MiB) with an
//! error saying so, rather than holding the body as it grows; nothing is retried.

use std::time::Duration;

use toolsmith_harness::model::{ChatModel, ModelError};

use super::conversation::first_request;
use super::server::{MockServer, Reply};
use super::{Api, Client};

/// What the server repeats: 64 KiB of one byte, with nothing that ends a line.
fn filler() -> Vec<u8> {
    vec![b'7'; 64 * 1024]
}

/// How long an endless body may take to reach the bound. Reading 32 MiB takes a fraction of
/// it; a client that never stopped would run into it (no wait for the next bytes is long).
const GUARD: Duration = Duration::from_secs(20);

/// The error `api`'s client gives for `reply`, streamed or not, and how many requests it
/// made.
async fn error_of(api: Api, reply: Reply, streamed: bool) -> (ModelError, usize) {
    let server = MockServer::start([reply]).await;
    let model = api.model(&server.base, &Client::default());
    let request = first_request(api);
    let mut deltas = Vec::new();
    let answer = async {
        if streamed {
            model
                .stream(&request, &mut |delta| deltas.push(delta))
                .await
        } else {
            model.complete(&request).await
        }
    };
    let error = match tokio::time::timeout(GUARD, answer).await {
        Err(_) => panic!("{api:?}: still reading an endless body after {GUARD:?}"),
        Ok(Ok(answer)) => panic!("{api:?}: an answer from an endless body: {answer:?}"),
        Ok(Err(error)) => error,
    };
    assert!(deltas.is_empty(), "{api:?}: {deltas:?}");
    (error, server.requests().len())
}

/// Checks that `error` is `api`'s malformed answer whose reason begins with `reason`.
fn assert_malformed(api: Api, error: &ModelError, reason: &str) {
    match error {
        ModelError::MalformedResponse {
            provider,
            reason: given,
        } => {
            assert_eq!(provider, api.name());
            assert!(given.starts_with(reason), "{api:?}: {given}");
        }
        other => panic!("{api:?}: {other:?}"),
    }
}

/// Why an endless stream ends.
const LONGER: &str = "the stream is longer than the 32 MiB a client reads";

#[tokio::test]
async fn an_endless_line_ends_at_the_bound() {
    for api in Api::ALL {
        let opening = match api {
            Api::Chat | Api::Gemini => "data: {\"text\": \"",
            Api::Responses | Api::Anthropic => "event: delta\ndata: {\"text\": \"",
        };
        let reply = Reply::endless(Some("text/event-stream"), opening.as_bytes(), &filler());
        let (error, requests) = error_of(api, reply, true).await;
        assert_malformed(api, &error, LONGER);
        assert_eq!(requests, 1, "{api:?}");
    }
}

#[tokio::test]
async fn an_endless_event_or_comment_ends_at_the_bound() {
    // An event whose `data:` lines never end it with a blank line, and a stream of nothing
    // but comments. Lines of 1 KiB: the bound is on bytes, and fewer lines read faster.
    let line = |start: &str| format!("{start}{}\n", "7".repeat(1024)).into_bytes();
    for (opening, repeated) in [("data: [\n", line("data: 7")), (": hello\n", line(": "))] {
        let reply = Reply::endless(
            Some("text/event-stream"),
            opening.as_bytes(),
            &repeated.repeat(64),
        );
        let (error, requests) = error_of(Api::Chat, reply, true).await;
        assert_malformed(Api::Chat, &error, LONGER);
        assert_eq!(requests, 1, "{opening}");
    }
}

#[tokio::test]
async fn an_endless_whole_answer_ends_at_the_bound() {
    let larger = "the response body is larger, more than the 32 MiB a client reads";
    let opening = b"{\"choices\": [{\"message\": {\"content\": \"";
    // Asked whole, or asked to stream by a server that answers whole: labelled JSON (read
    // as a body), or labelled as events (told apart by its first byte).
    let as_json = || Reply::endless(Some("application/json"), opening, &filler());
    let as_events = Reply::endless(Some("text/event-stream"), opening, &filler());
    for (reply, streamed, reason) in [
        (as_json(), false, larger),
        (as_json(), true, larger),
        (as_events, true, LONGER),
    ] {
        let (error, requests) = error_of(Api::Chat, reply, streamed).await;
        assert_malformed(Api::Chat, &error, reason);
        assert_eq!(requests, 1, "streamed: {streamed}");
    }
}

#[tokio::test]
async fn an_endless_error_body_ends_at_the_bound() {
    // An error status is acted on whatever its body: a 400 is the API's error, saying why
    // its message could not be read.
    let reply = Reply::endless(Some("application/json"), b"{\"error\": \"", &filler()).status(400);
    let (error, requests) = error_of(Api::Anthropic, reply, false).await;
    match error {
        ModelError::Api {
            status: 400,
            message,
            ..
        } => assert!(message.contains("more than the 32 MiB"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(requests, 1);
}

#[tokio::test]
async fn an_endless_blank_opening_ends_at_the_bound() {
    // Blanks before the first byte tell a whole answer from events: a body of nothing else
    // comes in many small chunks, each of which must not have the client look at all the
    // blanks again (32 MiB in 1 KiB chunks took minutes; any other endless line, under 1 s).
    let reply = Reply::endless(Some("text/event-stream"), b"", &[b' '; 1024]);
    let (error, requests) = error_of(Api::Chat, reply, true).await;
    assert_malformed(Api::Chat, &error, LONGER);
    assert_eq!(requests, 1);
}
