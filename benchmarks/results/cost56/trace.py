"""A profiler trace of one warm fit of a bench_cost case (``python trace.py CASE``, from the
repository root): fits twice, then traces the third and prints the host-side calls and XLA
operations by total time. ``mods.py DIR N`` prints the time per program and operation."""
import sys, time, warnings, glob, gzip, json, collections
import pathlib
ROOT = str(pathlib.Path(__file__).resolve().parents[3])
sys.path.insert(0, ROOT + "/benchmarks"); sys.path.insert(0, ROOT)
warnings.simplefilter("ignore")
import jax
import bench_cost, bench_accuracy as acc
case = sys.argv[1]
task, Xtr, ytr, Xte, yte = bench_cost.split(case)
make = lambda: acc.jaxtree_model(task)
est = make().fit(Xtr, ytr); est = make().fit(Xtr, ytr)
d = f"/tmp/jaxtree_trace_{case}"  # the trace (tens of MB) stays out of the repository
with jax.profiler.trace(d, create_perfetto_trace=True):
    t = time.perf_counter(); est = make().fit(Xtr, ytr); print("fit", time.perf_counter() - t)
f = glob.glob(d + "/**/*.json.gz", recursive=True)[0]
ev = json.load(gzip.open(f))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
names = {}
for e in ev:
    if e.get("ph") == "M" and e.get("name") == "thread_name":
        names[(e["pid"], e["tid"])] = e["args"]["name"]
tot = collections.Counter(); cnt = collections.Counter()
for e in ev:
    if e.get("ph") == "X":
        tot[e["name"]] += e.get("dur", 0); cnt[e["name"]] += 1
for n, d_ in tot.most_common(45): print(f"{d_/1000:9.1f} ms {cnt[n]:5d}  {n[:120]}")
