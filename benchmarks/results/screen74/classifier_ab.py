"""One process, TreeClassifier screen_rows 0 against "auto", alternating warm fits on a bench_cost
case, the choices of each: python benchmarks/results/screen74/classifier_ab.py CASE REPEATS"""
import pathlib, sys, time, warnings, statistics
ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
warnings.simplefilter("ignore")
import bench_cost as bc, bench_accuracy as acc, jaxtree
case = sys.argv[1]; reps = int(sys.argv[2])
task, Xtr, ytr, Xte, yte = bc.split(case)
modes = {"off": {"screen_rows": 0}, "auto": {}}
res = {m: [] for m in modes}
for m, kw in modes.items():
    e = jaxtree.TreeClassifier(**kw).fit(Xtr, ytr)
    print(m, "AUC", acc.score(task, e, Xte, yte), " ".join(f"{c['op']}{c['slot']}:{c['feature']}/{c['basis']}" for c in e.choices_), flush=True)
for r in range(reps):
    for m, kw in modes.items():
        t = time.perf_counter(); jaxtree.TreeClassifier(**kw).fit(Xtr, ytr); res[m].append(time.perf_counter() - t)
for m, v in res.items(): print(m, [round(x, 3) for x in v], "median", round(statistics.median(v), 3))
