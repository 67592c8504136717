//! How generated code reads its arguments: one pass over the arguments sent finds each
//! parameter's value ([`slots`]: at its place when the arguments come in the parameters'
//! order, as models mostly send them, else by name); each parameter is then read by a
//! method generic only over its type ([`Misreads::required`], [`Misreads::defaulted`]), so
//! that every tool taking an `f64` shares one copy of reading it, and the error to report
//! stays in [`Misreads`]. What is left in each tool is a table of names, a call per parameter
//! and a `match` on the values: a few lines of code per tool instead of a loop and a reader
//! per parameter (their compile time was most of the macro's cost).
//!
//! The error reported is the one a single pass in the order sent would meet first: a value
//! that does not read, the earliest sent first; then a missing argument, in the order of the
//! parameters.
//!
//! Not part of the public API: the macro's generated code is its only user.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::manager::suggestion::missing_argument_hint;
use crate::tool::names::same_name;
use crate::{COMMAND_ARGUMENT, ToolArgs, ToolError, lenient};

/// Where one parameter's argument is in a call: its place among the arguments sent and its
/// value, or nothing when it was not sent (or sent as `null`).
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    /// The argument's place in the order sent (among all arguments sent, `null`s
    /// included); when absent, `ABSENT_FROM` plus the parameter's place among those read,
    /// so that of two missing parameters the first declared is reported whatever order the
    /// generated code reads them in.
    position: usize,
    /// The argument's value; `None` when absent.
    value: Option<&'a Value>,
}

/// Where the positions of absent arguments start: after any argument's place (no call
/// sends half the address space of arguments).
const ABSENT_FROM: usize = usize::MAX / 2;

impl Slot<'_> {
    /// No argument: not sent, or sent as `null`.
    pub const ABSENT: Self = Slot {
        position: usize::MAX,
        value: None,
    };
}

/// The argument of each name in `names`, found in one pass over the arguments sent, in
/// `names`' order.
///
/// Arguments sent in the order of `names` (the schema's, which models mostly follow) are
/// taken each at its parameter's place, one comparison each; from the first one out of
/// place, every argument is looked up by name (`fill_slots`).
#[inline]
pub fn slots<'a, const N: usize>(args: &ToolArgs<'a>, names: &[&str; N]) -> [Slot<'a>; N] {
    let mut slots = [Slot::ABSENT; N];
    for (index, slot) in slots.iter_mut().enumerate() {
        slot.position = ABSENT_FROM + index;
    }
    let mut sent = args.arguments().as_map().iter();
    for (index, wanted) in names.iter().enumerate() {
        match sent.next() {
            // The rest were not sent.
            None => break,
            Some((name, value)) if same_name(name, wanted) => {
                if !value.is_null() {
                    slots[index] = Slot {
                        position: index,
                        value: Some(value),
                    };
                }
            }
            Some(_) => {
                fill_slots(args, names, &mut slots);
                break;
            }
        }
    }
    // Arguments beyond the first `N`, when all `N` came in order, are none of `names` (a
    // name is sent once at most): they are not read.
    slots
}

/// [`slots`] by name, for arguments not sent in `names`' order; without the array's length
/// in its type, one copy for every tool. Each slot's position is its argument's place among
/// those sent (`null`s included), as in [`slots`].
#[inline(never)]
fn fill_slots<'a>(args: &ToolArgs<'a>, names: &[&str], slots: &mut [Slot<'a>]) {
    for (position, (name, value)) in args.arguments().as_map().iter().enumerate() {
        if value.is_null() {
            continue;
        }
        if let Some(index) = names.iter().position(|wanted| same_name(wanted, name)) {
            slots[index] = Slot {
                position,
                value: Some(value),
            };
        }
    }
}

/// The error to report of a call's parameters, gathered while they are read: the first one a
/// pass over the arguments in the order sent would meet (a value that does not read, the
/// earliest sent first), else the first parameter missing.
///
/// The generated code reads every parameter through it and keeps only the values: the errors
/// stay here, so that the code of each tool holds no error to drop.
///
/// It holds no error either, only where to make it again (a `Misread`): `Copy`, with no drop
/// glue, so that a tool's code has no cleanup path dropping it should a read unwind (a
/// landing pad in every tool).
#[derive(Debug, Default, Clone, Copy)]
pub struct Misreads {
    /// The error to report so far, and the place of its argument in the order sent.
    first: Option<(usize, Misread)>,
}

/// One parameter that could not be read.
#[derive(Debug, Clone, Copy)]
enum Misread {
    /// The value sent as `name` (at the place kept beside it) did not read: `error` reads it
    /// again for the error, which is made only when it is reported.
    Unreadable {
        name: &'static str,
        error: ReadError,
    },
    /// The required parameter of this name was not sent: its error, which may name an
    /// argument sent under a close name, is written once all the names are known
    /// ([`Misreads::into_error`]).
    Missing(&'static str),
}

/// The error of reading the argument `name`, sent as the value given, as one type: the
/// [`unreadable`] of that type.
type ReadError = fn(&ToolArgs<'_>, &str, &Value) -> ToolError;

impl Misreads {
    /// No error yet.
    #[inline]
    pub fn new() -> Self {
        Self { first: None }
    }

    /// The parameter `name` read from its slot: leniently when sent; when absent, `T` read
    /// from `null` (`None` for an `Option`), and otherwise an error saying it is missing.
    /// `None` when it could not be read (the error is kept here). `name` is a literal of the
    /// generated code, kept for a missing parameter's error.
    // Always inlined where optimised (a call per parameter, left out of line by LLVM, cost
    // ~25 instructions a call), never in debug builds, where every tool would carry a copy
    // per parameter (the largest function of a tool).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn required<T: DeserializeOwned>(
        &mut self,
        args: &ToolArgs<'_>,
        name: &'static str,
        slot: Slot<'_>,
    ) -> Option<T> {
        let Some(value) = slot.value else {
            let absent = absent_value();
            if absent.is_none() {
                self.record(slot.position, Misread::Missing(name));
            }
            return absent;
        };
        match args.read_field(name, value) {
            Ok(value) => Some(value),
            Err(_) => {
                self.record_unreadable::<T>(slot.position, name);
                None
            }
        }
    }

    /// The parameter `name` read from its slot: `Some(None)` when absent, for the caller to
    /// put the parameter's default in its place; `None` when it could not be read (the
    /// error is kept here).
    // Inlined as `required` is.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn defaulted<T: DeserializeOwned>(
        &mut self,
        args: &ToolArgs<'_>,
        name: &'static str,
        slot: Slot<'_>,
    ) -> Option<Option<T>> {
        let Some(value) = slot.value else {
            return Some(None);
        };
        match args.read_field(name, value) {
            Ok(value) => Some(Some(value)),
            Err(_) => {
                self.record_unreadable::<T>(slot.position, name);
                None
            }
        }
    }

    /// Records that the value sent as `name`, at `position`, did not read as a `T`.
    #[inline]
    fn record_unreadable<T: DeserializeOwned>(&mut self, position: usize, name: &'static str) {
        let error: ReadError = unreadable::<T>;
        self.record(position, Misread::Unreadable { name, error });
    }

    /// Keeps `error` when its argument was sent before the one of the error kept so far. A
    /// missing parameter's position is after every argument sent and in the parameters'
    /// order ([`Slot`]): of two, the first declared is reported.
    fn record(&mut self, position: usize, error: Misread) {
        if self
            .first
            .as_ref()
            .is_none_or(|(first, _)| position < *first)
        {
            self.first = Some((position, error));
        }
    }

    /// The error to report, `names` being every parameter's (or field's) name: a missing
    /// parameter's error names the arguments sent under an unknown name close to it. With
    /// none kept (generated code does not ask then), an error saying the arguments could not
    /// be read rather than a panic.
    pub fn into_error(self, args: &ToolArgs<'_>, names: &[&str]) -> ToolError {
        match self.first {
            // The arguments are those read, in the same order: the value is still at its place.
            Some((position, Misread::Unreadable { name, error })) => {
                match args.arguments().as_map().values().nth(position) {
                    Some(value) => error(args, name, value),
                    None => unreadable_argument(args, name),
                }
            }
            Some((_, Misread::Missing(name))) => missing_error(args, name, names),
            None => ToolError::invalid_arguments(args.tool(), "the arguments could not be read"),
        }
    }
}

/// The error of reading `value`, sent as `name`, as a `T`: the one [`ToolArgs::read_field`]
/// gave when it was first read (reading is deterministic), made again only when it is
/// reported. Should the value read this time, an error saying it could not be read rather
/// than a panic.
#[inline(never)]
#[cold]
fn unreadable<T: DeserializeOwned>(args: &ToolArgs<'_>, name: &str, value: &Value) -> ToolError {
    match args.read_field::<T>(name, value) {
        Err(error) => error,
        Ok(_) => unreadable_argument(args, name),
    }
}

/// The error of the argument `name` when its own error cannot be made again.
#[cold]
fn unreadable_argument(args: &ToolArgs<'_>, name: &str) -> ToolError {
    ToolError::invalid_arguments(
        args.tool(),
        format!("the argument '{name}' could not be read"),
    )
}

/// `T` read from `null`: `None` for an `Option` (or another type with a value for `null`),
/// and no value for a type that must be sent.
#[inline]
fn absent_value<T: DeserializeOwned>() -> Option<T> {
    lenient::scalar_from_value(&Value::Null).ok()
}

/// The error of the required parameter `missing`, not sent, with a hint when an argument
/// was sent under a name close to it that is none of `names` (`query_text` for `queryText`).
/// `command`, with which a command group's call picks its command, is never one of those.
#[inline(never)]
#[cold]
fn missing_error(args: &ToolArgs<'_>, missing: &str, names: &[&str]) -> ToolError {
    let unknown = args
        .arguments()
        .as_map()
        .keys()
        .map(String::as_str)
        .filter(|sent| *sent != COMMAND_ARGUMENT && !names.iter().any(|name| name == sent));
    let hint = missing_argument_hint(missing, unknown);
    ToolError::invalid_arguments(
        args.tool(),
        format!("missing required argument '{missing}'{hint}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolArguments;
    use proptest::prelude::*;
    use serde_json::json;

    /// What generated code for `fn f(a: u8, b: u8, c: Option<u8>)` does.
    fn read(arguments: serde_json::Value) -> Result<(u8, u8, Option<u8>), String> {
        let arguments = ToolArguments::try_from(arguments).unwrap();
        let args = ToolArgs::new("f", &arguments);
        let [a, b, c] = slots(&args, &["a", "b", "c"]);
        let mut misreads = Misreads::new();
        match (
            misreads.required::<u8>(&args, "a", a),
            misreads.required::<u8>(&args, "b", b),
            misreads.required::<Option<u8>>(&args, "c", c),
        ) {
            (Some(a), Some(b), Some(c)) => Ok((a, b, c)),
            _ => Err(misreads.into_error(&args, &["a", "b", "c"]).to_string()),
        }
    }

    /// [`read`] with the parameters read last to first, as generated code may read them.
    fn read_backwards(arguments: serde_json::Value) -> Result<(u8, u8, Option<u8>), String> {
        let arguments = ToolArguments::try_from(arguments).unwrap();
        let args = ToolArgs::new("f", &arguments);
        let [a, b, c] = slots(&args, &["a", "b", "c"]);
        let mut misreads = Misreads::new();
        match (
            misreads.required::<Option<u8>>(&args, "c", c),
            misreads.required::<u8>(&args, "b", b),
            misreads.required::<u8>(&args, "a", a),
        ) {
            (Some(c), Some(b), Some(a)) => Ok((a, b, c)),
            _ => Err(misreads.into_error(&args, &["a", "b", "c"]).to_string()),
        }
    }

    #[test]
    fn the_error_reported_is_the_same_whatever_order_the_parameters_are_read_in() {
        for arguments in [
            json!({}),
            json!({"c": 1}),
            json!({"c": "x"}),
            json!({"b": "y", "c": "x"}),
            json!({"c": "x", "b": "y"}),
            json!({"a": 1, "b": null}),
            json!({"b": 1, "a": "z"}),
            json!({"a": 1, "b": 2, "c": 3}),
        ] {
            assert_eq!(read_backwards(arguments.clone()), read(arguments));
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
        // In the parameters' order (each found at its place), a `null` before it.
        let err = read(json!({"a": 1, "b": null, "c": "x"})).unwrap_err();
        assert!(err.contains("/c: invalid type"), "{err}");
        let err = read(json!({"c": 1})).unwrap_err();
        assert!(err.ends_with("missing required argument 'a'"), "{err}");
        let err = read(json!({"a": 1, "b": null})).unwrap_err();
        assert!(err.ends_with("missing required argument 'b'"), "{err}");
    }

    /// What generated code for `fn f(<first>: String, <second>: Option<u8>)` reports.
    fn misread(names: [&'static str; 2], arguments: serde_json::Value) -> String {
        let arguments = ToolArguments::try_from(arguments).unwrap();
        let args = ToolArgs::new("f", &arguments);
        let [first, second] = slots(&args, &names);
        let mut misreads = Misreads::new();
        let read = (
            misreads.required::<String>(&args, names[0], first),
            misreads.required::<Option<u8>>(&args, names[1], second),
        );
        assert!(!matches!(read, (Some(_), Some(_))), "{read:?}");
        misreads.into_error(&args, &names).to_string()
    }

    #[test]
    fn a_missing_parameter_names_an_unknown_argument_sent_under_a_close_name() {
        let query = ["queryText", "limit"];
        assert_eq!(
            misread(query, json!({"limit": 2, "query_text": "q"})),
            "Invalid arguments for tool 'f': missing required argument 'queryText' \
             (for 'query_text', did you mean 'queryText'?)"
        );
        assert_eq!(
            misread(query, json!({"query_text": "q", "querytext": "q"})),
            "Invalid arguments for tool 'f': missing required argument 'queryText' \
             (for 'querytext' or 'query_text', did you mean 'queryText'?)"
        );
        let plain = |name: &str| {
            format!("Invalid arguments for tool 'f': missing required argument '{name}'")
        };
        // Nothing sent close to it; a close name that is a parameter's; `command`, which
        // picks a command group's command.
        assert_eq!(
            misread(query, json!({"limit": 2, "weather": "q"})),
            plain("queryText")
        );
        assert_eq!(misread(query, json!({})), plain("queryText"));
        assert_eq!(
            misread(["name", "names"], json!({"names": 1})),
            plain("name")
        );
        assert_eq!(
            misread(["commandText", "limit"], json!({"command": "x"})),
            plain("commandText")
        );
        // A value that does not read is reported as before, whatever else was sent.
        assert_eq!(
            misread(query, json!({"query_text": 1, "limit": "many"})),
            "Invalid arguments for tool 'f': /limit: invalid type: string \"many\", expected u8"
        );
    }

    /// Each name's argument, found plainly: its place among those sent and its value, when
    /// sent and not `null` (else a place after every argument's, in the names' order).
    fn searched<'a>(
        arguments: &'a ToolArguments,
        names: &[&str],
    ) -> Vec<(usize, Option<&'a Value>)> {
        names
            .iter()
            .enumerate()
            .map(|(index, wanted)| {
                arguments
                    .iter()
                    .enumerate()
                    .find(|(_, (name, value))| name == wanted && !value.is_null())
                    .map_or((ABSENT_FROM + index, None), |(position, (_, value))| {
                        (position, Some(value))
                    })
            })
            .collect()
    }

    proptest! {
        /// Arguments in the parameters' order, out of it, with `null`s, missing or unknown
        /// ones: every slot is what a plain search by name finds.
        #[test]
        fn slots_are_what_a_search_by_name_finds(
            sent in prop::collection::vec(
                (
                    prop::sample::select(vec!["a", "b", "c", "d", "bb", "other"]),
                    prop_oneof![Just(Value::Null), (0u8..3).prop_map(Value::from)],
                ),
                0..7,
            ),
            in_order in any::<bool>(),
        ) {
            let mut sent = sent;
            if in_order {
                // As models mostly send them: the parameters' order, maybe fewer, maybe more.
                let rank = |name: &str| ["a", "b", "c", "d"].iter().position(|n| *n == name).unwrap_or(9);
                sent.sort_by_key(|(name, _)| rank(name));
            }
            let arguments = ToolArguments::from_iter(sent.iter().map(|(k, v)| (*k, v.clone())));
            let args = ToolArgs::new("f", &arguments);
            let names = ["a", "b", "c", "d"];
            let found: Vec<(usize, Option<&Value>)> = slots(&args, &names)
                .iter()
                .map(|slot| (slot.position, slot.value))
                .collect();
            prop_assert_eq!(found, searched(&arguments, &names));
        }
    }

    #[test]
    fn misreads_hold_nothing_to_drop() {
        // A tool's code keeps one while it reads: with drop glue, every tool has a cleanup
        // path for it.
        assert!(!std::mem::needs_drop::<Misreads>());
    }

    #[test]
    fn defaulted_is_none_when_absent() {
        let arguments = ToolArguments::try_from(json!({"n": "4", "m": null})).unwrap();
        let args = ToolArgs::new("f", &arguments);
        let [n, m] = slots(&args, &["n", "m"]);
        let mut misreads = Misreads::new();
        assert_eq!(misreads.defaulted::<u8>(&args, "n", n), Some(Some(4)));
        assert_eq!(misreads.defaulted::<u8>(&args, "m", m), Some(None));
        let message = misreads.into_error(&args, &["n", "m"]).to_string();
        assert!(message.contains("could not be read"), "{message}");
    }
}
