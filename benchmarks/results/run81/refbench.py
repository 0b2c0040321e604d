"""The joint L-BFGS refinement alone on a paper fit's tree (40,000 rows x 8 of the paper's function,
weights scaled by 0.9): times at 1, 5 and 20 steps, a loss pass, and the loss after each step count:
    python refbench.py 40000
"""
import time, sys, numpy as np, jax, jax.numpy as jnp
from jaxtree import basis as basis_, scoring, refine
import jaxtree
from jaxtree.datasets import paper_synthetic
n=int(sys.argv[1]) if len(sys.argv)>1 else 40000
X, y = paper_synthetic(n, p=8, seed=0)
m = jaxtree.TreeRegressor.paper(k=10).fit(X, y)
M = m.model_
Xs = ((X - np.asarray(M.x_min)) / np.asarray(M.x_scale)).astype(np.float32)
ys = ((y - float(M.y_center)) / float(M.y_scale)).astype(np.float32)
data = scoring.chunk(jnp.asarray(Xs), jnp.asarray(ys), None, 2048)
p0 = M.program
# perturb weights so refinement has work
p0 = p0._replace(weight=p0.weight * 0.9)
J = jax.jit(refine.joint, static_argnames=("basis", "steps"))
def lossonly(p, d, basis):
    return refine.mse(p, refine.coarse(d), basis)
L = jax.jit(lossonly, static_argnames=("basis",))
def vg(p, d, basis):
    return jax.value_and_grad(lambda w: refine.mse(p._replace(weight=w), refine.coarse(d), basis))(p.weight)
VG = jax.jit(vg, static_argnames=("basis",))
for steps in (1, 5, 20):
    out = J(p0, data, basis=M.basis, steps=steps); jax.block_until_ready(out)
    ts=[]
    for _ in range(5):
        t=time.perf_counter(); out=J(p0, data, basis=M.basis, steps=steps); jax.block_until_ready(out); ts.append(time.perf_counter()-t)
    print("steps", steps, "min ms", round(1e3*min(ts),2), "loss", float(out[1]))
for f,name in ((L,"mse"),(VG,"value_and_grad")):
    o=f(p0,data,basis=M.basis); jax.block_until_ready(o)
    ts=[]
    for _ in range(20):
        t=time.perf_counter(); o=f(p0,data,basis=M.basis); jax.block_until_ready(o); ts.append(time.perf_counter()-t)
    print(name, "min ms", round(1e3*min(ts),3))
print("leaves", int((np.asarray(p0.op)==0).sum()) if hasattr(p0,'op') else None, p0.weight.shape)
prev=None
for steps in range(1,21):
    out = J(p0, data, basis=M.basis, steps=steps)
    l=float(out[1]); print(steps, l, None if prev is None else (prev-l)/prev); prev=l
fn = refine._chunked_loss(M.basis, "squared")
def vgc(p, d):
    d = refine.coarse(d)
    cache = refine.leaf_cache(p, d, M.basis)
    d = d._replace(phi=None)
    return cache, d
cache, dd = jax.jit(vgc)(p0, data)
VGC = jax.jit(lambda params, p, d, c: jax.value_and_grad(lambda pr: fn(pr, p, d, c))(params))
o = VGC((p0.weight, p0.intercept), p0, dd, cache); jax.block_until_ready(o)
ts=[]
for _ in range(50):
    t=time.perf_counter(); o=VGC((p0.weight, p0.intercept), p0, dd, cache); jax.block_until_ready(o); ts.append(time.perf_counter()-t)
print("cached value_and_grad min ms", round(1e3*min(ts),3), "cache", cache.shape)
