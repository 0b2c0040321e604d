import json, glob, collections
wall = {}; ev = collections.defaultdict(lambda: collections.defaultdict(float))
for f in glob.glob("/tmp/p83/prof/*.json"):
    d = json.load(open(f)); wall.update(d["wall"])
    for k, v in d["events"].items():
        for e, t in v.items(): ev[k][e] += t
files = collections.defaultdict(lambda: collections.defaultdict(float))
for k, w in wall.items():
    fn = k.split("::")[0]; files[fn]["wall"] += w
    for e, t in ev.get(k, {}).items(): files[fn][e] += t
kinds = sorted({e for v in ev.values() for e in v})
print(kinds)
tot = collections.defaultdict(float)
for fn, d in files.items():
    for e, t in d.items(): tot[e] += t
print({k: round(v) for k, v in tot.items()})
rows = sorted(files.items(), key=lambda kv: -kv[1]["wall"])
for fn, d in rows[:40]:
    c = d.get("backend_compile_duration", 0); tr = d.get("jaxpr_trace_duration", 0); lo = d.get("jaxpr_to_mlir_module_duration", 0)
    print(f"{d['wall']:6.1f} xla {c:5.1f} trace {tr:5.1f} lower {lo:5.1f} rest {d['wall']-c-tr-lo:5.1f} {fn}")
