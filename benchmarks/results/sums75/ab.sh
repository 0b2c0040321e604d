#!/bin/bash
# old (7c20e9b, checked out at /tmp/base75) against new (63aaf65, then d97a3b2, at /tmp/new75),
# alternating, two rounds: cost_{O,N}_{1,2} (63aaf65), cost2_{O,N}_{1,2} (d97a3b2, CASES=flights_1e5,flights_class_1e5,airline_1e5)
CASES=${CASES:-flights_1e5,flights_class_1e5,diamonds_4e4,airline_1e5}
for r in 1 2; do
  for tag in O N; do
    d=/tmp/base75; [ $tag = N ] && d=/tmp/new75
    (cd $d && /work/venv/bin/python benchmarks/bench_cost.py --cases $CASES --repeats 3 --out /tmp/p75/cost_${tag}_$r.json > /tmp/p75/cost_${tag}_$r.log 2>&1)
  done
done
