#!/bin/bash
# Worktrees: /tmp/wt49a and /tmp/wt49 at cf270b0 plus the test_laws tolerance (1e-14) of the next commit.
# the full default suite twice side by side: A at XLA's split count (32), B at the suite's (1)
DA=$(mktemp -d); DB=$(mktemp -d)
( cd /tmp/wt49a && XLA_FLAGS="--xla_cpu_parallel_codegen_split_count=32" XDG_CACHE_HOME=$DA /usr/bin/time -f "A split32 %e s wall %U user %S sys" /work/venv/bin/python -m pytest -q -p no:cacheprovider --basetemp=/tmp/bt_a > /tmp/suiteA.log 2>&1 ) &
( cd /tmp/wt49 && XDG_CACHE_HOME=$DB /usr/bin/time -f "B split1 %e s wall %U user %S sys" /work/venv/bin/python -m pytest -q -p no:cacheprovider --basetemp=/tmp/bt_b > /tmp/suiteB.log 2>&1 ) &
wait
tail -2 /tmp/suiteA.log; tail -2 /tmp/suiteB.log
