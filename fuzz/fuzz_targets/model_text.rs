//! Model text: arbitrary UTF-8 as a text-based model writes it, through
//! `parse_text_calls` and `repair_json`.
//!
//! Asserts, beyond "no panic": a readable call names a tool and its arguments are an object;
//! `repair_json` of text serde_json reads is that same value (repair changes nothing that
//! needed none); a repaired value written out and repaired again is the same value (repair
//! never returns a value it would itself refuse, such as one nested too deeply).

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith::provider::{parse_text_calls, repair_json};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for (index, call) in parse_text_calls(text).iter().enumerate() {
        if let Ok(request) = call {
            assert!(!request.name.is_empty(), "call {index} runs with no name");
            assert!(request.arguments.as_value().is_object(), "call {index}");
            assert!(!request.id.is_empty(), "call {index} has an empty id");
        }
    }
    let repaired = repair_json(text);
    if let Ok(exact) = serde_json::from_str::<Value>(text) {
        assert_eq!(
            repaired.as_ref(),
            Ok(&exact),
            "repair changed valid JSON {text:?}"
        );
    }
    if let Ok(value) = repaired {
        let written = value.to_string();
        assert_eq!(
            repair_json(&written),
            Ok(value),
            "a repaired value, written out: {written}"
        );
    }
});
