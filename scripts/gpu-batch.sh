#!/usr/bin/env bash
# One batch of GPU-machine work, for the `device` tool (DESIGN.md, "Working on the GPU
# machine"): stage with `../shared/gpu/prepare.sh target/release/gpu-heap`, carry `.gpu`, and
# run e.g. `bash scripts/gpu-batch.sh conformance` or `bash scripts/gpu-batch.sh bench alloc
# mixed`. Results go to $OUT (one JSON and one log per item), each item under its own
# timeout so that one slow item cannot cost the others their files. A device command may
# run 10 minutes: the full bench grid does not fit one, so give each call a few tests and
# merge the JSON files afterwards with `gpu-heap bench-report`.
set -uo pipefail
cd "$(dirname "$0")/.."
source .gpu/env.sh
bin=.gpu/bin/gpu-heap
out=${OUT:?run this through the device tool, which sets OUT}
# Seconds per item: override with ITEM_SECS for a batch of one long item.
item_secs=${ITEM_SECS:-280}

what=${1:?usage: gpu-batch.sh conformance [STRATEGY...] | bench TEST... | test BINARY... | grow [GROW-BENCH OPTION...]}
shift
case "$what" in
conformance)
    # One run per strategy (each under its own timeout, with its own JSON), or all at once.
    if [ $# -eq 0 ]; then set -- all; fi
    for s in "$@"; do
        args=()
        [ "$s" = all ] || args=(--strategy "$s")
        timeout "$item_secs" "$bin" conformance "${args[@]}" --heap-size 8GiB \
            --json "$out/conformance-$s.json" >"$out/conformance-$s.txt" 2>&1
        echo "conformance $s: exit $?"
    done
    ;;
bench)
    for t in "$@"; do
        timeout "$item_secs" "$bin" bench --test "$t" --json "$out/bench-$t.json" \
            >"$out/bench-$t.log" 2>&1
        echo "bench $t: exit $?"
    done
    ;;
test)
    # Test binaries staged by hand: cp target/release/deps/NAME-<hash> .gpu/bin/NAME.
    for t in "$@"; do
        timeout "$item_secs" ".gpu/bin/$t" --test-threads=1 >"$out/test-$t.txt" 2>&1
        echo "test $t: exit $?"
    done
    ;;
grow)
    timeout "$item_secs" "$bin" grow-bench --max 8GiB "$@" --json "$out/grow.json" --plot "$out/grow.svg" \
        >"$out/grow.txt" 2>&1
    echo "grow-bench: exit $?"
    ;;
*)
    echo "unknown batch '$what'" >&2
    exit 2
    ;;
esac
