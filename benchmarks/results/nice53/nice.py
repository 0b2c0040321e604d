"""Prototype: widen each covariate's [min, max] to 'nice' round bounds (monkeypatch of
jaxtree._scaling.from_extremes). Experiment only (issue nice53)."""
import numpy as np
import jaxtree._scaling as _sc

ORIGINAL = _sc.from_extremes
LOG = []  # one entry per from_extremes call: (lo0, hi0, lo, hi) flattened arrays


def nice_bounds(x_min, x_max, slack):
    """Vectorised (any leading shape, float64). Columns with span <= 0 (or non-finite)
    are returned unchanged."""
    lo0 = np.asarray(x_min, np.float64)
    hi0 = np.asarray(x_max, np.float64)
    lo0, hi0 = np.broadcast_arrays(lo0, hi0)
    span = hi0 - lo0
    good = np.isfinite(span) & (span > 0)
    sp = np.where(good, span, 1.0)
    e0 = np.floor(np.log10(sp))
    lo, hi = lo0.copy(), hi0.copy()
    done = ~good
    for de in (1, 0, -1, -2):
        for m in (5.0, 2.0, 1.0):
            s = m * 10.0 ** (e0 + de)
            ql, qh = lo0 / s, hi0 / s
            # snap quotients within rounding of an integer (0.3/0.1 = 2.9999999999999996)
            ql = np.where(np.abs(ql - np.round(ql)) < 1e-9, np.round(ql), ql)
            qh = np.where(np.abs(qh - np.round(qh)) < 1e-9, np.round(qh), qh)
            cl = np.minimum(np.floor(ql) * s, lo0)
            ch = np.maximum(np.ceil(qh) * s, hi0)
            ok = ~done & (((ch - cl) - span) <= slack * span)
            lo = np.where(ok, cl, lo)
            hi = np.where(ok, ch, hi)
            done = done | ok
    return lo, hi


def jitter_bounds(x_min, x_max, slack, seed=0):
    """Control: widen each column with span > 0 by a random share u*slack of its span
    (u ~ U(0, 1), split at random between the two ends); bounds not round."""
    lo0 = np.asarray(x_min, np.float64)
    hi0 = np.asarray(x_max, np.float64)
    lo0, hi0 = np.broadcast_arrays(lo0, hi0)
    span = np.where(np.isfinite(hi0 - lo0) & (hi0 > lo0), hi0 - lo0, 0.0)
    rng = np.random.default_rng(seed)
    w = rng.uniform(size=span.shape) * slack * span
    a = rng.uniform(size=span.shape)
    return lo0 - a * w, hi0 + (1 - a) * w


def install(slack):
    """Patch jaxtree._scaling.from_extremes (slack None: restore the original)."""
    if slack is None:
        _sc.from_extremes = ORIGINAL
        return

    jitter = isinstance(slack, str)  # "j0.01": control, non-round widening of random share

    def from_extremes(x_min, x_max, y_min, y_max):
        if jitter:
            lo, hi = jitter_bounds(x_min, x_max, float(slack[1:]))
        else:
            lo, hi = nice_bounds(x_min, x_max, slack)
        LOG.append((np.ravel(np.asarray(x_min, np.float64)).copy(),
                    np.ravel(np.asarray(x_max, np.float64)).copy(), np.ravel(lo), np.ravel(hi)))
        return ORIGINAL(lo, hi, y_min, y_max)

    _sc.from_extremes = from_extremes


def widened_summary(entries):
    """Per call: number of columns changed and the max relative widening."""
    out = []
    for lo0, hi0, lo, hi in entries:
        span = hi0 - lo0
        ch = (lo != lo0) | (hi != hi0)
        rel = np.where(span > 0, ((hi - lo) - span) / np.where(span > 0, span, 1), 0)
        out.append((int(ch.sum()), int(span.size), float(rel.max()) if rel.size else 0.0))
    return out


if __name__ == "__main__":
    # self-check
    for a, b in [(0.0038, 0.9998), (0.3, 0.7), (0, 1), (1.5, 3.7), (-2.3, 97.1), (1960, 2019),
                 (0.0001, 0.0997), (5, 5), (3, 8), (-0.104, 0.17)]:
        for sl in (0.01, 0.05):
            lo, hi = nice_bounds(a, b, sl)
            print(f"[{a}, {b}] slack {sl}: -> [{lo!r}, {hi!r}]")
    lo, hi = nice_bounds(np.array([[0.0038, 2.0], [0.3, 5.0]]), np.array([[0.9998, 2.0], [0.7, 19.7]]), 0.05)
    print(lo, hi)
