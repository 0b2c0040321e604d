"""breast cancer's pair screen: its five programs compiled one by one (parts) against one
fused program (fused), fresh process, the light options."""
import os, sys, time, warnings
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import jax, jax.numpy as jnp, numpy as np
from jaxtree import shapes as S, scoring, _executables as E
from sklearn.datasets import load_breast_cancer
warnings.simplefilter("ignore")
X, y = load_breast_cancer(return_X_y=True)
x = (X - X.min(0)) / (X.max(0) - X.min(0))
data = scoring.chunk(np.asarray(x, np.float32), np.asarray(y * 2 - 1.0, np.float32), chunk_size=1024)
import itertools
cols = x.shape[1]
pairs = tuple(itertools.combinations(range(cols), 2))
head = data
mains = S.ShapeSpec(n1=8, n2=3, max_terms=cols, pairs=(), groups=())
coarse = S.ShapeSpec(n1=2, n2=3, max_terms=1, pairs=pairs, groups=())
on = np.ones(cols, bool); order = np.arange(cols, dtype=np.int32)
opts = {**E._MARK, **E.LIGHT_LLVM1}
def fused(head, on, order, mains, coarse):
    st = S.start(head, mains)
    st = st._replace(shapes=st.shapes._replace(main_on=on, order=order, n_terms=jnp.sum(on).astype(jnp.int32)))
    st = S.finish(st, head, S.grams(head, mains), mains, 3)
    return S._screen_gains(head, st.fit, S.grams(head, coarse), coarse)
t0 = time.perf_counter()
if sys.argv[1] == "fused":
    f = jax.jit(fused, static_argnums=(3, 4))
    exe = f.lower(head, on, order, mains, coarse).compile(compiler_options=opts)
    g = exe(head, on, order)
else:
    c = lambda fn, sa, *a: jax.jit(fn, static_argnums=sa).lower(*a).compile(compiler_options=opts)(*[v for i, v in enumerate(a) if i not in sa])
    st = c(S.start, (1,), head, mains)
    st = st._replace(shapes=st.shapes._replace(main_on=jnp.asarray(on), order=jnp.asarray(order), n_terms=jnp.asarray(np.int32(cols))))
    gr = c(S.grams, (1,), head, mains)
    st = c(S.finish, (3, 4), st, head, gr, mains, 3)
    gr2 = c(S.grams, (1,), head, coarse)
    g = c(S._screen_gains, (3,), head, st.fit, gr2, coarse)
jax.block_until_ready(g)
print(sys.argv[1], round(time.perf_counter() - t0, 2), float(jnp.nansum(jnp.where(jnp.isfinite(g), g, 0))))
