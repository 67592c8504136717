#!/usr/bin/env bash
# Instructions of one bench crate's rebuild, for comparing compile cost on a loaded machine
# (wall clock is not comparable there; instruction counts repeat to about 0.01 %). Runs
# rustc under `valgrind --tool=cachegrind --cache-sim=no --trace-children=yes` (so a process
# the macros start, such as `cargo`, is counted too) for the crates `run.sh` generates, and
# sums the `I refs` of every process.
#
# Usage: benches/compile_cost/count_instructions.sh CRATE [MODE]
#   CRATE  plain_fns, with_macro or daimon_tools (run `run.sh 200 1` once first: it writes them)
#   MODE   incremental (default: `touch` + `cargo build`, as run.sh's incremental mode) or full
# Run it twice: the first build after a change to the tree rebuilds more than a touch does;
# the second is the figure. Uses its own target directory, target/compile-cost/target-count.
#
# A second line counts cargo itself in the same build (its own process only, run under
# cachegrind too): loading the workspace, checking the fingerprints of every unit of the
# crate's dependency graph, starting rustc and reading its messages. The wall clock of
# `run.sh` includes that work and the first line does not; it grows with the dependency graph
# (toolsmith's default features against the daimon crate's `default-features = false`), not
# with the macro's output.
set -euo pipefail

# As RUSTC_WRAPPER: rustc under cachegrind for the bench crates, as it is for the rest.
if [ "${COUNT_INSTRUCTIONS_WRAPPER:-}" = 1 ]; then
    rustc="$1"
    shift
    crate=""
    previous=""
    for arg in "$@"; do
        [ "$previous" = "--crate-name" ] && crate="$arg"
        previous="$arg"
    done
    case "$crate" in
    plain_fns | with_macro | daimon_tools)
        exec valgrind --tool=cachegrind --cache-sim=no --trace-children=yes \
            --cachegrind-out-file=/dev/null --log-file="$COUNT_LOG_DIR/$crate-%p.log" "$rustc" "$@"
        ;;
    *) exec "$rustc" "$@" ;;
    esac
fi

CRATE="${1:?crate: plain_fns, with_macro or daimon_tools}"
MODE="${2:-incremental}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$ROOT/target/compile-cost"
[ -d "$WORK/$CRATE" ] || { echo "run benches/compile_cost/run.sh 200 1 first" >&2; exit 2; }
LOGS="$(mktemp -d)"
trap 'rm -rf "$LOGS"' EXIT
case "$MODE" in
incremental) export CARGO_INCREMENTAL=1 ;;
full) export CARGO_INCREMENTAL=0 ;;
*) echo "mode: incremental or full" >&2; exit 2 ;;
esac
# `cargo` on the PATH is often rustup's proxy: count the toolchain's own binary.
CARGO_BIN="$(rustup which cargo 2>/dev/null || command -v cargo)"
CARGO_LOGS="$(mktemp -d)"
trap 'rm -rf "$LOGS" "$CARGO_LOGS"' EXIT
touch "$WORK/$CRATE/src/lib.rs"
(cd "$WORK" && COUNT_INSTRUCTIONS_WRAPPER=1 COUNT_LOG_DIR="$LOGS" RUSTC_WRAPPER="$ROOT/benches/compile_cost/count_instructions.sh" \
    CARGO_TARGET_DIR="$WORK/target-count" valgrind --tool=cachegrind --cache-sim=no \
    --cachegrind-out-file=/dev/null --log-file="$CARGO_LOGS/cargo-%p.log" "$CARGO_BIN" build -q -p "$CRATE")
total=0
processes=0
for log in "$LOGS"/*.log; do
    count=$(awk '/I *refs:/ {gsub(",", "", $4); print $4}' "$log")
    [ -n "$count" ] && total=$((total + count)) && processes=$((processes + 1))
done
echo "$CRATE ($MODE): $total instructions in $processes process(es)"
cargo_total=$(awk '/I *refs:/ {gsub(",", "", $4); print $4}' "$CARGO_LOGS"/cargo-*.log)
echo "cargo itself, same build: $cargo_total instructions"
