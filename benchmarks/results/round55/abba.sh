#!/bin/sh
# ABBA: the backfitting round named ahead (NO_ROUND_AHEAD unset) against not (=1), fresh
# processes, cache off.  sh abba.sh TABLE ROUNDS
T=$1; R=$2
i=0
while [ $i -lt $R ]; do
  for e in "" 1 1 ""; do
    NO_ROUND_AHEAD=$e /work/venv/bin/python benchmarks/results/round55/first.py $T 2>/dev/null | tail -1
  done
  i=$((i+1))
done
