"""Fitting one tree over several hosts (e.g. GPU nodes), each holding its own rows.

Run one process per host (all with the same arguments except the process id)::

    # host 0 (also the coordinator)
    python examples/multihost.py --coordinator 10.0.0.1:1234 --num-processes 2 --process-id 0
    # host 1
    python examples/multihost.py --coordinator 10.0.0.1:1234 --num-processes 2 --process-id 1

or set ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID`` (on SLURM or
other managed clusters plain ``jax.distributed.initialize()`` detects them itself).
Pass ``--x FILE.npy --y FILE.npy`` (float32, loaded as memmaps; each process reads only its
slice of rows) or nothing for a synthetic problem generated per process.

To try it on one CPU machine with two processes::

    python examples/multihost.py --cpu --coordinator localhost:12355 --num-processes 2 --process-id 0 &
    python examples/multihost.py --cpu --coordinator localhost:12355 --num-processes 2 --process-id 1

How it works: every process computes the global scaling from all processes' min/max
(``process_allgather``), cuts its own rows into the same number of chunks of
``chunk_size / n_processes`` rows (padding with zero-weight rows), and
``jax.make_array_from_process_local_data`` assembles global ``(n_chunks, chunk_size, p)``
arrays sharded ``P(None, "data")`` over a mesh of every device of every process. The
unchanged jitted ``jaxtree.search.step`` then runs SPMD and its row sums become
cross-host all-reduces (see ``jaxtree/sharding.py``).
"""

from __future__ import annotations

import argparse
import os
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coordinator", default=os.environ.get("JAX_COORDINATOR_ADDRESS"))
    ap.add_argument("--num-processes", type=int,
                    default=int(os.environ.get("JAX_NUM_PROCESSES", "0")) or None)
    ap.add_argument("--process-id", type=int,
                    default=int(os.environ["JAX_PROCESS_ID"]) if "JAX_PROCESS_ID" in os.environ else None)
    ap.add_argument("--x", help="float32 .npy of X (n, p); each process reads its own rows")
    ap.add_argument("--y", help="float32 .npy of y (n,)")
    ap.add_argument("--n", type=int, default=200_000, help="synthetic rows per process")
    ap.add_argument("--p", type=int, default=8)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--chunk-size", type=int, default=8192, help="global rows per chunk")
    ap.add_argument("--refine", default="coordinate", choices=["coordinate", "optax", "none"])
    ap.add_argument("--cpu", action="store_true", help="CPU processes (local test)")
    ap.add_argument("--save", default="multihost_model.json")
    a = ap.parse_args()

    import jax

    if a.cpu:
        jax.config.update("jax_platforms", "cpu")
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=a.coordinator, num_processes=a.num_processes,
                               process_id=a.process_id)

    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import multihost_utils
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    import jaxtree
    from jaxtree import _scaling as scaling_
    from jaxtree import model as model_
    from jaxtree import scoring, search

    pid, nproc = jax.process_index(), jax.process_count()

    # ---- this process's rows (never the whole data set)
    if a.x:
        X = np.load(a.x, mmap_mode="r")
        Y = np.load(a.y, mmap_mode="r")
        n = X.shape[0]
        lo, hi = pid * n // nproc, (pid + 1) * n // nproc
        x = np.asarray(X[lo:hi], np.float64)
        y = np.asarray(Y[lo:hi], np.float64)
    else:
        x, y = jaxtree.datasets.paper_synthetic(n=a.n, p=a.p, seed=pid)
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    n_local, p = x.shape

    # ---- global scaling from every process's ranges (one small all-gather)
    stats = np.concatenate([x.min(0), x.max(0), [y.min(), y.max(), n_local]]).astype(np.float32)
    allst = np.asarray(multihost_utils.process_allgather(stats))  # (nproc, 2p+3)
    x_min, x_max = allst[:, :p].min(0), allst[:, p:2 * p].max(0)
    y_lo, y_hi = allst[:, 2 * p].min(), allst[:, 2 * p + 1].max()
    sc = scaling_.from_extremes(x_min, x_max, y_lo, y_hi)  # the estimator's scaling
    xs, ys = (a_.astype(np.float32) for a_ in scaling_.apply(sc, x, y))
    x_min, x_scale, y_center, y_scale = sc

    # ---- same chunk count everywhere; pad this process's rows with zero weights
    devices = jax.devices()  # all devices of all processes, process-major
    mesh = Mesh(np.asarray(devices), ("data",))
    m_global = -(-a.chunk_size // len(devices)) * len(devices)
    m_local = m_global * jax.local_device_count() // len(devices)
    nc = int(-(-allst[:, -1].max() // m_local))
    pad = nc * m_local - n_local
    xl = np.pad(xs, ((0, pad), (0, 0))).reshape(nc, m_local, p)
    yl = np.pad(ys, (0, pad)).reshape(nc, m_local)
    wl = np.pad(np.ones(n_local, np.float32), (0, pad)).reshape(nc, m_local)
    sh = NamedSharding(mesh, P(None, "data"))
    data = scoring.Data(
        jax.make_array_from_process_local_data(sh, xl, (nc, m_global, p)),
        jax.make_array_from_process_local_data(sh, yl, (nc, m_global)),
        jax.make_array_from_process_local_data(sh, wl, (nc, m_global)))

    # ---- the unchanged search, SPMD over every device
    basis = jaxtree.get_basis(None)
    cfg = search.Config(max_k=a.k, refine=None if a.refine == "none" else a.refine)
    t0 = time.perf_counter()

    def progress(it, loss, info):
        if pid == 0:
            print(f"iteration {it:2d}  mse(scaled) {loss:.6g}  {time.perf_counter() - t0:.1f}s",
                  flush=True)
        return False

    res = search.fit(data, basis, a.k, cfg, callback=progress)
    if pid == 0:
        program = jax.tree_util.tree_map(lambda t: jnp.asarray(np.asarray(t)), res.program)
        model = model_.TreeModel(program, jnp.asarray(x_min, jnp.float32),
                                 jnp.asarray(x_scale, jnp.float32),
                                 jnp.asarray(y_center, jnp.float32),
                                 jnp.asarray(y_scale, jnp.float32), basis,
                                 tuple(f"x{j + 1}" for j in range(p)))
        print(model.formula(3))
        print(f"{nproc} processes, {len(devices)} devices, "
              f"{int(allst[:, -1].sum())} rows, fit {time.perf_counter() - t0:.1f}s")
        model_.save(model, a.save, {"history": [float(h) * y_scale ** 2 for h in res.history]})
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
