#!/bin/bash
# the session's start (7c20e9b, /tmp/base75) against its code (7b30df3, /tmp/new75), alternating
CASES=diamonds_1e4,weather_2e4,diamonds_class_1e4,airline_1e5,diamonds_4e4,airline_1e4,flights_1e5,flights_class_1e5,airline_1e6
for r in 1 2; do  # run as two invocations, r=1 then r=2
  for tag in O N; do
    d=/tmp/base75; [ $tag = N ] && d=/tmp/new75
    (cd $d && /work/venv/bin/python benchmarks/bench_cost.py --cases $CASES --repeats 3 --out /tmp/p75/final_${tag}_$r.json > /tmp/p75/final_${tag}_$r.log 2>&1)
  done
done
