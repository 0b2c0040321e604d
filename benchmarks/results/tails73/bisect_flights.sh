#!/bin/bash
# good (exit 0): flights RMSE at the 45th session's 36.10; bad (1): 36.12
cd "$(git rev-parse --show-toplevel)"
timeout 900 /work/venv/bin/python benchmarks/bench_accuracy.py --tables flights --no-ebm --out /tmp/p73/bis_out > /tmp/p73/bis_last.log 2>&1 || exit 125
v=$(grep "^| flights" /tmp/p73/bis_out/accuracy.md | awk -F'|' '{print $5}' | tr -d ' *')
echo "$(git rev-parse --short HEAD) $v" >> /tmp/p73/bisect.log
python3 -c "import sys; sys.exit(0 if float('$v') < 36.11 else 1)"
