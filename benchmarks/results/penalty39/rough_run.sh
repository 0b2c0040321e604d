#!/bin/bash
# rough_run.sh TABLES KNOTS LAMS OUT
for lam in ${3//,/ }; do
  XDG_CACHE_HOME=$(mktemp -d) OMP_NUM_THREADS=1 /work/venv/bin/python /tmp/exp39/rough.py $1 $2 $lam >> $4 2>&1
done
