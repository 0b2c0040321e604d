import numpy as np, jax, jaxtree
jax.config.update("jax_enable_x64", True)
from jaxtree.datasets import paper_synthetic
for dt in (np.float64, np.float32):
    X, y = paper_synthetic(n=1000, p=10, seed=0); X = X.astype(dt); y = y.astype(dt)
    Xt, _ = paper_synthetic(n=1000, p=10, seed=1); Xt = Xt.astype(dt)
    for est in (jaxtree.TreeRegressor(k=10).fit(X, y), jaxtree.TreeRegressor(k=4, shapes=3).fit(X, y)):
        a = est.predict(Xt); b = np.asarray(jaxtree.predict(est.model_, Xt), np.float64)
        c = est.predict(np.concatenate([Xt, Xt, Xt]))[:1000]  # a 4,096-row block: XLA's defaults
        print(dt.__name__, "shapes" if est.model_.shapes is not None else "tree", "light vs functional max", np.abs(a - b).max(), "light vs default block", np.abs(a - c).max(), "bitwise", (a == c).all())
