#!/usr/bin/env bash
# Compile cost of `#[tool_fn]`: builds a crate of N `#[tool_fn]` tools and the same crate
# with N plain async fns (same signatures and bodies), and reports the build times and their
# ratio. Dependencies are built first (shared target dir), so the figures are the cost of
# compiling the one crate, which is where the macro's cost lands.
#
# Each run touches and rebuilds the plain crate, then the macro crate, one after the other,
# so that both see the same load on a shared machine; the ratio reported is the median of the
# runs' own ratios, and the times are the medians of each crate's runs.
#
# Usage: benches/compile_cost/run.sh [N] [RUNS] [MODE]
#   N     tools in each crate (default 200)
#   RUNS  paired runs (default 5)
#   MODE  incremental: CARGO_INCREMENTAL=1, `touch` + `cargo build` (the edit-build loop;
#                      macro expansion reruns, most of the rest comes from the cache)
#         full:        CARGO_INCREMENTAL=0, the whole crate compiled again (default: both)
set -euo pipefail

N="${1:-200}"
RUNS="${2:-5}"
MODES="${3:-incremental full}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$ROOT/target/compile-cost"
mkdir -p "$WORK"

# One tool: four signatures in turn, so the crate has a realistic mix of parameter types.
tool_source() {
    local i="$1" macro="$2"
    local attr=""
    [ "$macro" = 1 ] && attr="#[tool_fn(category = \"bench\")]"
    case $((i % 4)) in
    0) cat <<RS
/// Adds two numbers (tool $i).
$attr
pub async fn tool_$i(
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
) -> Result<f64, ToolError> {
    Ok(a + b + $i.0)
}
RS
    ;;
    1) cat <<RS
/// Shortens a text (tool $i).
$attr
pub async fn tool_$i(
    /// The text.
    text: String,
    /// At most this many characters.
    limit: Option<u32>,
) -> String {
    text.chars().take(limit.unwrap_or($i) as usize).collect()
}
RS
    ;;
    2) cat <<RS
/// Counts items (tool $i).
$attr
pub async fn tool_$i(
    /// The items.
    items: Vec<String>,
) -> usize {
    items.len() + $i
}
RS
    ;;
    3) cat <<RS
/// Checks a flag (tool $i).
$attr
pub async fn tool_$i(
    /// The flag.
    flag: bool,
    /// A note.
    note: Option<String>,
) -> Result<(), String> {
    if flag { Ok(()) } else { Err(note.unwrap_or_else(|| "tool $i".to_owned())) }
}
RS
    ;;
    esac
}

make_crate() {
    local name="$1" macro="$2" dir="$WORK/$1"
    mkdir -p "$dir/src"
    cat >"$dir/Cargo.toml" <<TOML
[package]
name = "$name"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
toolsmith = { path = "$ROOT" }
TOML
    {
        echo "#![allow(clippy::all, unused_doc_comments)]"
        echo "use toolsmith::{tool_fn, ToolError};"
        echo "#[allow(unused_imports)] use tool_fn as _;"
        for i in $(seq 0 $((N - 1))); do tool_source "$i" "$macro"; done
    } >"$dir/src/lib.rs"
}

cat >"$WORK/Cargo.toml" <<TOML
[workspace]
members = ["with_macro", "plain_fns"]
resolver = "3"
TOML
make_crate with_macro 1
make_crate plain_fns 0
# Doc comments on parameters are only legal where the macro removes them: strip them from the
# plain crate (comments cost nothing to compile).
sed -i '/^    \/\/\//d' "$WORK/plain_fns/src/lib.rs"

cd "$WORK"
export CARGO_TARGET_DIR="$WORK/target"

# The median of the numbers on standard input.
median() {
    sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2] + a[NR/2+1]) / 2}'
}

# Seconds to touch and rebuild `package`.
build_once() {
    local package="$1" start end
    touch "$WORK/$package/src/lib.rs"
    start=$(date +%s.%N)
    cargo build -q -p "$package"
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}'
}

for mode in $MODES; do
    case "$mode" in
    incremental) export CARGO_INCREMENTAL=1 ;;
    full) export CARGO_INCREMENTAL=0 ;;
    *) echo "unknown mode '$mode' (incremental or full)" >&2; exit 2 ;;
    esac
    echo "building dependencies and both crates once ($mode)..." >&2
    cargo build -q -p plain_fns -p with_macro
    plains=() macros=() ratios=()
    for _ in $(seq "$RUNS"); do
        p=$(build_once plain_fns)
        m=$(build_once with_macro)
        plains+=("$p") macros+=("$m")
        ratios+=("$(awk -v m="$m" -v p="$p" 'BEGIN {printf "%.3f", m / p}')")
        echo "  run: plain ${p}s, #[tool_fn] ${m}s" >&2
    done
    plain=$(printf '%s\n' "${plains[@]}" | median)
    macro=$(printf '%s\n' "${macros[@]}" | median)
    ratio=$(printf '%s\n' "${ratios[@]}" | median)
    per_tool_ms=$(awk -v m="$macro" -v p="$plain" -v n="$N" 'BEGIN {printf "%.1f", (m - p) * 1000 / n}')
    echo "tools: $N, paired runs: $RUNS (medians), profile: dev, mode: $mode (CARGO_INCREMENTAL=$CARGO_INCREMENTAL)"
    echo "plain async fns:  ${plain}s"
    echo "#[tool_fn] tools: ${macro}s"
    echo "ratio: $(printf '%.2f' "$ratio")x (median of the runs' ratios), overhead: ${per_tool_ms} ms per tool"
done
