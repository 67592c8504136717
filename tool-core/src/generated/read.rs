//! How generated code reads its arguments: one pass over the arguments sent, here and not
//! generic, finds each parameter's value by name ([`slots`]); each parameter is then read by a
//! function generic only over its type ([`required`], [`defaulted`]), so that every tool
//! taking an `f64` shares one copy of reading it. What is left in each tool is a table of
//! names and a `match` on the results: a few lines of code per tool instead of a loop and a
//! reader per parameter (its compile time was most of the macro's cost).
//!
//! The error reported is the one a single pass in the order sent would meet first: a value
//! that does not read, the earliest sent first; then a missing argument, in the order of the
//! parameters.
//!
//! Not part of the public API: the macro's generated code is its only user.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{ToolArgs, ToolError};

/// Where one parameter's argument is in a call: its place among the arguments sent and its
/// value, or nothing when it was not sent (or sent as `null`).
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    /// The argument's place in the order sent; `usize::MAX` when absent.
    position: usize,
    value: Option<&'a Value>,
}

impl Slot<'_> {
    /// No argument: not sent, or sent as `null`.
    pub const ABSENT: Self = Slot {
        position: usize::MAX,
        value: None,
    };
}

/// A parameter that could not be read, and where its argument was sent (to report the one a
/// pass in the order sent would meet first).
#[derive(Debug)]
pub struct Misread {
    position: usize,
    error: ToolError,
}

/// The argument of each name in `names`, found in one pass over the arguments sent, in
/// `names`' order.
#[inline]
pub fn slots<'a, const N: usize>(args: &ToolArgs<'a>, names: &[&str; N]) -> [Slot<'a>; N] {
    let mut slots = [Slot::ABSENT; N];
    fill_slots(args, names, &mut slots);
    slots
}

/// [`slots`] without the array's length in its type: one copy for every tool.
fn fill_slots<'a>(args: &ToolArgs<'a>, names: &[&str], slots: &mut [Slot<'a>]) {
    for (position, (name, value)) in args.present().enumerate() {
        if let Some(index) = names.iter().position(|wanted| *wanted == name) {
            slots[index] = Slot {
                position,
                value: Some(value),
            };
        }
    }
}

/// The parameter `name` read from its slot: leniently when sent; when absent, `T` read from
/// `null` (`None` for an `Option`), and otherwise an error saying it is missing.
#[inline]
pub fn required<T: DeserializeOwned>(
    args: &ToolArgs<'_>,
    name: &str,
    slot: Slot<'_>,
) -> Result<T, Misread> {
    let read = match slot.value {
        Some(value) => args.read_field(name, value),
        None => args.absent_field(name),
    };
    read.map_err(|error| Misread {
        position: slot.position,
        error,
    })
}

/// The parameter `name` read from its slot when sent; `None` when absent, for the caller to
/// put the parameter's default in its place.
#[inline]
pub fn defaulted<T: DeserializeOwned>(
    args: &ToolArgs<'_>,
    name: &str,
    slot: Slot<'_>,
) -> Result<Option<T>, Misread> {
    match slot.value {
        Some(value) => args
            .read_field(name, value)
            .map(Some)
            .map_err(|error| Misread {
                position: slot.position,
                error,
            }),
        None => Ok(None),
    }
}

/// The error to report among the parameters' (`None` for those that read): the earliest
/// sent, else the first missing. With no error at all (generated code does not call it
/// then), an error saying so rather than a panic.
pub fn first_misread(args: &ToolArgs<'_>, misreads: &mut [Option<Misread>]) -> ToolError {
    let mut first: Option<Misread> = None;
    for misread in misreads.iter_mut().filter_map(Option::take) {
        // Strictly earlier only: of two missing parameters, the first declared is reported.
        if first
            .as_ref()
            .is_none_or(|found| misread.position < found.position)
        {
            first = Some(misread);
        }
    }
    match first {
        Some(misread) => misread.error,
        None => ToolError::invalid_arguments(args.tool(), "the arguments could not be read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolArguments;
    use serde_json::json;

    /// What generated code for `fn f(a: u8, b: u8, c: Option<u8>)` does.
    fn read(arguments: serde_json::Value) -> Result<(u8, u8, Option<u8>), String> {
        let arguments = ToolArguments::try_from(arguments).unwrap();
        let args = ToolArgs::new("f", &arguments);
        let [a, b, c] = slots(&args, &["a", "b", "c"]);
        match (
            required::<u8>(&args, "a", a),
            required::<u8>(&args, "b", b),
            required::<Option<u8>>(&args, "c", c),
        ) {
            (Ok(a), Ok(b), Ok(c)) => Ok((a, b, c)),
            (a, b, c) => Err(first_misread(&args, &mut [a.err(), b.err(), c.err()]).to_string()),
        }
    }

    #[test]
    fn reads_each_slot_by_name() {
        assert_eq!(read(json!({"b": 2, "a": "1"})), Ok((1, 2, None)));
        assert_eq!(read(json!({"a": 1, "b": 2, "c": 3})), Ok((1, 2, Some(3))));
        assert_eq!(read(json!({"a": 1, "b": 2, "c": null})), Ok((1, 2, None)));
    }

    #[test]
    fn reports_the_earliest_sent_misread_then_the_first_missing() {
        let err = read(json!({"c": "x", "b": "y"})).unwrap_err();
        assert!(err.contains("/c:"), "{err}");
        let err = read(json!({"b": "y", "c": "x"})).unwrap_err();
        assert!(err.contains("/b:"), "{err}");
        let err = read(json!({"c": 1})).unwrap_err();
        assert!(err.ends_with("missing required argument 'a'"), "{err}");
        let err = read(json!({"a": 1, "b": null})).unwrap_err();
        assert!(err.ends_with("missing required argument 'b'"), "{err}");
    }

    #[test]
    fn defaulted_is_none_when_absent() {
        let arguments = ToolArguments::try_from(json!({"n": "4", "m": null})).unwrap();
        let args = ToolArgs::new("f", &arguments);
        let [n, m] = slots(&args, &["n", "m"]);
        assert_eq!(defaulted::<u8>(&args, "n", n).unwrap(), Some(4));
        assert_eq!(defaulted::<u8>(&args, "m", m).unwrap(), None);
        assert!(
            first_misread(&args, &mut [None])
                .to_string()
                .contains("could not be read")
        );
    }
}
