# make_golden with PAIR_RIDGE set back to RIDGE: the old file's answers (the change is the ridge alone)?
import sys, runpy
sys.path.insert(0, "/work/main"); sys.path.insert(0, "/work/main/tests")
import jaxtree.shapes as S
S.PAIR_RIDGE = S.RIDGE
sys.argv = ["make_golden.py", "--out", "/tmp/p82/golden_back.npz"]
runpy.run_path("/work/main/tests/make_golden.py", run_name="__main__")
