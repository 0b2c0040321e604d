"""benchmarks/bench_accuracy.py with jaxtree.search.PAIR_WORK from the environment:

    PAIR_WORK=4294967296 python benchmarks/results/pairwork67/accuracy.py --tables wage --no-ebm --out DIR
    PAIR_WORK=1073741824 python benchmarks/results/pairwork67/accuracy.py --tables wage --no-ebm --out DIR
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from jaxtree import search
if os.environ.get("PAIR_WORK"):
    search.PAIR_WORK = int(os.environ["PAIR_WORK"])
import bench_accuracy
bench_accuracy.main(sys.argv[1:])
