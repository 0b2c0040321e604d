#!/usr/bin/env bash
# session 2026-11-27 first GPU run: chunk plan comparison before the row plan is built
set -uo pipefail
cd "$(dirname "$0")/.."
dest=${OUT:-benchmarks/results/gpu}
work=$(mktemp -d); mkdir -p "$dest"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
log="$dest/gpu_log.txt"
if [ -n "${JAXTREE_GPU_SMOKE:-}" ]; then
  N6=2e4; N7=4e4; big=8192; AL=(--only n --ns 20000 --n-sweep-k 3); batch=(--quick); first=(--quick)
else
  N6=1e6; N7=1e7; big=1048576; AL=(--only airline_fit); batch=(); first=(--rounds 1)
fi
{
  "$py" -c "import jax, jaxtree; print('devices', jax.devices(), 'jax', jax.__version__)"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || true
  echo "== 0. chunk size at n=$N6 (fit_s, iter_s, score_s)"
  for c in 2048 65536 262144 $big; do
    timeout 80 "$py" benchmarks/bench_scale.py --only n --ns $N6 --chunk "$c" \
      --stream-from 1e12 --repeats 2 --out "$work/chunk$c" || echo "STEP FAILED: chunk $c"
  done
  echo "== 1. airline scale through TreeRegressor.paper().fit, chunk 262144 and $big"
  for c in 262144 $big; do
    timeout 90 "$py" benchmarks/bench_scale.py "${AL[@]}" --chunk $c --stream-from 1e12 \
      --repeats 3 --out "$work/airline$c" || echo "STEP FAILED: airline $c"
  done
  echo "== 2. n=$N7 in device memory, chunk $big"
  timeout 120 "$py" benchmarks/bench_scale.py --only n --ns $N7 --chunk $big --stream-from 1e12 \
      --second-fit-max 1e8 --repeats 1 --out "$work/n7" || echo "STEP FAILED: n7"
  echo "== 3. fit_batch"
  timeout 80 "$py" benchmarks/bench_batch.py "${batch[@]}" --out "$work/batch.json" || echo "STEP FAILED: fit_batch"
  echo "== 4. first fit in a new process"
  timeout 80 "$py" benchmarks/bench_first_fit.py "${first[@]}" --estimator default \
      --out "$work/first_fit.json" | grep -v "^round" || echo "STEP FAILED: first fit"
} 2>&1 | tee "$log"
"$py" - "$work" "$dest" <<'PY'
import json, pathlib, sys
w, d = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
groups = {"gpu1_chunks.json": "chunk*/scale_*.json", "gpu1_airline.json": "airline*/scale_*.json",
          "gpu1_n7.json": "n7/scale_*.json", "gpu1_batch.json": "batch.json", "gpu1_first_fit.json": "first_fit.json"}
for name, pat in groups.items():
    fs = sorted(w.glob(pat))
    if fs:
        (d / name).write_text(json.dumps({str(f.relative_to(w)): json.loads(f.read_text()) for f in fs}, indent=1))
PY
ls -l "$dest"
