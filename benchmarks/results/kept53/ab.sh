#!/usr/bin/env bash
# Old and new alternating (ABBA), fresh processes, jaxtree's cache off: the demo, the
# 20,000 x 10 table with a category (benchmarks/results/leaf45/cat_events.py) and the binary
# classifier on 2,000 x 8 (benchmarks/results/wait52/clf_first2.py).
# Usage: bash benchmarks/results/kept53/ab.sh OLD NEW ROUNDS > LOG
OLD=$1; NEW=$2; R=${3:-4}; PY=/work/venv/bin/python
for r in $(seq 1 "$R"); do
  for c in "$OLD" "$NEW" "$NEW" "$OLD"; do
    for t in demo cat; do
      echo "$c $t $($PY benchmarks/results/leaf45/cat_events.py "$c" $t 2>/dev/null | head -1 | grep -o 'first fit [0-9.]* s')"
    done
    echo "$c clf $($PY benchmarks/results/wait52/clf_first2.py "$c" 2000 off 2>/dev/null | grep -o 'first fit [0-9.]* s')"
  done
done
