#!/usr/bin/env bash
# Compile cost of `#[tool_fn]`: builds a crate of N `#[tool_fn]` tools, the same crate with
# N plain async fns (same signatures and bodies), and the peer's: the same N functions under
# daimon's `#[daimon::tool_fn]` (daimon 0.25.0 from crates.io, its tools return
# `daimon::Result<ToolOutput>`, so their bodies wrap the same values). It reports the build
# times and their ratios. Dependencies are built first (shared target dir), so the figures are
# the cost of compiling the one crate, which is where a macro's cost lands. The first run
# fetches daimon and its dependencies from crates.io.
#
# Each run touches and rebuilds the plain crate, then the toolsmith crate, then the daimon
# crate, one after the other, so that all three see the same load on a shared machine; the
# ratios reported are the medians of the runs' own ratios, and the times are the medians of
# each crate's runs.
#
# Usage: [FEATURES=lean] benches/compile_cost/run.sh [N] [RUNS] [MODE]
#   FEATURES=lean  toolsmith without its default features (daimon is always taken so); the
#                  default takes it with them, which makes cargo's own work larger
#   SIGNATURES=distinct  every tool's parameter types its own (the default: four signatures in
#                  turn, so 50 tools share each); nothing generic over them is then shared
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
# `kind` is plain, toolsmith or daimon.
tool_source() {
    local i="$1" kind="$2"
    if [ "${SIGNATURES:-shared}" = distinct ]; then
        distinct_tool_source "$i" "$kind"
        return
    fi
    if [ "$kind" = daimon ]; then
        daimon_tool_source "$i"
        return
    fi
    local attr=""
    [ "$kind" = toolsmith ] && attr="#[tool_fn(category = \"bench\")]"
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

# SIGNATURES=distinct: tool $i with parameter types of its own (no two tools alike), so that
# no code generic over the parameters' types is shared between tools: two parameters of the
# eight types below for the first 64 tools, three for the others.
DISTINCT_TYPES=(f64 String "Option<u32>" bool "Vec<String>" u64 i32 "Option<String>")
distinct_tool_source() {
    local i="$1" kind="$2" params sizes attr="" returns="usize" value
    params="    /// The first.
    a: ${DISTINCT_TYPES[$((i % 8))]},
    /// The second.
    b: ${DISTINCT_TYPES[$((i / 8 % 8))]},"
    sizes="std::mem::size_of_val(&a) + std::mem::size_of_val(&b)"
    if [ "$i" -ge 64 ]; then
        params="$params
    /// The third.
    c: ${DISTINCT_TYPES[$((i / 64 % 8))]},"
        sizes="$sizes + std::mem::size_of_val(&c)"
    fi
    value="$sizes + $i"
    case "$kind" in
    toolsmith) attr="#[tool_fn(category = \"bench\")]" ;;
    daimon) attr="#[daimon::tool_fn]" returns="daimon::Result<ToolOutput>" value="ToolOutput::json(&($value))" ;;
    esac
    cat <<RS
/// Sizes its arguments (tool $i).
$attr
pub async fn tool_$i(
$params
) -> $returns {
    $value
}
RS
}

# The same tool under daimon's macro: the same signature and value, wrapped in daimon's
# `ToolOutput` (its tools return `daimon::Result<ToolOutput>`). The macro turns `tool_$i` into
# a struct `Tool$i` and leaves no fn behind, so the names cannot collide.
daimon_tool_source() {
    local i="$1"
    case $((i % 4)) in
    0) cat <<RS
/// Adds two numbers (tool $i).
#[daimon::tool_fn]
pub async fn tool_$i(
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
) -> daimon::Result<ToolOutput> {
    ToolOutput::json(&(a + b + $i.0))
}
RS
    ;;
    1) cat <<RS
/// Shortens a text (tool $i).
#[daimon::tool_fn]
pub async fn tool_$i(
    /// The text.
    text: String,
    /// At most this many characters.
    limit: Option<u32>,
) -> daimon::Result<ToolOutput> {
    Ok(ToolOutput::text(text.chars().take(limit.unwrap_or($i) as usize).collect::<String>()))
}
RS
    ;;
    2) cat <<RS
/// Counts items (tool $i).
#[daimon::tool_fn]
pub async fn tool_$i(
    /// The items.
    items: Vec<String>,
) -> daimon::Result<ToolOutput> {
    ToolOutput::json(&(items.len() + $i))
}
RS
    ;;
    3) cat <<RS
/// Checks a flag (tool $i).
#[daimon::tool_fn]
pub async fn tool_$i(
    /// The flag.
    flag: bool,
    /// A note.
    note: Option<String>,
) -> daimon::Result<ToolOutput> {
    if flag { Ok(ToolOutput::text("")) } else { Ok(ToolOutput::error(note.unwrap_or_else(|| "tool $i".to_owned()))) }
}
RS
    ;;
    esac
}

make_crate() {
    local name="$1" kind="$2" dir="$WORK/$1"
    mkdir -p "$dir/src"
    {
        cat <<TOML
[package]
name = "$name"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
TOML
        if [ "$kind" = daimon ]; then
            # daimon's macro expands to `::serde_json` paths: the crate names serde_json itself.
            echo 'daimon = { version = "=0.25.0", default-features = false, features = ["macros"] }'
            echo 'serde_json = "1"'
        else
            # FEATURES=lean: without the default features (the harness, MCP, HTTP clients),
            # as the README advises a crate that only defines tools, and as daimon is taken.
            if [ "${FEATURES:-default}" = lean ]; then
                echo "toolsmith = { path = \"$ROOT\", default-features = false }"
            else
                echo "toolsmith = { path = \"$ROOT\" }"
            fi
        fi
    } >"$dir/Cargo.toml"
    {
        echo "#![allow(clippy::all, unused_doc_comments)]"
        if [ "$kind" = daimon ]; then
            echo "use daimon::tool::ToolOutput;"
        else
            if [ "${SIGNATURES:-shared}" = distinct ]; then
                echo "use toolsmith::tool_fn;"
            else
                echo "use toolsmith::{tool_fn, ToolError};"
            fi
            echo "#[allow(unused_imports)] use tool_fn as _;"
        fi
        for i in $(seq 0 $((N - 1))); do tool_source "$i" "$kind"; done
    } >"$dir/src/lib.rs"
}

cat >"$WORK/Cargo.toml" <<TOML
[workspace]
members = ["with_macro", "plain_fns", "daimon_tools"]
resolver = "3"
TOML
make_crate with_macro toolsmith
make_crate plain_fns plain
make_crate daimon_tools daimon
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
    # Each crate on its own, as the timed builds are: built together, Cargo would unify the
    # dependencies' features across the three, and a timed build alone could then compile a
    # dependency (daimon's included) anew.
    echo "building dependencies and the three crates once ($mode)..." >&2
    for package in plain_fns with_macro daimon_tools; do cargo build -q -p "$package"; done
    plains=() macros=() daimons=() ratios=() daimon_ratios=() peer_ratios=()
    for _ in $(seq "$RUNS"); do
        p=$(build_once plain_fns)
        m=$(build_once with_macro)
        d=$(build_once daimon_tools)
        plains+=("$p") macros+=("$m") daimons+=("$d")
        ratios+=("$(awk -v m="$m" -v p="$p" 'BEGIN {printf "%.3f", m / p}')")
        daimon_ratios+=("$(awk -v d="$d" -v p="$p" 'BEGIN {printf "%.3f", d / p}')")
        peer_ratios+=("$(awk -v m="$m" -v d="$d" 'BEGIN {printf "%.3f", m / d}')")
        echo "  run: plain ${p}s, #[tool_fn] ${m}s, daimon ${d}s" >&2
    done
    plain=$(printf '%s\n' "${plains[@]}" | median)
    macro=$(printf '%s\n' "${macros[@]}" | median)
    daimon=$(printf '%s\n' "${daimons[@]}" | median)
    ratio=$(printf '%s\n' "${ratios[@]}" | median)
    daimon_ratio=$(printf '%s\n' "${daimon_ratios[@]}" | median)
    peer_ratio=$(printf '%s\n' "${peer_ratios[@]}" | median)
    per_tool_ms=$(awk -v m="$macro" -v p="$plain" -v n="$N" 'BEGIN {printf "%.1f", (m - p) * 1000 / n}')
    daimon_per_tool_ms=$(awk -v d="$daimon" -v p="$plain" -v n="$N" 'BEGIN {printf "%.1f", (d - p) * 1000 / n}')
    echo "tools: $N, paired runs: $RUNS (medians), profile: dev, mode: $mode (CARGO_INCREMENTAL=$CARGO_INCREMENTAL), signatures: ${SIGNATURES:-shared}"
    echo "plain async fns:  ${plain}s"
    echo "#[tool_fn] tools: ${macro}s"
    echo "ratio: $(printf '%.2f' "$ratio")x (median of the runs' ratios), overhead: ${per_tool_ms} ms per tool"
    # The peer's lines avoid the words the lines above are read by ("#[tool_fn] tools:",
    # "ratio:", "overhead:"), so that a reader of those still finds one line each.
    echo "daimon tools:     ${daimon}s"
    echo "daimon/plain: $(printf '%.2f' "$daimon_ratio")x (median of the runs' ratios), ${daimon_per_tool_ms} ms per tool over plain"
    echo "toolsmith/daimon: $(printf '%.2f' "$peer_ratio")x (median of the runs' ratios)"
done
