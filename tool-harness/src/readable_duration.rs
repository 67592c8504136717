//! A time limit written for people and models: "250 ms", "1.5 s", "2 min".

use std::fmt;
use std::time::Duration;

/// Writes a [`Duration`] in the largest unit that keeps it readable, with at most three
/// decimals and none that are zero: `2 min`, `90 s`, `1.5 s`, `250 ms`, `0.5 ms`. Below a
/// millisecond it is `µs`, below a microsecond `ns`.
///
/// `Duration`'s own `Debug` (`1.5s`, `250ms`) is exact but terse; the text the model reads
/// for a timed-out call names the limit so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadableDuration(pub(crate) Duration);

const NANOS_PER_MINUTE: u128 = 60_000_000_000;

/// Units from the largest, with their length in nanoseconds; seconds and up are written in
/// seconds but for whole minutes.
const UNITS: [(&str, u128); 4] = [
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("µs", 1_000),
    ("ns", 1),
];

impl fmt::Display for ReadableDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = self.0.as_nanos();
        if nanos >= NANOS_PER_MINUTE && nanos.is_multiple_of(NANOS_PER_MINUTE) {
            return write!(f, "{} min", nanos / NANOS_PER_MINUTE);
        }
        let (unit, length) = UNITS
            .into_iter()
            .find(|&(_, length)| nanos >= length)
            .unwrap_or(("ns", 1));
        // Thousandths of the unit, rounded to the nearest (no overflow: `as_nanos` is below
        // 2^94, so this is below 2^105).
        let thousandths = (nanos * 1000 + length / 2) / length;
        let (whole, mut fraction) = (thousandths / 1000, thousandths % 1000);
        if fraction == 0 {
            return write!(f, "{whole} {unit}");
        }
        let mut digits = 3;
        while fraction.is_multiple_of(10) {
            fraction /= 10;
            digits -= 1;
        }
        write!(f, "{whole}.{fraction:0digits$} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(duration: Duration) -> String {
        ReadableDuration(duration).to_string()
    }

    #[test]
    fn each_size_is_written_in_its_unit() {
        let cases = [
            (Duration::from_secs(120), "2 min"),
            (Duration::from_secs(3600), "60 min"),
            (Duration::from_secs(90), "90 s"),
            (
                Duration::from_secs(60) + Duration::from_millis(500),
                "60.5 s",
            ),
            (Duration::from_secs(2), "2 s"),
            (Duration::from_millis(1500), "1.5 s"),
            (Duration::from_millis(1250), "1.25 s"),
            (Duration::from_millis(1001), "1.001 s"),
            (Duration::from_millis(250), "250 ms"),
            (Duration::from_micros(2500), "2.5 ms"),
            (Duration::from_millis(1), "1 ms"),
            (Duration::from_micros(500), "500 µs"),
            (Duration::from_nanos(1500), "1.5 µs"),
            (Duration::from_nanos(7), "7 ns"),
            (Duration::ZERO, "0 ns"),
        ];
        for (duration, expected) in cases {
            assert_eq!(text(duration), expected, "{duration:?}");
        }
    }

    #[test]
    fn a_fraction_is_rounded_to_three_decimals() {
        // 1.0004 s is 1 s to the millisecond; 1.9996 s is 2 s.
        assert_eq!(text(Duration::from_micros(1_000_400)), "1 s");
        assert_eq!(text(Duration::from_micros(1_999_600)), "2 s");
        assert_eq!(text(Duration::from_micros(1_234_567)), "1.235 s");
        // The longest duration there is writes without overflow (rounded up, as any).
        assert_eq!(text(Duration::MAX), "18446744073709551616 s");
    }
}
