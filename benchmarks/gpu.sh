#!/usr/bin/env bash
# The GPU measurements of the scaling issue, as one prepared run (about 5-8 minutes on one
# H100/H200 with JAX's CUDA plugin installed; nothing is downloaded):
#
#   1. airline scale (n = 700,000, p = 8, q = 40, k = 10): whole fit and per iteration for
#      refine = optax (default), coordinate and None, and whether precision="default"
#      (TF32) chooses any other candidate than "highest";
#   2. the n sweep 1e5, 1e6, 1e7 with the data in device memory (same TF32 check);
#   3. fit_batch against separate fits (B = 1, 8, 32);
#   4. the new search moves at airline scale (search="backfit": pair lookahead and
#      replacement moves, default optax refinement) beside step 1's greedy rows;
#   5. shape terms (shapes=10, 20) and the beam search (width 4) at airline scale through
#      TreeRegressor.fit, beside the greedy fit (benchmarks/bench_shapes.py);
#   6. the first fit in a new process (benchmarks/bench_first_fit.py: the compiled
#      executables kept on disk, jaxtree._executables; the log only);
#   0. first, the chunk size: n = 1e6 with chunk_size 2048 (the CPU default), 65536 and
#      262144, one fit each (the log only). The first GPU run (2026-11-26) found an H100
#      iteration no faster than the 2-core CPU's at 2048-row chunks: a pass is a sequential
#      scan over n / chunk small steps.
#
# Every record carries the device, jax version, precision and commit. Run from anywhere:
#
#   bash benchmarks/gpu.sh                 # results in $OUT, else benchmarks/results/gpu/
#   JAXTREE_GPU_SMOKE=1 bash benchmarks/gpu.sh   # tiny sizes, to check the script (any device)
#
# The outputs are few on purpose (the device tool brings back at most 8 files): the JSON of
# each benchmark, the scaling plots and one log.
set -uo pipefail
cd "$(dirname "$0")/.."
dest=${OUT:-benchmarks/results/gpu}
work=$(mktemp -d)
mkdir -p "$dest"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
log="$dest/gpu_log.txt"

if [ -n "${JAXTREE_GPU_SMOKE:-}" ]; then
    chunks=(--ns 2e4 --n-sweep-k 3)
    airline=(--only n --ns 20000 --n-sweep-k 3)  # stands in for the airline rows
    moves=(--only n --ns 20000 --n-sweep-k 3)
    sweep=(--ns 1e3 1e4)
    batch=(--quick)
    shapes=(--n 20000 --repeats 1)
    first=(--quick)
else
    chunks=(--ns 1e6)
    airline=(--only airline --airline-refine coordinate none)
    moves=(--only airline)
    sweep=(--ns 1e5 1e6 1e7)
    batch=()
    shapes=(--n 700000 --repeats 2)
    first=(--rounds 1)
fi

{
    "$py" -c "import jax, jaxtree; print('devices', jax.devices(), 'jax', jax.__version__, 'jaxtree', jaxtree.__version__)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || true
    echo "== 0. chunk size (n sweep rows; compare fit_s and iter_s)"
    for c in 2048 65536 262144; do
        timeout 100 "$py" benchmarks/bench_scale.py --only n "${chunks[@]}" --chunk "$c" \
            --stream-from 1e12 --repeats 1 --out "$work/chunk$c" || echo "STEP FAILED: chunk $c"
    done
    echo "== 1. airline scale"
    timeout 300 "$py" benchmarks/bench_scale.py "${airline[@]}" --stream-from 1e12 \
        --repeats 3 --out "$work/airline" || echo "STEP FAILED: airline"
    echo "== 2. n sweep in device memory"
    timeout 300 "$py" benchmarks/bench_scale.py --only n "${sweep[@]}" --stream-from 1e12 \
        --second-fit-max 1e7 --repeats 2 --out "$work/n" || echo "STEP FAILED: n sweep"
    echo "== 3. fit_batch"
    timeout 150 "$py" benchmarks/bench_batch.py "${batch[@]}" --out "$work/batch.json" \
        || echo "STEP FAILED: fit_batch"
    echo "== 4. search moves (search=backfit) at airline scale"
    timeout 300 "$py" benchmarks/bench_scale.py "${moves[@]}" --search backfit --stream-from 1e12 \
        --repeats 2 --out "$work/moves" || echo "STEP FAILED: search moves"
    echo "== 5. shape terms and beam search through TreeRegressor.fit"
    timeout 420 "$py" benchmarks/bench_shapes.py "${shapes[@]}" --out "$work/shapes" \
        || echo "STEP FAILED: shapes and beam"
    echo "== 6. first fit in a new process (the demo's shape; the log only)"
    timeout 240 "$py" benchmarks/bench_first_fit.py "${first[@]}" --estimator default \
        --out "$work/first_fit.json" | grep -v "^round" || echo "STEP FAILED: first fit"
} 2>&1 | tee "$log"

# keep (8 files): gpu_{airline,n,moves}_scale_*.json, gpu_{airline,n}_scale_*.png,
# gpu_batch.json, gpu_shapes_cost.json, gpu_log.txt
for part in airline n moves; do
    for f in "$work/$part"/scale_*.json "$work/$part"/scale_*.png; do
        case "$part:$f" in moves:*.png) continue ;; esac  # 8 files at most come back
        [ -e "$f" ] && cp "$f" "$dest/gpu_${part}_$(basename "$f")"
    done
done
[ -e "$work/batch.json" ] && cp "$work/batch.json" "$dest/gpu_batch.json"
[ -e "$work/shapes/shapes_cost.json" ] && cp "$work/shapes/shapes_cost.json" "$dest/gpu_shapes_cost.json"
ls -l "$dest"
# exit status: non-zero when a step failed or timed out (its partial output is kept)
! grep -q "^STEP FAILED" "$log"
