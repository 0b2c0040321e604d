"""Summarises one run of the suite with ``benchmarks/results/pair41/compile_log.py`` and
``--durations=0``:

    PYTHONPATH=benchmarks/results/pair41 PROF_DIR=DIR python -m pytest -q -p no:cacheprovider \
        -p compile_log --durations=0 > DIR/LOG 2>&1
    python benchmarks/results/suite43/analyse.py DIR [OUT.json]

Prints the compilations (all, distinct, repeated within a worker and across workers), the
distinct programs' XLA seconds by program name and by test file, and each test's estimated
saving if it left the default suite: its own seconds less the XLA seconds of programs that
another test also compiles (those would be compiled there instead). OUT.json: per test, its
seconds, XLA seconds and XLA seconds of programs no other test compiles."""
import collections
import glob
import json
import os
import re
import sys

d = sys.argv[1]
rows = []  # (worker, test, program name, text hash, seconds, text length)
for f in sorted(glob.glob(os.path.join(d, "*.log.json"))):
    w = os.path.basename(f).split(".")[0]
    rows += [(w, *r) for r in json.load(open(f))["rows"]]
print(f"compilations {len(rows)}, XLA {sum(r[4] for r in rows):.1f} s")
first = {}
for r in rows:
    first.setdefault(r[3], r)
print(f"distinct programs {len(first)}, their first compilations {sum(r[4] for r in first.values()):.1f} s")
seen_w, within, across = set(), 0.0, 0.0
for r in rows:
    if (r[0], r[3]) in seen_w:
        within += r[4]
    elif first[r[3]][0] != r[0]:
        across += r[4]
    seen_w.add((r[0], r[3]))
print(f"repeated within a worker {within:.1f} s, first compiled by the other worker {across:.1f} s")

by_name, n_name, by_file = collections.Counter(), collections.Counter(), collections.Counter()
for r in first.values():
    by_name[r[2]] += r[4]
    n_name[r[2]] += 1
    by_file[(r[1] or "(outside a test)").split("::")[0]] += r[4]
print("\ndistinct programs' XLA seconds by name:")
for k, s in by_name.most_common(15):
    print(f"  {s:7.1f} s {n_name[k]:5d}  {k}")
print("\nby the test file that compiled them first:")
for k, s in by_file.most_common(15):
    print(f"  {s:7.1f} s  {k}")

tests_of = collections.defaultdict(set)
for r in rows:
    tests_of[r[3]].add(r[1])
xla, own = collections.Counter(), collections.Counter()
for r in rows:
    xla[r[1]] += r[4]
    if len(tests_of[r[3]]) == 1:
        own[r[1]] += r[4]
dur = collections.Counter()
for line in open(os.path.join(d, "LOG")):
    m = re.match(r"^([0-9.]+)s (?:call|setup|teardown)\s+(.+?)\s*$", line)  # ids may hold spaces
    if m:
        dur[m.group(2)] += float(m.group(1))
est = sorted(((s - (xla[t] - own[t]), s, t) for t, s in dur.items()), reverse=True)
print(f"\nsummed test time {sum(dur.values()):.0f} s; the 25 largest estimated savings:")
for sv, s, t in est[:25]:
    print(f"  {sv:6.1f} of {s:6.1f} s  {t}")
if len(sys.argv) > 2:
    json.dump({t: {"seconds": round(s, 2), "xla_s": round(xla[t], 2),
                   "xla_s_only_this_test": round(own[t], 2)} for t, s in dur.items()},
              open(sys.argv[2], "w"), indent=1, sort_keys=True)
