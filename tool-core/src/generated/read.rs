//! How generated code reads its arguments: one pass over the arguments sent finds each
//! parameter's value ([`slots`]: at its place when the arguments come in the parameters'
//! order, as models mostly send them, else by name); each parameter is then read by a
//! function generic only over its kind and type ([`ReadField::read`] of [`Required`] or
//! [`Defaulted`]), so that every tool taking an `f64` shares one copy of reading it, and the
//! error to report stays in [`Misreads`]. A tool of up to twelve parameters reads them all
//! with one call of [`ReadFields::read`], generic over their kinds: what is left in the tool
//! is a table of names and places and a `match` on the result. A tool of more reads them in
//! place: a table of names, a call per parameter and a `match` on the values.
//!
//! The error reported is the one a single pass in the order sent would meet first: a value
//! that does not read, the earliest sent first; then a missing argument, in the order of the
//! parameters.
//!
//! Not part of the public API: the macro's generated code is its only user.

use std::marker::PhantomData;

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
    /// included); when absent, `ABSENT_FROM` plus the parameter's place among the names
    /// (the parameters' order), so that of two missing parameters the first declared is
    /// reported whatever order the generated code reads them in.
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
// Always inlined where optimised: [`ReadFields`] hands it the names it builds from a tool's
// table, which fold to the constants they are only once it is inlined (a call of a tool
// reading two numbers: 2,412 instructions inlined, 2,462 not).
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
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

/// How one parameter (or field) is read: [`Required`] or [`Defaulted`], over its type. The
/// generated code names the parameters' kinds as a tuple ([`ReadFields`]).
pub trait ReadField {
    /// What the read gives: the type read, or an `Option` of it for a defaulted one (`None`
    /// when absent, for the caller to put the default in its place).
    type Value;

    /// The value read from `slot` (see [`Required`]'s and [`Defaulted`]'s); `None` when it
    /// could not be read (the error is kept in `misreads`).
    fn read(
        misreads: &mut Misreads,
        args: &ToolArgs<'_>,
        name: &'static str,
        slot: Slot<'_>,
    ) -> Option<Self::Value>;
}

/// A parameter that must be sent (unless its type reads from `null`, as an `Option` does):
/// absent, `T` read from `null`. A marker of types only, never made.
#[allow(missing_debug_implementations)]
pub struct Required<T>(PhantomData<fn() -> T>);

/// A parameter with a default: absent, `None`, for the caller to put the default in its
/// place. A marker of types only, never made.
#[allow(missing_debug_implementations)]
pub struct Defaulted<T>(PhantomData<fn() -> T>);

impl<T: DeserializeOwned> ReadField for Required<T> {
    type Value = T;

    /// The parameter `name` read from its slot: leniently when sent; when absent, `T` read
    /// from `null` (`None` for an `Option`), and otherwise an error saying it is missing.
    /// `None` when it could not be read (the error is kept in `misreads`). `name` is a
    /// literal of the generated code, kept for a missing parameter's error.
    // Always inlined where optimised (a call per parameter, left out of line by LLVM, cost
    // ~25 instructions a call), never in debug builds, where every tool would carry a copy
    // per parameter (the largest function of a tool).
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn read(
        misreads: &mut Misreads,
        args: &ToolArgs<'_>,
        name: &'static str,
        slot: Slot<'_>,
    ) -> Option<T> {
        let Some(value) = slot.value else {
            let absent = absent_value();
            if absent.is_none() {
                misreads.record(slot.position, Misread::Missing(name));
            }
            return absent;
        };
        match args.read_field(name, value) {
            Ok(value) => Some(value),
            Err(_) => {
                misreads.record_unreadable::<T>(slot.position, name);
                None
            }
        }
    }
}

impl<T: DeserializeOwned> ReadField for Defaulted<T> {
    type Value = Option<T>;

    /// The parameter `name` read from its slot: `Some(None)` when absent, for the caller to
    /// put the parameter's default in its place; `None` when it could not be read (the
    /// error is kept in `misreads`).
    // Inlined as `Required`'s is.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    fn read(
        misreads: &mut Misreads,
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
                misreads.record_unreadable::<T>(slot.position, name);
                None
            }
        }
    }
}

/// A tuple of parameter kinds ([`ReadField`]s), read together: what the generated code of a
/// tool or a `ToolArgs` type calls to read its arguments, one call for them all.
///
/// Generic over the parameters' types alone, so that the reading is checked and borrow
/// checked once, here, rather than in every tool's generated code, and tools with the same
/// parameter types share one copy of its machine code. Implemented for one to twelve
/// fields; the macro reads more in place (`READ_TOGETHER_AT_MOST` in `toolsmith-macros`).
///
/// The tuple lists the kinds in the order they are read, which the macro picks: values
/// needing no drop first, so that a value read is rarely alive while the next is read (each
/// such value costs every copy of this function a cleanup path dropping it). `fields` gives
/// each kind's name and its parameter's place, in the tuple's order: the arguments are
/// looked for in the parameters' order (the order models mostly send them in, which
/// [`slots`] takes fast), and the error reported does not depend on the order read
/// ([`Misreads`]). One table a tool, not a table of names and one of places: each is a
/// constant of every tool.
pub trait ReadFields {
    /// Each kind's name and its parameter's place: an array of as many pairs.
    type Fields: ?Sized;
    /// The values read, in the tuple's order: a tuple of each kind's `ReadField::Value`.
    type Values;

    /// Every parameter read from `args`, or the error to report (see [`Misreads`]).
    fn read(args: &ToolArgs<'_>, fields: &Self::Fields) -> Result<Self::Values, ToolError>;
}

/// The parameters' names in their own order, from `fields` (name and place of each).
#[cfg_attr(not(debug_assertions), inline(always))]
fn declared_names<const N: usize>(fields: &[(&'static str, usize); N]) -> [&'static str; N] {
    let mut names = [""; N];
    for &(name, place) in fields {
        names[place] = name;
    }
    names
}

/// The slots of `fields` ([`slots`] of the names in the parameters' order, so that an absent
/// one is numbered by its parameter's place), in the order of `fields`. Generic over the
/// count alone: one copy for all tools with as many parameters.
#[cfg_attr(not(debug_assertions), inline(always))]
fn slots_of<'a, const N: usize>(
    args: &ToolArgs<'a>,
    fields: &[(&'static str, usize); N],
) -> [Slot<'a>; N] {
    let found = slots(args, &declared_names(fields));
    let mut slots = [Slot::ABSENT; N];
    for (slot, &(_, place)) in slots.iter_mut().zip(fields) {
        *slot = found[place];
    }
    slots
}

/// [`Misreads::into_error`] for the parameters of `fields`.
#[inline(never)]
#[cold]
fn misread<const N: usize>(
    misreads: Misreads,
    args: &ToolArgs<'_>,
    fields: &[(&'static str, usize); N],
) -> ToolError {
    misreads.into_error(args, &declared_names(fields))
}

/// [`ReadFields`] for a tuple of kinds `$kind`, with `$value` the local of each value read
/// and `$index` its place.
macro_rules! read_fields {
    ($count:literal: $($kind:ident $value:ident $index:tt),+) => {
        impl<$($kind: ReadField),+> ReadFields for ($($kind,)+) {
            type Fields = [(&'static str, usize); $count];
            type Values = ($($kind::Value,)+);

            #[cfg_attr(not(debug_assertions), inline(always))]
            #[cfg_attr(debug_assertions, inline)]
            fn read(
                args: &ToolArgs<'_>,
                fields: &[(&'static str, usize); $count],
            ) -> Result<Self::Values, ToolError> {
                let slots = slots_of(args, fields);
                let mut misreads = Misreads::new();
                match ($($kind::read(&mut misreads, args, fields[$index].0, slots[$index]),)+) {
                    ($(Some($value),)+) => Ok(($($value,)+)),
                    unread => {
                        // The values read are dropped before the error is made.
                        drop(unread);
                        Err(misread(misreads, args, fields))
                    }
                }
            }
        }
    };
}

read_fields!(1: A a 0);
read_fields!(2: A a 0, B b 1);
read_fields!(3: A a 0, B b 1, C c 2);
read_fields!(4: A a 0, B b 1, C c 2, D d 3);
read_fields!(5: A a 0, B b 1, C c 2, D d 3, E e 4);
read_fields!(6: A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
read_fields!(7: A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
read_fields!(8: A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);
read_fields!(9: A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8);
read_fields!(10: A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9);
read_fields!(11: A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10);
read_fields!(12: A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11);

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
            <Required<u8> as ReadField>::read(&mut misreads, &args, "a", a),
            <Required<u8> as ReadField>::read(&mut misreads, &args, "b", b),
            <Required<Option<u8>> as ReadField>::read(&mut misreads, &args, "c", c),
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
            <Required<Option<u8>> as ReadField>::read(&mut misreads, &args, "c", c),
            <Required<u8> as ReadField>::read(&mut misreads, &args, "b", b),
            <Required<u8> as ReadField>::read(&mut misreads, &args, "a", a),
        ) {
            (Some(c), Some(b), Some(a)) => Ok((a, b, c)),
            _ => Err(misreads.into_error(&args, &["a", "b", "c"]).to_string()),
        }
    }

    /// Arguments for `fn f(a: u8, b: u8, c: Option<u8>)`: misreads, missing ones, both, none,
    /// in and out of the parameters' order.
    fn sent_arguments() -> [serde_json::Value; 11] {
        [
            json!({}),
            json!({"c": 1}),
            json!({"c": "x"}),
            json!({"b": "y", "c": "x"}),
            json!({"c": "x", "b": "y"}),
            json!({"a": 1, "b": null}),
            json!({"b": 1, "a": "z"}),
            json!({"a": 1, "b": 2, "c": 3}),
            json!({"b": 2, "a": "1"}),
            json!({"c": 3, "b": 2, "a": 1}),
            json!({"a": 1, "bb": 2}),
        ]
    }

    #[test]
    fn the_error_reported_is_the_same_whatever_order_the_parameters_are_read_in() {
        for arguments in sent_arguments() {
            assert_eq!(read_backwards(arguments.clone()), read(arguments));
        }
    }

    /// [`read`] through [`ReadFields`], the parameters read in `order` (a permutation of
    /// `[0, 1, 2]`, as the macro may pick).
    fn read_together(
        arguments: serde_json::Value,
        order: [usize; 3],
    ) -> Result<(u8, u8, Option<u8>), String> {
        type Abc = (Required<u8>, Required<u8>, Required<Option<u8>>);
        type Cab = (Required<Option<u8>>, Required<u8>, Required<u8>);
        type Acb = (Required<u8>, Required<Option<u8>>, Required<u8>);
        let arguments = ToolArguments::try_from(arguments).unwrap();
        let args = ToolArgs::new("f", &arguments);
        let names = ["a", "b", "c"];
        let fields = order.map(|place| (names[place], place));
        // The kinds in the order read (`c` is the one `Option`), the values read back in the
        // parameters' order.
        let read = || -> Result<[Option<u8>; 3], ToolError> {
            let values = match order {
                [0, 1, 2] | [1, 0, 2] => {
                    let (x, y, z) = Abc::read(&args, &fields)?;
                    [Some(x), Some(y), z]
                }
                [2, 0, 1] | [2, 1, 0] => {
                    let (x, y, z) = Cab::read(&args, &fields)?;
                    [x, Some(y), Some(z)]
                }
                [0, 2, 1] | [1, 2, 0] => {
                    let (x, y, z) = Acb::read(&args, &fields)?;
                    [Some(x), y, Some(z)]
                }
                _ => unreachable!("not a permutation: {order:?}"),
            };
            let mut declared = [None; 3];
            for (value, place) in values.into_iter().zip(order) {
                declared[place] = value;
            }
            Ok(declared)
        };
        match read() {
            Ok([a, b, c]) => Ok((a.unwrap(), b.unwrap(), c)),
            Err(error) => Err(error.to_string()),
        }
    }

    const ORDERS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];

    #[test]
    fn reading_together_in_any_order_is_reading_in_place() {
        for arguments in sent_arguments() {
            for order in ORDERS {
                assert_eq!(
                    read_together(arguments.clone(), order),
                    read(arguments.clone()),
                    "{arguments} read in the order {order:?}"
                );
            }
        }
    }

    #[test]
    fn defaulted_fields_read_together_are_none_when_absent() {
        let arguments = ToolArguments::try_from(json!({"b": "x"})).unwrap();
        let args = ToolArgs::new("f", &arguments);
        let fields = [("b", 1), ("a", 0)];
        let read = <(Defaulted<String>, Defaulted<u8>) as ReadFields>::read(&args, &fields);
        assert_eq!(read.unwrap(), (Some("x".to_owned()), None));
        let arguments = ToolArguments::try_from(json!({"a": "x"})).unwrap();
        let args = ToolArgs::new("f", &arguments);
        let err = <(Defaulted<String>, Defaulted<u8>) as ReadFields>::read(&args, &fields)
            .unwrap_err()
            .to_string();
        assert!(err.contains("/a:"), "{err}");
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
            <Required<String> as ReadField>::read(&mut misreads, &args, names[0], first),
            <Required<Option<u8>> as ReadField>::read(&mut misreads, &args, names[1], second),
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
        /// Arguments sent in any order, with `null`s, misreads, missing or unknown ones, read
        /// together in any order: the values or the error of reading them in place.
        #[test]
        fn reading_together_is_reading_in_place(
            sent in proptest::collection::vec(
                (
                    prop_oneof![Just("a"), Just("b"), Just("c"), Just("d")],
                    prop_oneof![
                        Just(json!(null)),
                        (0u16..300).prop_map(|n| json!(n)),
                        Just(json!("7")),
                        Just(json!("x")),
                    ],
                ),
                0..5,
            ),
            order in proptest::sample::select(ORDERS.to_vec()),
        ) {
            let arguments: serde_json::Map<String, serde_json::Value> = sent
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value))
                .collect();
            let arguments = serde_json::Value::Object(arguments);
            prop_assert_eq!(read_together(arguments.clone(), order), read(arguments));
        }

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
        assert_eq!(
            <Defaulted<u8> as ReadField>::read(&mut misreads, &args, "n", n),
            Some(Some(4))
        );
        assert_eq!(
            <Defaulted<u8> as ReadField>::read(&mut misreads, &args, "m", m),
            Some(None)
        );
        let message = misreads.into_error(&args, &["n", "m"]).to_string();
        assert!(message.contains("could not be read"), "{message}");
    }
}
