#!/bin/bash
cd /tmp/p82/H
for r in 1e-2 3e-2; do
  echo "== $r $(date +%T)"
  RIDGE=$r JAXTREE_COMPILATION_CACHE=0 PYTHONPATH=/tmp/p82/H /work/venv/bin/python benchmarks/results/run82/ridge_acc.py --no-ebm --out /tmp/p82/ridge_full_$r 2>&1 | tail -3
done
echo "== done $(date +%T)"
