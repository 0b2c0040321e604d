#!/bin/bash
# two runs side by side: $1 flags for run A, $2 for run B
cd /tmp/wt49
F="${FILES:-tests/test_search.py tests/test_shapes.py tests/test_pipeline.py}"
( XLA_FLAGS="$1" /usr/bin/time -f "A %e s wall %U user" /work/venv/bin/python -m pytest -q -n 0 -p no:cacheprovider $F > /tmp/abA.log 2>&1 ) &
( XLA_FLAGS="$2" /usr/bin/time -f "B %e s wall %U user" /work/venv/bin/python -m pytest -q -n 0 -p no:cacheprovider $F > /tmp/abB.log 2>&1 ) &
wait
tail -2 /tmp/abA.log; tail -2 /tmp/abB.log
