"""bench_accuracy at another split seed: ROOT=<checkout> SEED=1 python seed.py --tables ... --out ..."""
import os, sys
root = os.environ["ROOT"]
sys.path.insert(0, root); sys.path.insert(0, os.path.join(root, "benchmarks"))
import bench_accuracy as ba
ba.SEED = int(os.environ.get("SEED", "1"))
ba.main(sys.argv[1:])
