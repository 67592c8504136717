//! Fixed-width integer parameters: their schemas carry both bounds of the Rust type, so that
//! validation refuses what the tool could not read, and accepts (and the tool reads) every
//! value the type holds, the bounds included.

use std::num::{
    NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroIsize, NonZeroU8, NonZeroU16, NonZeroU32,
    NonZeroU64, NonZeroUsize,
};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolsmith::{ToolCallManager, ToolError, ToolImpl, tool_fn};

use crate::support::json_calls::{arguments, run_json as run};

/// Echoes every integer it is given.
#[tool_fn]
#[allow(clippy::too_many_arguments)]
async fn integers(
    a_u8: u8,
    a_u16: u16,
    a_u32: u32,
    a_u64: u64,
    a_usize: usize,
    a_i8: i8,
    a_i16: i16,
    a_i32: i32,
    a_i64: i64,
    a_isize: isize,
    nz_u8: NonZeroU8,
    nz_u16: NonZeroU16,
    nz_u32: NonZeroU32,
    nz_u64: NonZeroU64,
    nz_usize: NonZeroUsize,
    nz_i8: NonZeroI8,
    nz_i16: NonZeroI16,
    nz_i32: NonZeroI32,
    nz_i64: NonZeroI64,
    nz_isize: NonZeroIsize,
) -> Result<Value, ToolError> {
    Ok(json!({
        "a_u8": a_u8, "a_u16": a_u16, "a_u32": a_u32, "a_u64": a_u64, "a_usize": a_usize,
        "a_i8": a_i8, "a_i16": a_i16, "a_i32": a_i32, "a_i64": a_i64, "a_isize": a_isize,
        "nz_u8": nz_u8, "nz_u16": nz_u16, "nz_u32": nz_u32, "nz_u64": nz_u64,
        "nz_usize": nz_usize, "nz_i8": nz_i8, "nz_i16": nz_i16, "nz_i32": nz_i32,
        "nz_i64": nz_i64, "nz_isize": nz_isize,
    }))
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Limits {
    count: u32,
    offset: Option<i16>,
}

/// Echoes integers nested in a struct, an array and an option.
#[tool_fn]
async fn nested(
    limits: Limits,
    sizes: Vec<u32>,
    maybe: Option<u32>,
    step: Option<NonZeroI8>,
) -> Result<Value, ToolError> {
    Ok(json!({"limits": limits, "sizes": sizes, "maybe": maybe, "step": step}))
}

/// A JSON number as a model would write it, read as `serde_json` reads it.
fn number(text: &str) -> Value {
    serde_json::from_str(text).expect("a JSON number")
}

/// Each parameter of `integers`: its lowest and highest values, and the nearest numbers
/// beyond them that JSON (through `serde_json`, as `f64` beyond 64 bits) can carry.
fn table() -> Vec<(&'static str, i128, i128, &'static str, &'static str)> {
    let isize_min = isize::MIN as i128;
    let isize_max = isize::MAX as i128;
    let usize_max = usize::MAX as i128;
    // One past i64::MIN is not a double: -2^63 - 1 reads as -2^63 itself, which the type
    // holds. The next double below it is -2^63 - 2048.
    let below_isize = if isize::BITS == 64 {
        "-9223372036854777856"
    } else {
        "-2147483649"
    };
    let above_isize = if isize::BITS == 64 {
        "9223372036854775808"
    } else {
        "2147483648"
    };
    let above_usize = if usize::BITS == 64 {
        "18446744073709551616"
    } else {
        "4294967296"
    };
    vec![
        ("a_u8", 0, 255, "-1", "256"),
        ("a_u16", 0, 65535, "-1", "65536"),
        ("a_u32", 0, 4294967295, "-1", "4294967296"),
        ("a_u64", 0, u64::MAX as i128, "-1", "18446744073709551616"),
        ("a_usize", 0, usize_max, "-1", above_usize),
        ("a_i8", -128, 127, "-129", "128"),
        ("a_i16", -32768, 32767, "-32769", "32768"),
        (
            "a_i32",
            i32::MIN as i128,
            i32::MAX as i128,
            "-2147483649",
            "2147483648",
        ),
        (
            "a_i64",
            i64::MIN as i128,
            i64::MAX as i128,
            "-9223372036854777856",
            "9223372036854775808",
        ),
        ("a_isize", isize_min, isize_max, below_isize, above_isize),
        ("nz_u8", 1, 255, "0", "256"),
        ("nz_u16", 1, 65535, "0", "65536"),
        ("nz_u32", 1, 4294967295, "0", "4294967296"),
        ("nz_u64", 1, u64::MAX as i128, "0", "18446744073709551616"),
        ("nz_usize", 1, usize_max, "0", above_usize),
        ("nz_i8", -128, 127, "-129", "128"),
        ("nz_i16", -32768, 32767, "-32769", "32768"),
        (
            "nz_i32",
            i32::MIN as i128,
            i32::MAX as i128,
            "-2147483649",
            "2147483648",
        ),
        (
            "nz_i64",
            i64::MIN as i128,
            i64::MAX as i128,
            "-9223372036854777856",
            "9223372036854775808",
        ),
        ("nz_isize", isize_min, isize_max, below_isize, above_isize),
    ]
}

fn manager() -> ToolCallManager {
    let manager = ToolCallManager::new("test");
    let tools: [Arc<dyn ToolImpl>; 2] = [Arc::new(Integers), Arc::new(Nested)];
    for tool in tools {
        manager.register(tool).expect("registers");
    }
    manager
}

/// Every parameter of `integers` set to 1.
fn ones() -> serde_json::Map<String, Value> {
    table()
        .into_iter()
        .map(|(name, ..)| (name.to_owned(), json!(1)))
        .collect()
}

/// Asserts that `args` are refused by validation and by a call, naming `path`.
async fn assert_refused(manager: &ToolCallManager, tool: &str, args: Value, path: &str) {
    let what = args.to_string();
    let err = manager
        .validate_arguments(tool, &arguments(args.clone()))
        .expect_err(&format!("validation accepted {what}"));
    let ToolError::InvalidArguments { reason, .. } = &err else {
        panic!("expected InvalidArguments for {what}, got {err:?}");
    };
    assert!(reason.starts_with(&format!("{path}: ")), "{path}: {reason}");
    let err = run(manager, tool, args)
        .await
        .expect_err(&format!("the call accepted {what}"));
    assert!(
        matches!(&err, ToolError::InvalidArguments { reason, .. } if reason.starts_with(&format!("{path}: "))),
        "{path}: {err:?}"
    );
}

#[tokio::test]
async fn every_fixed_width_integer_accepts_its_bounds_and_refuses_beyond() {
    let manager = manager();
    for (name, min, max, below, above) in table() {
        for bound in [min, max] {
            let mut args = ones();
            args.insert(name.to_owned(), number(&bound.to_string()));
            let args = Value::Object(args);
            manager
                .validate_arguments("integers", &arguments(args.clone()))
                .unwrap_or_else(|err| panic!("{name} = {bound}: {err}"));
            let echoed = run(&manager, "integers", args.clone())
                .await
                .unwrap_or_else(|err| panic!("{name} = {bound}: {err}"));
            assert_eq!(echoed, args, "{name} = {bound}");
        }
        for beyond in [below, above] {
            let mut args = ones();
            args.insert(name.to_owned(), number(beyond));
            assert_refused(
                &manager,
                "integers",
                Value::Object(args),
                &format!("/{name}"),
            )
            .await;
        }
    }
}

#[tokio::test]
async fn non_zero_integers_refuse_zero() {
    let manager = manager();
    for (name, ..) in table().into_iter().filter(|(n, ..)| n.starts_with("nz_")) {
        for zero in ["0", "0.0", "-0"] {
            let mut args = ones();
            args.insert(name.to_owned(), number(zero));
            assert_refused(
                &manager,
                "integers",
                Value::Object(args),
                &format!("/{name}"),
            )
            .await;
        }
    }
}

#[tokio::test]
async fn nested_integers_are_bounded_too() {
    let manager = manager();
    let valid = json!({
        "limits": {"count": 4294967295u32, "offset": -32768},
        "sizes": [0, 4294967295u32],
        "maybe": 4294967295u32,
        "step": -128
    });
    assert_eq!(run(&manager, "nested", valid.clone()).await.unwrap(), valid);
    for (path, args) in [
        (
            "/limits/count",
            json!({"limits": {"count": 4294967296u64}, "sizes": []}),
        ),
        (
            "/limits/offset",
            json!({"limits": {"count": 1, "offset": 32768}, "sizes": []}),
        ),
        (
            "/sizes/1",
            json!({"limits": {"count": 1}, "sizes": [1, number("1e19")]}),
        ),
        (
            "/maybe",
            json!({"limits": {"count": 1}, "sizes": [], "maybe": number("1e19")}),
        ),
        (
            "/step",
            json!({"limits": {"count": 1}, "sizes": [], "step": 0}),
        ),
        (
            "/step",
            json!({"limits": {"count": 1}, "sizes": [], "step": -129}),
        ),
    ] {
        assert_refused(&manager, "nested", args, path).await;
    }
}

/// A whole number written as a float (`1e18`) reads as the integer it is, wherever the schema
/// accepts it: validation (JSON Schema's `integer` includes integral floats) and reading agree.
#[tokio::test]
async fn integral_floats_within_bounds_are_read() {
    let manager = manager();
    let mut args = ones();
    args.insert("a_u64".to_owned(), number("1e18"));
    args.insert("a_i64".to_owned(), number("-4e18"));
    args.insert("a_u32".to_owned(), number("4294967295.0"));
    let echoed = run(&manager, "integers", Value::Object(args))
        .await
        .unwrap();
    assert_eq!(echoed["a_u64"], json!(1_000_000_000_000_000_000u64));
    assert_eq!(echoed["a_i64"], json!(-4_000_000_000_000_000_000i64));
    assert_eq!(echoed["a_u32"], json!(4294967295u32));
}

/// The bounds survive rendering: every provider renders the tools, OpenAI's strict mode keeps
/// `minimum`/`maximum` (it supports them), Anthropic's moves them into the description, as it
/// does every keyword its strict mode lacks.
#[test]
fn bounded_schemas_render_for_every_provider() {
    use toolsmith::Tool;
    use toolsmith::provider::{Provider, RenderOptions, StrictMode, strict_schema};

    let manager = manager();
    let declarations = manager.all_declarations();
    for provider in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Text,
    ] {
        for strict in [StrictMode::Never, StrictMode::Always] {
            let options = RenderOptions { strict };
            let strict_supported = !matches!(provider, Provider::Gemini | Provider::Text);
            if strict == StrictMode::Always && !strict_supported {
                continue;
            }
            let rendered = provider
                .render_tools(&declarations, &options)
                .unwrap_or_else(|err| panic!("{provider:?} {strict:?}: {err}"));
            assert!(
                rendered.not_strict.is_empty(),
                "{provider:?} {strict:?}: {:?}",
                rendered.not_strict
            );
        }
    }
    let Tool::SingleCommand(definition) = Integers.definition() else {
        panic!("a single command")
    };
    let schema = definition.arguments.schema();
    let openai = strict_schema(Provider::OpenAiChat, "integers", schema).unwrap();
    assert_eq!(openai["properties"]["a_u64"]["maximum"], json!(u64::MAX));
    assert_eq!(openai["properties"]["a_i64"]["minimum"], json!(i64::MIN));
    assert_eq!(openai["properties"]["nz_u32"]["minimum"], json!(1));
    let anthropic = strict_schema(Provider::Anthropic, "integers", schema).unwrap();
    let description = anthropic["properties"]["a_u64"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(
        description.contains("maximum: 18446744073709551615"),
        "{anthropic:#}"
    );
}
