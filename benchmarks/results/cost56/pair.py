"""Paired warm fits of two checkouts: one worker process each, fits alternating A B B A.

    python pair.py A B CASE ROUNDS [VAR=VALUE]

With VAR=VALUE, B's worker runs with that lever patched in (worker.py) and each worker with its own
empty cache (A and B may then be two checkouts of one commit)."""
import pathlib, subprocess, sys, statistics, json
a, b, case, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
import os, tempfile
patch = sys.argv[5] if len(sys.argv) > 5 else None
env = {a: dict(os.environ), b: dict(os.environ)}
if patch:
    env = {r: dict(e, XDG_CACHE_HOME=tempfile.mkdtemp()) for r, e in env.items()}
    env[b].update([patch.split("=", 1)])
ws = {r: subprocess.Popen([sys.executable, str(pathlib.Path(__file__).with_name("worker.py")), r, case], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=env[r]) for r in (a, b)}
for r in (a, b):
    assert ws[r].stdout.readline().strip() == "ready"
def fit(r):
    ws[r].stdin.write("go\n"); ws[r].stdin.flush(); return float(ws[r].stdout.readline())
ta, tb = [], []
for i in range(rounds):
    order = (a, b) if i % 2 == 0 else (b, a)
    for r in order:
        (ta if r == a else tb).append(fit(r))
for w in ws.values(): w.stdin.close(); w.wait()
d = [x - y for x, y in zip(tb, ta)]
se = statistics.stdev(d) / len(d) ** 0.5
print(f"{case}: A {statistics.median(ta):.3f} s  B {statistics.median(tb):.3f} s  B-A mean {statistics.mean(d):+.3f} s (se {se:.3f}), B faster in {sum(x < 0 for x in d)}/{len(d)}")
json.dump({"case": case, "a": a, "b": b, "ta": ta, "tb": tb}, open(str(pathlib.Path(__file__).with_name(f"pair_{case}_{patch or pathlib.Path(b).name}.json")), "w"))
