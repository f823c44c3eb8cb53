#!/usr/bin/env bash
# Compile-time case: one crate of 100 tools written three ways, built side by
# side.
#
#   ours_macro  - 100 async fns with our #[tool]
#   ours_hand   - 100 hand-written `Tool` impls (what #[tool] saves you)
#   rmcp_macro  - one server with 100 rmcp #[tool] methods under #[tool_router]
#
# Method. The three crates are members of one generated workspace in a temp
# dir with their own shared target dir (never the project's), pinned to the
# same dependency versions as benchmarks/Cargo.lock. Dependencies are built
# once first (they would otherwise dominate every figure). Then, ROUNDS times
# per crate:
#   clean:       `cargo clean -p <crate>` then `cargo build -p <crate>`
#                (the crate itself from scratch, dependencies already built);
#   incremental: one tool body edited (a constant changed) then
#                `cargo build -p <crate>`.
# Medians of the rounds are printed, with ratios to the hand-written crate.
# Profile: dev (the edit-compile loop). Run with `--release` for release.
#
# With --scratch, the case is a user's first build instead: ours_macro (on
# the core with no features) and rmcp_macro, 10 tools each unless --tools,
# each built from nothing (every dependency included) in a fresh target dir
# of its own under the temp dir, ROUNDS times (default 1 here), removed after
# each build (disk). The builds alternate (ours, rmcp, ours, rmcp, ...), so
# a change in the machine's load falls on both alike; each build's start is
# logged on stderr with the load average. It prints, side by side, the
# crates compiled (cargo's `Compiling` lines), each build's wall time and
# their median, the CPU seconds (user + system of cargo and every compiler
# it ran: on a loaded machine the wall time grows with the others' builds,
# the CPU time hardly), the load before each build, and ours / rmcp for
# each round (a pair built one after the other) and for the medians. --only "ours_macro"
# builds ours alone (a before/after of the core).
#
# Usage: benchmarks/compile_time.sh [--release] [--rounds N] [--tools N]
#            [--only "crate ..."] [--work DIR] [--save] [--scratch]
# --save also writes the figures to benchmarks/results/compile_time.json,
# where the benchmark binary reads them for its compile-time targets.
# --work reuses DIR (kept afterwards) so dependencies are built only once
# across invocations; without it a fresh temp dir is used and removed.
set -euo pipefail

ROUNDS=3
PROFILE_FLAG=""
N=100
ONLY="ours_macro ours_hand rmcp_macro"
WORK=""
SAVE=""
SCRATCH=""
ROUNDS_GIVEN=""
N_GIVEN=""
ONLY_GIVEN=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --release) PROFILE_FLAG="--release" ;;
        --rounds) ROUNDS="$2"; ROUNDS_GIVEN=1; shift ;;
        --tools) N="$2"; N_GIVEN=1; shift ;;
        --only) ONLY="$2"; ONLY_GIVEN=1; shift ;;
        --work) WORK="$2"; shift ;;
        --save) SAVE="results/compile_time.json" ;;
        --scratch) SCRATCH=1 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

if [[ -n "$SCRATCH" ]]; then
    [[ -n "$ROUNDS_GIVEN" ]] || ROUNDS=1
    [[ -n "$N_GIVEN" ]] || N=10
    [[ -n "$ONLY_GIVEN" ]] || ONLY="ours_macro rmcp_macro"
fi

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ -n "$SAVE" ]]; then SAVE="$HERE/$SAVE"; fi
ROOT="$(cd "$HERE/.." && pwd)"
if [[ -n "$WORK" ]]; then
    TMP="$WORK"
    mkdir -p "$TMP"
else
    TMP="$(mktemp -d -t tinyagents-compile-time.XXXXXX)"
    trap 'rm -rf "$TMP"' EXIT
fi
WS="$TMP/ws"
rm -rf "$WS"
export CARGO_TARGET_DIR="$TMP/target"
mkdir -p "$WS"

cat > "$WS/Cargo.toml" <<EOF
[workspace]
resolver = "3"
members = ["ours_macro", "ours_hand", "rmcp_macro"]

[workspace.dependencies]
tinyagents-tools = { path = "$ROOT/tinyagents-tools" }
rmcp = { version = "3.9", default-features = false, features = ["server", "macros"] }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1.2"
EOF
cp "$HERE/Cargo.lock" "$WS/Cargo.lock"

new_crate() { # name, deps...
    local name="$1"; shift
    mkdir -p "$WS/$name/src"
    {
        printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n[dependencies]\n' "$name"
        for dep in "$@"; do printf '%s.workspace = true\n' "$dep"; done
    } > "$WS/$name/Cargo.toml"
}

# The argument struct and output of tool $i (distinct types per tool, as in a
# real crate).
args_struct() { # i, schemars path
    local i="$1" js="$2"
    cat <<EOF
/// Arguments of tool $i.
#[derive(Debug, serde::Deserialize, $js)]
pub struct Args$i {
    /// The first addend.
    pub a: i64,
    /// The second addend.
    pub b: i64,
}

/// Output of tool $i.
#[derive(Debug, serde::Serialize, $js)]
pub struct Out$i {
    /// The sum.
    pub sum: i64,
}

EOF
}

# The function of tool $i that both of our crates serve, below the attribute
# line given (none for the hand-written crate).
add_fn() { # i, attribute line
    local i="$1" attribute="$2"
    echo "/// Add two integers (tool $i)."
    if [[ -n "$attribute" ]]; then echo "$attribute"; fi
    cat <<EOF
pub async fn add_$i(args: Args$i) -> Result<Out$i, ToolError> {
    Ok(Out$i { sum: args.a.wrapping_add(args.b).wrapping_add(/*BODY*/0) })
}

EOF
}

# --- ours, #[tool] ---------------------------------------------------------
new_crate ours_macro tinyagents-tools serde schemars
{
    echo '//! 100 tools with #[tool].'
    echo 'use tinyagents_tools::prelude::*;'
    echo
    for i in $(seq 0 $((N - 1))); do
        args_struct "$i" "JsonSchema"
        add_fn "$i" "#[tool(read_only, idempotent)]"
    done
} > "$WS/ours_macro/src/lib.rs"

# --- ours, hand-written Tool impls ------------------------------------------
new_crate ours_hand tinyagents-tools serde serde_json schemars
{
    echo '//! 100 hand-written Tool impls.'
    echo 'use std::sync::OnceLock;'
    echo 'use serde_json::Value;'
    echo 'use tinyagents_tools::*;'
    echo 'use tinyagents_tools::output::IntoToolOutput;'
    echo 'use schemars::JsonSchema;'
    echo
    for i in $(seq 0 $((N - 1))); do
        args_struct "$i" "JsonSchema"
        add_fn "$i" ""
        cat <<EOF
/// The tool for [add_$i].
pub struct Add$i;

#[async_trait]
impl Tool for Add$i {
    fn spec(&self) -> &ToolSpec {
        static SPEC: OnceLock<ToolSpec> = OnceLock::new();
        SPEC.get_or_init(|| {
            ToolSpec::builder("add_$i", "Add two integers (tool $i).")
                .input_schema(ToolSchema::for_input::<Args$i>())
                .output_schema(ToolSchema::for_output::<Out$i>())
                .safety(ToolSafety::pure())
                .build()
                .expect("a valid spec")
        })
    }

    async fn call(&self, _: &(), _: &ToolRuntime, args: Value) -> Result<ToolOutput, ToolError> {
        let args: Args$i = serde_json::from_value(args)?;
        Json(add_$i(args).await?).into_tool_output()
    }
}

EOF
    done
} > "$WS/ours_hand/src/lib.rs"

# --- rmcp, #[tool] under #[tool_router] --------------------------------------
new_crate rmcp_macro rmcp serde schemars
{
    echo '//! 100 tools with rmcp #[tool].'
    echo 'use rmcp::handler::server::router::tool::ToolRouter;'
    echo 'use rmcp::handler::server::wrapper::{Json, Parameters};'
    echo 'use rmcp::{ServerHandler, tool, tool_handler, tool_router};'
    echo
    for i in $(seq 0 $((N - 1))); do
        args_struct "$i" "schemars::JsonSchema"
    done
    cat <<EOF
/// The server.
#[derive(Clone)]
pub struct Server {
    router: ToolRouter<Server>,
}

#[tool_handler(router = self.router)]
impl ServerHandler for Server {}

#[tool_router(router = tool_router)]
impl Server {
    /// Builds the server.
    pub fn new() -> Self {
        Server { router: Self::tool_router() }
    }
EOF
    for i in $(seq 0 $((N - 1))); do
        cat <<EOF

    /// Add two integers (tool $i).
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    async fn add_$i(&self, Parameters(args): Parameters<Args$i>) -> Json<Out$i> {
        Json(Out$i { sum: args.a.wrapping_add(args.b).wrapping_add(/*BODY*/0) })
    }
EOF
    done
    echo '}'
} > "$WS/rmcp_macro/src/lib.rs"

read -r -a CRATES <<< "$ONLY"
cd "$WS"

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
load() { cut -d' ' -f1 /proc/loadavg; }
# Sets CPU to the CPU seconds (user + system) of this shell's finished
# children, their children included. Not in a subshell: `times` there
# counts the subshell's.
TIMES_LOG="$TMP/times"
cpu_now() {
    local user sys
    times > "$TIMES_LOG"
    read -r user sys < <(tail -n 1 "$TIMES_LOG")
    CPU=$(awk -v u="$user" -v s="$sys" 'function sec(t) { split(t, p, "m"); return p[1] * 60 + p[2] }
        BEGIN { printf "%.1f", sec(u) + sec(s) }')
}

if [[ -n "$SCRATCH" ]]; then
    # Resolve (and fetch) once, outside the timed builds.
    cargo fetch -q >&2
    declare -A SECS CPUS UNITS LOADS MED MEDCPU
    for r in $(seq 1 "$ROUNDS"); do
        for c in "${CRATES[@]}"; do
            export CARGO_TARGET_DIR="$TMP/target-$c"
            rm -rf "$CARGO_TARGET_DIR"
            l=$(load)
            LOADS[$c]+="$l "
            echo "round $r/$ROUNDS: $c from nothing, load $l ($(date -u +%H:%M:%S) UTC)" >&2
            cpu_now; c0=$CPU
            t0=$(now)
            cargo build $PROFILE_FLAG -p "$c" 2> "$TMP/$c.log" || { cat "$TMP/$c.log" >&2; exit 1; }
            t1=$(now)
            cpu_now
            secs=$(echo "$t1 - $t0" | bc -l)
            cpu=$(echo "$CPU - $c0" | bc -l)
            SECS[$c]+="$secs "
            CPUS[$c]+="$cpu "
            UNITS[$c]=$(grep -c '^ *Compiling ' "$TMP/$c.log")
            printf 'round %s/%s: %s %.1f s, CPU %.1f s, %s crates\n' "$r" "$ROUNDS" "$c" "$secs" "$cpu" "${UNITS[$c]}" >&2
            rm -rf "$CARGO_TARGET_DIR"
        done
    done
    echo "from scratch, $N tools, profile ${PROFILE_FLAG:-dev}, $ROUNDS round(s), $(nproc) cores"
    printf '%-12s %8s %11s  %-20s %10s  %-20s %s\n' crate crates "median (s)" "each build (s)" \
        "median CPU" "each CPU (s)" "load before each build"
    for c in "${CRATES[@]}"; do
        MED[$c]=$(tr ' ' '\n' <<< "${SECS[$c]}" | grep . | median)
        MEDCPU[$c]=$(tr ' ' '\n' <<< "${CPUS[$c]}" | grep . | median)
        each=$(for x in ${SECS[$c]}; do printf '%.1f ' "$x"; done)
        eachcpu=$(for x in ${CPUS[$c]}; do printf '%.1f ' "$x"; done)
        printf '%-12s %8s %11.1f  %-20s %10.1f  %-20s %s\n' "$c" "${UNITS[$c]}" "${MED[$c]}" "$each" \
            "${MEDCPU[$c]}" "$eachcpu" "${LOADS[$c]}"
    done
    if [[ -n "${SECS[ours_macro]:-}" && -n "${SECS[rmcp_macro]:-}" ]]; then
        read -r -a OURS <<< "${SECS[ours_macro]}"
        read -r -a RMCP <<< "${SECS[rmcp_macro]}"
        pairs=$(for i in "${!OURS[@]}"; do printf '%.3f ' "$(echo "${OURS[$i]} / ${RMCP[$i]}" | bc -l)"; done)
        read -r -a OURS_CPU <<< "${CPUS[ours_macro]}"
        read -r -a RMCP_CPU <<< "${CPUS[rmcp_macro]}"
        cpu_pairs=$(for i in "${!OURS_CPU[@]}"; do printf '%.3f ' "$(echo "${OURS_CPU[$i]} / ${RMCP_CPU[$i]}" | bc -l)"; done)
        printf 'ours_macro / rmcp_macro: crates %s / %s, clean %.3f (medians); each round: %s\n' \
            "${UNITS[ours_macro]}" "${UNITS[rmcp_macro]}" \
            "$(echo "${MED[ours_macro]} / ${MED[rmcp_macro]}" | bc -l)" "$pairs"
        printf 'ours_macro / rmcp_macro, CPU: %.3f (medians); each round: %s\n' \
            "$(echo "${MEDCPU[ours_macro]} / ${MEDCPU[rmcp_macro]}" | bc -l)" "$cpu_pairs"
    fi
    exit 0
fi

echo "generated workspace: $WS (target: $CARGO_TARGET_DIR)" >&2
echo "prebuilding dependencies (not timed)..." >&2
for c in "${CRATES[@]}"; do
    cargo build -q $PROFILE_FLAG -p "$c" >&2
done

declare -A CLEAN INCR
for c in "${CRATES[@]}"; do
    clean_times=()
    incr_times=()
    for r in $(seq 1 "$ROUNDS"); do
        cargo clean -q $PROFILE_FLAG -p "$c" >&2
        t0=$(now); cargo build -q $PROFILE_FLAG -p "$c" >&2; t1=$(now)
        clean_times+=("$(echo "$t1 - $t0" | bc -l)")
        # Edit one tool body (the first tool): change the constant it adds.
        sed -i "0,/\/\*BODY\*\/[0-9]*/s//\/*BODY*\/$r/" "$c/src/lib.rs"
        t0=$(now); cargo build -q $PROFILE_FLAG -p "$c" >&2; t1=$(now)
        incr_times+=("$(echo "$t1 - $t0" | bc -l)")
    done
    CLEAN[$c]=$(printf '%s\n' "${clean_times[@]}" | median)
    INCR[$c]=$(printf '%s\n' "${incr_times[@]}" | median)
    echo "$c clean: ${clean_times[*]}  incremental: ${incr_times[*]}" >&2
done

printf '%-12s %12s %14s\n' crate "clean (s)" "incremental (s)"
for c in "${CRATES[@]}"; do
    printf '%-12s %12.2f %14.2f\n' "$c" "${CLEAN[$c]}" "${INCR[$c]}"
done
if [[ ${#CRATES[@]} -lt 3 ]]; then
    exit 0
fi
ratio() { printf "%.3f" "$(echo "$1 / $2" | bc -l)"; }
echo
echo "ours_macro / ours_hand, clean:        $(ratio "${CLEAN[ours_macro]}" "${CLEAN[ours_hand]}")"
echo "ours_macro / rmcp_macro, clean:       $(ratio "${CLEAN[ours_macro]}" "${CLEAN[rmcp_macro]}")"
echo "ours_macro / ours_hand, incremental:  $(ratio "${INCR[ours_macro]}" "${INCR[ours_hand]}")"
echo "ours_macro / rmcp_macro, incremental: $(ratio "${INCR[ours_macro]}" "${INCR[rmcp_macro]}")"
JSON="{\"clean_s\":{\"ours_macro\":${CLEAN[ours_macro]},\"ours_hand\":${CLEAN[ours_hand]},\"rmcp_macro\":${CLEAN[rmcp_macro]}},\"incremental_s\":{\"ours_macro\":${INCR[ours_macro]},\"ours_hand\":${INCR[ours_hand]},\"rmcp_macro\":${INCR[rmcp_macro]}},\"rounds\":$ROUNDS,\"tools\":$N,\"profile\":\"${PROFILE_FLAG:-dev}\"}"
echo "$JSON"
# The benchmark binary reads this file for its compile-time targets.
if [[ -n "$SAVE" ]]; then
    echo "$JSON" > "$SAVE"
    echo "saved to $SAVE" >&2
fi
