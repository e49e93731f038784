#!/usr/bin/env bash
# Runs Strata's libFuzzer targets (docs/Fuzzing.md).
#
#   scripts/fuzz.sh TARGET [SECONDS] [-- LIBFUZZER FLAGS…]   one target (default 30 s)
#   scripts/fuzz.sh all [SECONDS]                            every target, one after the other
#   scripts/fuzz.sh build                                    only build the instrumented binary
#
# Targets: predicate, varlink, model, config, coredata. Each starts from its seed corpus in
# fuzz/corpus/TARGET (read only); inputs the fuzzer finds interesting go to
# .build-fuzz/corpus/TARGET, crashes and timeouts to .build-fuzz/artifacts/TARGET/.
#
# The binary is built with SwiftPM in .build-fuzz: every module with AddressSanitizer and
# libFuzzer's coverage instrumentation, linked with libFuzzer's runtime without its main
# (strata-fuzz has its own and calls LLVMFuzzerRunDriver). Exit status: 0 when no target
# crashed, hung or leaked past the limits; 1 otherwise (the artifact and a replay command
# are printed).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(predicate varlink model config coredata)
target="${1:-}"
seconds="${2:-30}"
shift $(( $# > 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
extra=("$@")

if [ -z "$target" ]; then
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
case "$seconds" in
    ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number of seconds (got '$seconds')" >&2; exit 2 ;;
esac

SCRATCH=.build-fuzz
swift_bin="$(dirname "$(command -v swiftc)")"
arch="$(uname -m)"
runtime="$(ls "$swift_bin"/../lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-"$arch".a 2>/dev/null | head -1 || true)"
if [ -z "$runtime" ]; then
    echo "fuzz.sh: libclang_rt.fuzzer_no_main-$arch.a not found in the Swift toolchain ($swift_bin/../lib/clang)" >&2
    exit 1
fi

build() {
    echo "fuzz.sh: building strata-fuzz with AddressSanitizer and libFuzzer instrumentation in $SCRATCH"
    swift build --product strata-fuzz --scratch-path "$SCRATCH" \
        -Xswiftc -sanitize=address \
        -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp,indirect-calls \
        -Xswiftc -DSTRATA_FUZZING \
        -Xlinker "$runtime" -Xlinker -lstdc++ 2>&1 | grep -v "Cannot export local symbol" || return 1
}

run_target() {
    local name="$1" work="$SCRATCH/corpus/$1" artifacts="$SCRATCH/artifacts/$1"
    mkdir -p "$work" "$artifacts"
    echo "fuzz.sh: $name for ${seconds}s (seeds: fuzz/corpus/$name, new inputs: $work)"
    local log="$SCRATCH/fuzz-$name.log" status=0
    # The Swift runtime's backtracer would hold the crash; libFuzzer reports it instead.
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1" \
        "$SCRATCH/debug/strata-fuzz" "$name" "$work" "fuzz/corpus/$name" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=16384 \
        -artifact_prefix="$artifacts/" -print_final_stats=1 ${extra[@]+"${extra[@]}"} >"$log" 2>&1 || status=$?
    grep -E "^(stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb|#[0-9]+ +DONE)" "$log" | sed "s/^/  $name: /" || true
    if [ "$status" -ne 0 ]; then
        echo "fuzz.sh: $name FAILED (exit $status); log: $log" >&2
        grep -E "ERROR: |SUMMARY: |Test unit written|Fatal error|Timeout" "$log" | head -20 >&2 || true
        echo "fuzz.sh: replay with: swift build --product strata-fuzz && .build/debug/strata-fuzz $name $artifacts/<file>" >&2
        return 1
    fi
}

build
case "$target" in
    build) exit 0 ;;
    all) selected=("${TARGETS[@]}") ;;
    *)
        if [[ ! " ${TARGETS[*]} " =~ " $target " ]]; then
            echo "fuzz.sh: unknown target '$target'; use one of: ${TARGETS[*]}, all, build" >&2
            exit 2
        fi
        selected=("$target") ;;
esac
passed=0
failed=0
for name in "${selected[@]}"; do
    if run_target "$name"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
