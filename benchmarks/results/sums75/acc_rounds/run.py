"""bench_accuracy on one table under a variant: python run.py VARIANT TABLE"""
import pathlib, sys
ROOT = pathlib.Path(__file__).resolve().parents[4]  # run at f6b7d44 (one sweep)
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
from jaxtree._fit import source
variant = sys.argv[1]
if variant == "rounds2":
    real = source.InMemory.backfit
    def twice(self, program, terms, sspec, fit=None, grams=None):
        terms, program, mse = real(self, program, terms, sspec, fit, grams)
        return real(self, program, terms, sspec, fit, grams)
    source.InMemory.backfit = twice
if variant.startswith("rounds") and variant != "rounds2":
    R = int(variant[6:])
    realR = source.InMemory.backfit
    def many(self, program, terms, sspec, fit=None, grams=None):
        for _ in range(R):
            terms, program, mse = realR(self, program, terms, sspec, fit, grams)
        return terms, program, mse
    source.InMemory.backfit = many
if False:
    real3 = source.InMemory.backfit
    def thrice(self, program, terms, sspec, fit=None, grams=None):
        for _ in range(3):
            terms, program, mse = real3(self, program, terms, sspec, fit, grams)
        return terms, program, mse
    source.InMemory.backfit = thrice
if variant == "sweeps2":
    from jaxtree import shapes as S
    real_refit = S.refit
    S.refit = lambda shapes, data, spec, sweeps=3, gr=None: real_refit(shapes, data, spec, 2 if sweeps == 1 else sweeps, gr)
import bench_accuracy as acc
acc.main(["--tables", sys.argv[2], "--no-ebm", "--out", f"/tmp/acc_{variant}_{sys.argv[2]}"])
