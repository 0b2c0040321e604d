import json, sys, collections
rows = collections.defaultdict(list)
for f in sys.argv[1:]:
    for line in open(f):
        if line.startswith("{"): r = json.loads(line); rows[r["table"]].append(r)
print("| table | training rows | default | chosen | change | additive kept | warm fit: without → with |")
print("|---|---:|---:|---:|---:|---:|---:|")
for t, rs in rows.items():
    d = sum(r["default"] for r in rs) / len(rs); k = sum(r["kept"] for r in rs) / len(rs)
    add = sum(r["order"].startswith("additive") for r in rs)
    t0 = sorted(r["t0"] for r in rs)[len(rs)//2]; t1 = sorted(r["t"] for r in rs)[len(rs)//2]
    print(f"| {t} | {rs[0]['n']} | {d:.4g} | {k:.4g} | {100*(k/d-1):+.1f}% | {add} of {len(rs)} | {t0:.2f} → {t1:.2f} s |")
