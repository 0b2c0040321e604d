#!/bin/bash
# bench_accuracy on flights and flights_class, old then new then new then old
cd /tmp/p82
for c in O N N O; do
  d=/tmp/p82/$c
  echo "== $c $(date +%T)"
  (cd $d && PYTHONPATH=$d /work/venv/bin/python benchmarks/bench_accuracy.py --no-ebm --tables flights,flights_class --out /tmp/p82/acc_${c}_$RANDOM  # copied to run82/ab_{O,N}_{1,2} in run order 2>&1 | grep -E "^\| (flights|flights_class) ")
done
