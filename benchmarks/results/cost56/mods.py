"""Per-program and per-operation XLA time of a profiler trace (trace.py): python mods.py DIR [N]."""
import glob, gzip, json, collections, sys
d = sys.argv[1]
f = glob.glob(d + "/**/*.json.gz", recursive=True)[0]
ev = json.load(gzip.open(f)); ev = ev["traceEvents"] if isinstance(ev, dict) else ev
# top-level thunk ops only: take events with hlo_op, and subtract nested by using only events not contained in other hlo events on same thread
xs = sorted([e for e in ev if e.get("ph") == "X" and "hlo_op" in (e.get("args") or {})], key=lambda e: (e["pid"], e["tid"], e["ts"], -e["dur"]))
tot = collections.Counter(); ops = collections.Counter()
end = {}
for e in xs:
    key = (e["pid"], e["tid"])
    if key in end and e["ts"] < end[key]:
        continue  # nested
    end[key] = e["ts"] + e["dur"]
    tot[e["args"]["hlo_module"]] += e["dur"]
    ops[(e["args"]["hlo_module"], e["args"]["hlo_op"])] += e["dur"]
for k, v in tot.most_common(12): print(f"{v/1000:8.1f} ms {k}")
print()
for k, v in ops.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 20): print(f"{v/1000:8.1f} ms {k}")
