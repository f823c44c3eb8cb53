#!/usr/bin/env bash
# Instructions per call, counted by callgrind, for the benchmark's
# `--profile-*` loops.
#
# Each profile runs twice under `valgrind --tool=callgrind`, with N1 and N2
# iterations; per call = (Ir(N2) - Ir(N1)) / (N2 - N1), so everything done
# once (start-up, building the executor, the runtime) cancels out. What is
# done once but not always alike does not: quanta calibrates its TSC clock
# in a `once_cell` initializer, once per process, looping until its readings
# settle, and under valgrind that took 7 to 18 million instructions (up to
# 1,000 per call at these N). So the inclusive cost of the functions matching
# --exclude (one-time initializers only) is taken off each run's total first;
# where none runs, nothing is taken off.
#
# usage: benchmarks/callgrind.sh [options]
#   --bin PATH        the benchmark binary (default: build it, see below)
#   --profiles LIST   comma-separated, without `--profile-`
#                     (default: executor,observed,subscribed,rmcp-call)
#   --n1 N --n2 N     the two loop counts (default: 2000 and 12000)
#   --features F      features for the build (default: none, i.e.
#                     --no-default-features: rig left out; "rig" builds as
#                     the full run)
#   --exclude REGEX   functions whose inclusive cost is taken off each total
#                     (default: 'once_cell::imp::OnceCell<T>::initialize'
#                     (every once_cell initializer, quanta's calibration
#                     among them); '' for none)
#   --out-dir DIR     keep the callgrind.out files there (default: a
#                     temporary directory, removed at the end)
#   --json FILE       also write the figures as JSON to FILE ('-' = stdout,
#                     after the table)
#
# Without --bin the binary is built with
#   cargo build --release --manifest-path <repo>/benchmarks/Cargo.toml \
#       --no-default-features [--features F]
# (CARGO_TARGET_DIR is honoured; the default is benchmarks/target) and taken
# from <target dir>/release/tinyagents-tools-benchmarks.
#
# Example (the baseline in benchmarks/results/callgrind-baseline.txt):
#   CARGO_TARGET_DIR=/tmp/base-target benchmarks/callgrind.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin=""
profiles="executor,observed,subscribed,rmcp-call"
n1=2000
n2=12000
features=""
exclude='once_cell::imp::OnceCell<T>::initialize'
out_dir=""
json=""

while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin="$2"; shift 2 ;;
        --profiles) profiles="$2"; shift 2 ;;
        --n1) n1="$2"; shift 2 ;;
        --n2) n2="$2"; shift 2 ;;
        --features) features="$2"; shift 2 ;;
        --exclude) exclude="$2"; shift 2 ;;
        --out-dir) out_dir="$2"; shift 2 ;;
        --json) json="$2"; shift 2 ;;
        -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
        *) echo "callgrind.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done

if [ "$n2" -le "$n1" ]; then
    echo "callgrind.sh: --n2 must be larger than --n1" >&2
    exit 2
fi
for tool in valgrind callgrind_annotate; do
    command -v "$tool" >/dev/null || { echo "callgrind.sh: $tool not found" >&2; exit 1; }
done

if [ -z "$bin" ]; then
    build=(cargo build --release --manifest-path "$here/Cargo.toml" --no-default-features)
    [ -n "$features" ] && build+=(--features "$features")
    echo "building: ${build[*]}" >&2
    "${build[@]}" >&2
    bin="${CARGO_TARGET_DIR:-$here/target}/release/tinyagents-tools-benchmarks"
fi
[ -x "$bin" ] || { echo "callgrind.sh: no binary at $bin" >&2; exit 1; }

if [ -z "$out_dir" ]; then
    out_dir="$(mktemp -d)"
    trap 'rm -rf "$out_dir"' EXIT
else
    mkdir -p "$out_dir"
fi

# The total instructions of one callgrind output file, and the inclusive
# cost of the outermost function matching $exclude (the largest inclusive
# figure among the matches: a function's inclusive cost sums all its calls,
# and the other matches are nested in it).
counted() {
    local file="$1" total excluded=0
    total="$(awk '/^(summary|totals):/ { print $2; exit }' "$file")"
    if [ -n "$exclude" ]; then
        excluded="$(callgrind_annotate --inclusive=yes --threshold=100 "$file" 2>/dev/null \
            | awk -v re="$exclude" '
                $0 ~ re { n = $1; gsub(",", "", n); if (n + 0 > max) max = n + 0 }
                END { print max + 0 }')"
    fi
    echo "$total $excluded"
}

rows=()
printf '%-12s %14s %14s %10s %10s %12s\n' profile "Ir(N1)" "Ir(N2)" "excl(N1)" "excl(N2)" "per call"
for profile in ${profiles//,/ }; do
    declare -A ir=() ex=()
    for n in "$n1" "$n2"; do
        file="$out_dir/$profile.$n.out"
        valgrind --tool=callgrind --callgrind-out-file="$file" \
            "$bin" "--profile-$profile" "$n" >/dev/null 2>"$out_dir/$profile.$n.log" || {
            echo "callgrind.sh: --profile-$profile $n failed (see $out_dir/$profile.$n.log)" >&2
            trap - EXIT
            exit 1
        }
        read -r ir[$n] ex[$n] < <(counted "$file")
    done
    per_call="$(awk -v a="${ir[$n1]}" -v b="${ir[$n2]}" -v xa="${ex[$n1]}" -v xb="${ex[$n2]}" \
        -v n1="$n1" -v n2="$n2" 'BEGIN { printf "%.1f", ((b - xb) - (a - xa)) / (n2 - n1) }')"
    printf '%-12s %14s %14s %10s %10s %12s\n' "$profile" "${ir[$n1]}" "${ir[$n2]}" \
        "${ex[$n1]}" "${ex[$n2]}" "$per_call"
    rows+=("$(printf '{"profile": "%s", "ir_n1": %s, "ir_n2": %s, "excluded_n1": %s, "excluded_n2": %s, "per_call": %s}' \
        "$profile" "${ir[$n1]}" "${ir[$n2]}" "${ex[$n1]}" "${ex[$n2]}" "$per_call")")
    unset ir ex
done

if [ -n "$json" ]; then
    body="$(printf '{"n1": %s, "n2": %s, "exclude": "%s", "profiles": [' "$n1" "$n2" "$exclude")"
    sep=""
    for row in "${rows[@]}"; do body+="$sep$row"; sep=", "; done
    body+="]}"
    if [ "$json" = "-" ]; then echo "$body"; else echo "$body" > "$json"; fi
fi
