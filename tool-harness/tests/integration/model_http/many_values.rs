//! Answers of a few bytes per JSON value (`[0,0,0,…]`): within the byte bound, but each
//! value takes 80 bytes or more once read, so that 32 MiB of them took 1.2 GB. A body, or
//! an event, of more values than a client reads is refused with an error saying so.

use toolsmith_harness::model::ModelError;

use super::conversation::first_request;
use super::server::{MockServer, Reply};
use super::{Api, Client};

/// More values than a client reads (2,097,152), in 6 MB.
const VALUES: usize = 3_000_000;

/// A JSON object whose `choices` are `VALUES` zeros.
fn crowded() -> String {
    format!("{{\"choices\": [{}0]}}", "0,".repeat(VALUES - 1))
}

/// Checks that `error` is `api`'s malformed answer saying it holds too many values.
fn assert_too_many(api: Api, error: &ModelError) {
    match error {
        ModelError::MalformedResponse { provider, reason } => {
            assert_eq!(provider, api.name());
            assert!(
                reason.contains("the JSON holds more than 2097152 values at line 1 column"),
                "{api:?}: {}",
                &reason[..reason.len().min(300)]
            );
        }
        other => panic!("{api:?}: {other:?}"),
    }
}

#[tokio::test]
async fn a_whole_answer_of_too_many_values_is_refused() {
    for api in Api::ALL {
        let server = MockServer::start([Reply::raw(200, crowded())]).await;
        let model = api.model(&server.base, &Client::default());
        let error = model.complete(&first_request(api)).await.unwrap_err();
        assert_too_many(api, &error);
        assert_eq!(server.requests().len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn an_event_of_too_many_values_is_refused() {
    for api in Api::ALL {
        let text = format!("data: {}\n\n", crowded());
        let server = MockServer::start([Reply::sse(&text, 64 * 1024)]).await;
        let model = api.model(&server.base, &Client::default());
        let mut deltas = Vec::new();
        let error = model
            .stream(&first_request(api), &mut |delta| deltas.push(delta))
            .await
            .unwrap_err();
        assert_too_many(api, &error);
        assert!(deltas.is_empty(), "{api:?}");
    }
}
