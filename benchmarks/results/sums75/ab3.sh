#!/bin/bash
# old (d97a3b2, at /tmp/base75) against new (64f0b9f, four sweeps, at /tmp/new75), alternating: cost3_{O,N}_{1,2}; run with CASES=weather_2e4,flights_1e5,diamonds_4e4,diamonds_1e4
CASES=${CASES:-flights_1e5,flights_class_1e5,diamonds_4e4,airline_1e5}
for r in 1 2; do
  for tag in O N; do
    d=/tmp/base75; [ $tag = N ] && d=/tmp/new75
    (cd $d && /work/venv/bin/python benchmarks/bench_cost.py --cases $CASES --repeats 3 --out /tmp/p75/cost3_${tag}_$r.json > /tmp/p75/cost3_${tag}_$r.log 2>&1)
  done
done
