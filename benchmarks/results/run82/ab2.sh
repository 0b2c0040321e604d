#!/bin/bash
# bench_accuracy on flights and flights_class: 3adf660 (H, before the pairs' ridge) then 8704137 (R), alternating
for c in H R R H; do
  d=/tmp/p82/$c
  echo "== $c $(date +%T)"
  (cd $d && PYTHONPATH=$d /work/venv/bin/python benchmarks/bench_accuracy.py --no-ebm --tables flights,flights_class --out /tmp/p82/ab2_${c}_$(date +%H%M%S) 2>&1 | grep -E "^\| (flights|flights_class) ")
done
