"""pair.py with B patched by an environment setting (VAR=VALUE, the fifth argument; worker2.py), each
worker with its own empty cache: python pair2.py A B CASE ROUNDS VAR=VALUE."""
import pathlib, subprocess, sys, statistics, json
a, b, case, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
import os
import tempfile
envs = {a: dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp()), b: dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp(), **dict([sys.argv[5].split('=')]))}
env = dict(__import__("os").environ)
ws = {r: subprocess.Popen([sys.executable, str(pathlib.Path(__file__).with_name("worker2.py")), r, case], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env=envs[r]) for r in (a, b)}
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
json.dump({"case": case, "a": a, "b": b, "ta": ta, "tb": tb}, open(str(pathlib.Path(__file__).with_name(f"pair2_{case}_{sys.argv[5]}.json")), "w"))
