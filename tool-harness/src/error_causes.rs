//! An error written with its causes: what the harness's HTTP clients (model APIs, MCP over
//! HTTP) report, since `reqwest` and rmcp keep the useful part ("Connection refused") in
//! their errors' sources, not in their own messages.

/// `err` and its causes, innermost last, joined by `": "`; a cause that says what the error
/// before it said is written once.
pub(crate) fn with_causes(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if parts.last() != Some(&text) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{text}")]
    struct Layer {
        text: &'static str,
        #[source]
        source: Option<Box<Layer>>,
    }

    fn layers(texts: &[&'static str]) -> Layer {
        texts
            .iter()
            .rev()
            .fold(None, |source, &text| {
                Some(Layer {
                    text,
                    source: source.map(Box::new),
                })
            })
            .expect("at least one layer")
    }

    #[test]
    fn causes_follow_the_error_innermost_last_each_said_once() {
        let err = layers(&[
            "sending failed",
            "connect error",
            "connect error",
            "refused",
        ]);
        assert_eq!(with_causes(&err), "sending failed: connect error: refused");
        assert_eq!(with_causes(&layers(&["alone"])), "alone");
    }
}
