"""bench_accuracy on classification tables with the classifier's Newton steps sweeping SW times: python runc.py SW TABLES"""
import pathlib, sys
ROOT = pathlib.Path(__file__).resolve().parents[4]  # run at 7b30df3
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
SW = int(sys.argv[1])
from jaxtree._fit import host_shapes as H
from jaxtree import shapes as S
from jaxtree._fit import classify as C
rh, rd = H.refit, S.refit
class HW:  # the classify module's view of host_shapes
    def __getattr__(self, k): return getattr(H, k)
    def refit(self, t, d, s, sweeps=1): return rh(t, d, s, SW if sweeps == 1 else sweeps)
class SWM:
    def __getattr__(self, k): return getattr(S, k)
    def refit(self, t, d, s, sweeps=3, gr=None): return rd(t, d, s, SW if sweeps == 1 else sweeps, gr)
C.host_shapes = HW(); C.shapes_ = SWM()
import bench_accuracy as acc
acc.main(["--tables", sys.argv[2], "--no-ebm", "--out", f"/tmp/class_sw{SW}_{sys.argv[2].replace(',', '_')}"])
