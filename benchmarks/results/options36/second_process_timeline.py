"""The demo's fit in a second process, each executable-cache load and each program's first call
timed from the process's start (thread, start-end). Run twice on one fresh cache, from the
repository root (the first run fills it)::

    export XDG_CACHE_HOME=$(mktemp -d)
    PYTHONPATH=. python benchmarks/results/options36/second_process_timeline.py > /dev/null
    PYTHONPATH=. python benchmarks/results/options36/second_process_timeline.py
"""
import time, threading
T0 = time.perf_counter()
import jaxtree
from jaxtree import _executables as E
ev = []
orig_load = E._load
def load(path, in_tree=None):
    t = time.perf_counter() - T0
    r = orig_load(path, in_tree)
    ev.append((t, time.perf_counter() - T0, threading.current_thread().name[:14], "load " + path[-12:]))
    return r
E._load = load
orig_call = E.cached.__call__
def call(self, *a):
    t = time.perf_counter() - T0
    r = orig_call(self, *a)
    ev.append((t, time.perf_counter() - T0, threading.current_thread().name[:14], "call " + self.name.rsplit(".", 1)[-1]))
    return r
E.cached.__call__ = call
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(n=1000, p=10, seed=0)
t1 = time.perf_counter() - T0
est = jaxtree.TreeRegressor(k=10).fit(X, y)
t2 = time.perf_counter() - T0
seen = set()
for e in sorted(ev):
    if e[3].startswith("call") and e[3] in seen and e[1] - e[0] < 0.01: continue
    seen.add(e[3]); print("%6.3f-%6.3f %-14s %s" % e)
print("fit %.3f -> %.3f (%.3f s)" % (t1, t2, t2 - t1))
