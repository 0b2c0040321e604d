#!/bin/bash
# alternate cost_cls.py runs of checkouts: cost_cls.sh LOG "TABLES" CHECKOUT:FOLDS...
LOG=$1; TABLES=$2; shift 2
for t in $TABLES; do for r in 1 2; do for cf in "$@"; do
  d=${cf%:*}; f=${cf#*:}; D=$(mktemp -d)
  PYTHONPATH=$d XDG_CACHE_HOME=$D JAX_ENABLE_COMPILATION_CACHE=false /work/venv/bin/python /work/main/benchmarks/results/ridge71/cost_cls.py $t $f >> $LOG 2>/dev/null; rm -rf $D
done; done; done; echo done >> $LOG
