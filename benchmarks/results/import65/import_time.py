"""``import ml_dtypes``, ``import jax`` and ``import jaxtree`` in fresh processes, with the
ml_dtypes of each given folder first on the path (sixty-fifth session)::

    pip install --target /tmp/mld07 --no-deps ml_dtypes==0.7.0   # and 0.6.0 to /tmp/mld06
    python import_time.py CHECKOUT /tmp/mld07 /tmp/mld06 [ROUNDS]
"""
import subprocess
import sys

checkout, folders = sys.argv[1], sys.argv[2:4]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
CODE = """
import sys, time
sys.path.insert(0, {folder!r}); sys.path.insert(1, {checkout!r})
import numpy
t0 = time.perf_counter(); import ml_dtypes; t1 = time.perf_counter()
import jax, jax.numpy; t2 = time.perf_counter()
import jaxtree; t3 = time.perf_counter()
print(f"ml_dtypes {{ml_dtypes.__version__}} (numpy {{numpy.__version__}}): import ml_dtypes "
      f"{{t1 - t0:.3f}} s, then jax {{t2 - t1:.3f}} s, then jaxtree {{t3 - t2:.3f}} s; "
      f"jax and jaxtree together {{t3 - t0:.3f}} s")
"""
for _ in range(rounds):
    for folder in folders:
        out = subprocess.run([sys.executable, "-c", CODE.format(folder=folder, checkout=checkout)],
                             capture_output=True, text=True, check=True)
        print(out.stdout.strip(), flush=True)
