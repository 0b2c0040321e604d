#!/bin/bash
# alternate old/new cost_small.py runs: cost_ab.sh OLD NEW LOG TABLES...
OLD=$1; NEW=$2; LOG=$3; shift 3
for t in "$@"; do for r in 1 2; do for d in $OLD $NEW; do
  D=$(mktemp -d); PYTHONPATH=$d XDG_CACHE_HOME=$D JAX_ENABLE_COMPILATION_CACHE=false /work/venv/bin/python /work/main/benchmarks/results/additive69/cost_small.py $t >> $LOG 2>/dev/null; rm -rf $D
done; done; done; echo done >> $LOG
