import sys, time, numpy as np, warnings
sys.path.insert(0, "/tmp/%s38/benchmarks" % sys.argv[1]); warnings.simplefilter("ignore")
import bench_cost as bc
import jaxtree
task, X, y = bc.load("diamonds_1e4")
perm = np.random.default_rng(bc.acc.SEED).permutation(len(y)); tr = perm[: int(0.8 * len(y))]
X, y = bc.rows_of(X, tr), y[tr]
bc.acc.jaxtree_model(task).fit(X, y)
ts = []
for _ in range(4):
    t = time.perf_counter(); bc.acc.jaxtree_model(task).fit(X, y); ts.append(time.perf_counter() - t)
print(jaxtree.__file__, np.median(ts), file=open("/tmp/exp/warm_d_%s.txt" % sys.argv[1], "a"))
