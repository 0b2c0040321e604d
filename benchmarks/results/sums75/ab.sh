#!/bin/bash
# bench_cost.py in an old checkout (O) and a new one (N), alternating, ROUNDS rounds; each
# round's results in OUT/PREFIX_{O,N}_ROUND.{json,log}. Usage:
#   OLD=dir NEW=dir CASES=a,b PREFIX=cost ROUNDS="1 2" OUT=dir bash ab.sh
# The runs of this folder (old at /tmp/base75, new at /tmp/new75, OUT=/tmp/p75):
#   cost_*   7c20e9b against 63aaf65, CASES=flights_1e5,flights_class_1e5,diamonds_4e4,airline_1e5
#   cost2_*  7c20e9b against d97a3b2, CASES=flights_1e5,flights_class_1e5,airline_1e5
#   cost3_*  d97a3b2 against 64f0b9f (four sweeps), CASES=weather_2e4,flights_1e5,diamonds_4e4,diamonds_1e4
#   final_*  7c20e9b against 7b30df3, CASES=diamonds_1e4,weather_2e4,diamonds_class_1e4,airline_1e5,
#            diamonds_4e4,airline_1e4,flights_1e5,flights_class_1e5,airline_1e6 (ROUNDS=1, then ROUNDS=2)
OLD=${OLD:-/tmp/base75}; NEW=${NEW:-/tmp/new75}; OUT=${OUT:-/tmp/p75}
CASES=${CASES:-flights_1e5,flights_class_1e5,diamonds_4e4,airline_1e5}
PREFIX=${PREFIX:-cost}; ROUNDS=${ROUNDS:-1 2}
for r in $ROUNDS; do
  for tag in O N; do
    d=$OLD; [ $tag = N ] && d=$NEW
    (cd "$d" && python benchmarks/bench_cost.py --cases "$CASES" --repeats 3 \
       --out "$OUT/${PREFIX}_${tag}_$r.json" > "$OUT/${PREFIX}_${tag}_$r.log" 2>&1)
  done
done
