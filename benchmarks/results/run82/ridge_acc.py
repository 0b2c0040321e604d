"""bench_accuracy with the shape terms' ridge weight jaxtree.shapes.RIDGE set by RIDGE=... (the
host stages read it at run time; the compiled ones through _block_system's default, patched
here before anything is traced; run with JAXTREE_COMPILATION_CACHE=0):
    RIDGE=1e-2 JAXTREE_COMPILATION_CACHE=0 python benchmarks/results/run82/ridge_acc.py --no-ebm --out DIR"""
import os, pathlib, sys
_R = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(_R)); sys.path.insert(0, str(_R / "benchmarks"))
import jaxtree.shapes as S
if os.environ.get("RIDGE"):
    S.RIDGE = float(os.environ["RIDGE"])
    d = list(S._block_system.__defaults__); d[-1] = S.RIDGE; S._block_system.__defaults__ = tuple(d)
import bench_accuracy
bench_accuracy.main()
