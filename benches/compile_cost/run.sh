#!/usr/bin/env bash
# Compile cost of `#[tool_fn]`: builds a crate of N `#[tool_fn]` tools and the same crate
# with N plain async fns (same signatures and bodies), and reports the build times and their
# ratio. Dependencies are built first (shared target dir), so the figures are the cost of
# compiling the one crate, which is where the macro's cost lands.
#
# Usage: benches/compile_cost/run.sh [N] [RUNS]   (defaults: 200 tools, 3 runs each)
set -euo pipefail

N="${1:-200}"
RUNS="${2:-3}"
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
export CARGO_TARGET_DIR="$WORK/target" CARGO_INCREMENTAL=0
echo "building dependencies once..." >&2
cargo build -q -p plain_fns -p with_macro

time_build() {
    local package="$1" best="" all=()
    for _ in $(seq "$RUNS"); do
        touch "$WORK/$package/src/lib.rs"
        local start end
        start=$(date +%s.%N)
        cargo build -q -p "$package"
        end=$(date +%s.%N)
        all+=("$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}')")
    done
    # The median of the runs.
    printf '%s\n' "${all[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

plain=$(time_build plain_fns)
macro=$(time_build with_macro)
ratio=$(awk -v m="$macro" -v p="$plain" 'BEGIN {printf "%.2f", m / p}')
per_tool_ms=$(awk -v m="$macro" -v p="$plain" -v n="$N" 'BEGIN {printf "%.1f", (m - p) * 1000 / n}')
echo "tools: $N, runs: $RUNS (median), profile: dev, incremental: off"
echo "plain async fns:  ${plain}s"
echo "#[tool_fn] tools: ${macro}s"
echo "ratio: ${ratio}x, overhead: ${per_tool_ms} ms per tool"
