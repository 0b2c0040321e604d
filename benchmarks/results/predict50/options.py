import sys, time, numpy as np, jaxtree
from jaxtree import model as model_, _executables as ex
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(n=int(sys.argv[3]) if len(sys.argv) > 3 else 1000, p=10, seed=0)
Xt, yt = paper_synthetic(n=int(sys.argv[2]) if len(sys.argv) > 2 else 1000, p=10, seed=1)
est = jaxtree.TreeRegressor(k=10).fit(X, y)
cap = {}
real = model_._predict_cached.__call__
orig = model_._predict_cached
class Spy:
    def __call__(self, *a):
        cap['a'] = a; raise StopIteration
model_._predict_cached = Spy()
try:
    est.predict(Xt)
except StopIteration:
    pass
model_._predict_cached = orig
args = cap['a']
opts = {"default": {}, "light": ex.LIGHT, "quick": ex.QUICK, "llvm1": ex.LIGHT_LLVM1}[sys.argv[1]]
lowered = model_._predict_jit.lower(*args)
t = time.perf_counter(); exe = lowered.compile(compiler_options=opts or None); c = time.perf_counter() - t
dyn = [a for i, a in enumerate(args) if i != 2]
exe(*dyn).block_until_ready()
ts = []
for _ in range(50):
    t = time.perf_counter(); exe(*dyn).block_until_ready(); ts.append(time.perf_counter() - t)
print(f"{sys.argv[1]:8s} rows {Xt.shape[0]}: compile {c:.3f} s, run median {np.median(ts)*1e3:.3f} ms, shapes {est.model_.shapes is not None}")
