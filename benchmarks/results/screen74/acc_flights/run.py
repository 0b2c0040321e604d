"""bench_accuracy on one table with the insertions screened from 32,768 rows on 8,192 (the rule
built at 1c77730; "lower") or as at 6a92db2 (from 65,536): python run.py lower flights"""
import pathlib, sys
ROOT = pathlib.Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
from jaxtree import scoring
if sys.argv[1] == "lower":
    scoring.screen_for = lambda n: 16_384 if n >= 65_536 else 8_192 if n >= 32_768 else 0
import bench_accuracy as acc
acc.main(["--tables", sys.argv[2], "--no-ebm", "--out", f"/tmp/acc_{sys.argv[1]}_{sys.argv[2]}"])
