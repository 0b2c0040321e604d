"""Three classes with a held-out size: warmup(classifier=True, classes=3,
    validation_fraction=0.2) for the 1,000 x 10 bucket, then a new process's first fit of a
    three-class 900 x 9 table with the same setting: its time, compilations and their names.

    XDG_CACHE_HOME=DIR python after_warmup3_held.py warm
    XDG_CACHE_HOME=DIR python after_warmup3_held.py LABEL
"""
import sys, time, warnings, numpy as np, jax, jaxtree
from jaxtree.debug import count_compilations
warnings.simplefilter("ignore")
names=[]
jax.monitoring.register_event_duration_secs_listener(lambda e, d, **k: names.append(k.get('fun_name')) if 'backend_compile' in e else None)
if sys.argv[1] == "warm":
    jaxtree.warmup([(1000, 10)], classifier=True, classes=3, validation_fraction=0.2, progress=False)
else:
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(900, 9))
    y = np.cos(4 * X[:, 1]) + X[:, 0] * X[:, 2] + 0.2 * rng.normal(size=900)
    t = time.perf_counter()
    with count_compilations() as c:
        jaxtree.TreeClassifier(validation_fraction=0.2).fit(X, np.digitize(y, np.quantile(y, [1/3, 2/3])))
    print(sys.argv[1], round(time.perf_counter() - t, 2), c.compiles, names)
