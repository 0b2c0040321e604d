"""The shape stage on the host where compiling dominates: the shape search's kernels in numpy.

The same algorithm as :mod:`jaxtree.shapes` (the Grams, the ridge gains of every candidate
block, the greedy step with its hierarchy rule, the box-constrained block backfitting with
two-valued covariates made linear, the held-out errors, the pair screen), written for the
host: float64 arithmetic inside each step, the state carried in the data's dtype as the
compiled stage carries it, and nothing compiled. :class:`jaxtree._fit.stages.HostFit` binds
these kernels to the shape stage's interface (:class:`jaxtree._fit.stages.OneFit`), so
:func:`jaxtree._fit.stages.choose_shapes` and the order choice run them unchanged.

Decision (sixty-second session, issue 27): a small table's shape stage (fewer than
:data:`jaxtree._fit.spec.FINE_KNOTS_MIN_ROWS` rows: 3 hats a main shape, 2 x 2 a pair, so
blocks of at most 4 coefficients) does a few milliseconds of arithmetic, yet its compiled
programs (the Grams, the factor table, the start, the step, the held-out errors) cost about
2 s of CPU to trace, lower and compile in a first fit, on the two cores the search's own
compilations need. Here the stage costs milliseconds and compiles nothing: the demo's
first fit 3.70 -> 2.98 s with this stage alone, 3.57 -> 2.54 s in a later run with the
tree's values and the size selection's held-out errors on the host too (medians of fresh
processes, old and new alternating; warm fits level;
BENCHMARKS.md, "The small table's shape stage on the host"). The choices are the compiled stage's: a test runs both
in float64 on random tables (with padding rows and columns, pair slots, a two-valued
covariate and the pair screen) and finds the same terms, coefficients and losses to
1e-9; in float32 the two differ by float rounding only (float64 here), which can break a
near-tie between two candidates' gains or two counts' held-out errors differently.
Larger blocks (``(32, 16)`` hats from 2,000 rows: pairs of 256 coefficients) kept the
compiled search then: on the host it ran 0.9 s longer warm on a 20,000 x 10 table (every
pair slot's dense Grams, right-hand sides and inverted systems on the fit's thread, where
the compiled stage's ran beside the search's compilations) and its first fit was no
shorter.

Decision (seventy-seventh session, issue 27): the stage runs here at those knots too,
wherever compiling dominates an in-memory CPU fit on one device
(:data:`jaxtree._fit.spec.HOST_SHAPES`). Since the seventy-sixth session's counts by cell
(:class:`_Blocks`) the Grams and right-hand sides cost ``O(N)`` a block; what was left
was inverting every pair slot's 256 x 256 system (0.12 s of the stage). Now the padding
pair slots are skipped and the live ones' systems factored by a block Cholesky of their
block-tridiagonal Grams (:class:`_Factors`). On the 20,000 x 10 table with a category
(14 encoded columns, 45 live pairs of 64 slots) the stage takes 273-311 ms warm against
the compiled one's 287-309 ms, and the first fit no longer compiles the stage's five
programs (about 3.6 s of compiling on the two cores and 1.1 s of tracing and lowering on
the fit's thread): 4.9-5.2 -> 2.9-3.1 s, the same predictions, warm fits level
(BENCHMARKS.md, "The fine-knot shape stage on the host").

Decision (sixty-third session, issue 27): the backfitting round after the stage (one
sweep of the chosen terms: :func:`refit`; the regressor's round and the classifier's
Newton sweeps) runs here wherever compiling dominates an in-memory CPU fit
(:attr:`jaxtree._fit.spec.FitSpec.host_backfit`), at any knots: :class:`Design` keeps each
row's 2 (main) or 4 (pair) nonzero hats, so a sweep costs ``O(N)`` per term, tens of
milliseconds at 20,000 rows, where the round's three compiled programs came last in a
first fit with nothing to overlap them (a 20,000 x 10 first fit 4.3-4.5 -> 3.5 s;
BENCHMARKS.md, "The backfitting round on the host").
"""

from __future__ import annotations


import weakref

import numpy as np

from jaxtree import program as prog
from jaxtree import scoring
from jaxtree import search
from jaxtree import shapes as shapes_

MAX_BLOCK = 256
"""The largest block (coefficients of a main shape or a pair, ``max(n1, n2²)``) a shape
stage may have to run on the host (:func:`applies`): the default's fine knots ``(32, 16)``
(16 until the seventy-seventh session: the small tables' ``(3, 2)`` only)."""


def applies(knots: tuple) -> bool:
    """Whether a shape stage of ``knots = (n1, n2)`` hats may run on the host."""
    n1, n2 = knots
    return max(n1, n2 * n2) <= MAX_BLOCK


GRAM_ENTRIES = 1 << 18
"""The most row-and-hat entries of the blocks :meth:`_Blocks.grams` counts at a time (2 MB of
weighted hats): small blocks are counted many at a time (a Python loop over 64 blocks cost
more than their counts), a large one alone (one count over a few blocks of 10⁴ rows ran
10-40% slower than a count per block, its products out of cache)."""


def _sparse_hats(z, n: int) -> tuple:
    """``(index, value)``, each ``z.shape + (2,)``: the two hats of ``n`` that may be nonzero
    at clipped ``z`` (the hat below ``z (n - 1)`` and the one above; one hat twice, the
    second of value 0, where ``n`` is 1), their values computed as the dense hats
    ``max(1 - |z (n - 1) - k|, 0)`` of :func:`jaxtree.shapes.view`'s terms are. A NaN ``z``
    gives NaN values."""
    t = z * (n - 1)
    with np.errstate(invalid="ignore"):
        lo = np.clip(np.floor(np.nan_to_num(t)), 0, max(n - 2, 0))
        idx = np.stack([lo, np.minimum(lo + 1, n - 1)], -1)
        val = np.maximum(1 - np.abs(t[..., None] - idx), 0)
    if n == 1:
        val = np.where(np.isnan(val), val, np.stack([np.ones_like(t), np.zeros_like(t)], -1))
    return idx.astype(np.int64), val


def row_views(x, spec) -> tuple:
    """The clipped main and pair views of rows ``x (N, columns)`` (:func:`jaxtree.shapes.view`),
    float64: what :class:`Design`, :func:`refit` and :func:`evaluate` read of ``x``. A caller
    that evaluates or refits on the same rows again passes them back (``views``): the
    classifier's Newton round and its shape-count losses, 11 views of one table a fit (80 ms
    of a 0.97 s warm fit on diamonds' 10,000 rows with 26 encoded columns)."""
    return tuple(np.clip(shapes_.view(x, spec, n, xp=np), 0.0, 1.0) for n in (spec.n1, spec.n2))


def _sparse_pair_hats(hats2, first, second, n2: int) -> tuple:
    """The pairs' ``(first, second)`` tensor hats (``n2²`` each, row-major in ``(a, b)``) as
    ``(index, value)``, each ``(P, N, 4)``: the four that may be nonzero on each row (the
    products of the two covariates' :func:`_sparse_hats`, ``hats2 = (index, value)``, each
    ``(columns, N, 2)``)."""
    (ia, va), (ib, vb) = ((h[first] for h in hats2), (h[second] for h in hats2))
    idx = ia[..., :, None] * n2 + ib[..., None, :]
    return idx.reshape(idx.shape[:-2] + (4,)), _corner_products(va, vb)


def _corner_products(va, vb):
    """``(..., 4)``: the products of two covariates' two hats ``(..., 2)`` each, row-major in
    ``(a, b)`` (a pair's four corner hats)."""
    val = va[..., :, None] * vb[..., None, :]
    return val.reshape(val.shape[:-2] + (4,))


class _Blocks:
    """Sparse hats of one kind of block (the main shapes', or the pairs'): ``value``
    ``(J, B, N)``, the ``J`` hats of each block that may be nonzero on a row, of ``size``
    columns each, at columns ``base + offsets`` (``base (B, N)`` each row's first hat,
    ``offsets (J,)`` the same on every row: a main shape's two hats are neighbours, a pair's
    four the corners of its cell); and which blocks have a NaN on some row (a padding
    column, a group's member): such a block's statistics are NaN throughout, as the dense
    products make them.

    ``index`` may be the full ``(B, N, J)`` columns (:func:`_sparse_hats`,
    :func:`_sparse_pair_hats`, whose offsets are the same on every row) or, with
    ``offsets`` given, the bases ``(B, N)``; ``value`` is ``(B, N, J)`` as they give it, or
    ``(J, B, N)`` with ``offsets`` and ``hat_major``.

    Why hat-major (seventy-seventh session): each right-hand side and Gram multiplies one
    hat's values on every row of every block by the residual or another hat's; read from
    ``(B, N, J)`` those products strode over ``J`` values and ran 4 times slower than from
    contiguous rows (64 pairs of 20,480 rows: 12.4 against 3.0 ms for a pair step's four),
    a third of the host shape stage's step.

    Why bases and offsets (seventy-sixth session, issue 29's cost): a block's Gram is then
    ``J (J + 1) / 2`` weighted counts of each row's cell (one product of two of its hats
    each; 10 for a pair) instead of one count of ``J²`` entries with a bin index each (16
    for a pair); the right-hand sides ``J`` counts of the cell without an index array of
    ``J`` entries a row. On the weather table's backfitting round (24,576 rows, 10 pairs
    of ``16 x 16`` hats) the pairs' Grams took 40 ms as one count (BENCHMARKS.md, "The
    host backfitting round's counts by cell")."""

    def __init__(self, index, value, size: int, offsets=None, hat_major: bool = False):
        index = np.asarray(index)
        if offsets is None:  # the offsets of the first row hold on every row
            offsets = (index[0, 0] - index[0, 0, 0] if index.size
                       else np.zeros(value.shape[-1], np.int64))
            index = index[..., 0]
        if not hat_major:
            value = np.ascontiguousarray(np.moveaxis(value, -1, 0))
        self.value, self.size = value, size  # (J, B, N)
        self.offsets = np.asarray(offsets, np.int64)
        self.nan = np.isnan(value).any((0, 2))
        b = value.shape[1]
        self.base = index
        self._flat = index + (np.arange(b) * size)[:, None]  # (B, N): block and cell

    @staticmethod
    def _sum(weights, flat, length):
        """The ``weights`` summed into ``length`` bins by index ``flat`` (float64)."""
        out = np.bincount(flat.reshape(-1), weights.reshape(-1), minlength=length)
        return out.astype(np.float64, copy=False)  # (an empty bincount is int64)

    def _cells(self, weights):
        """``(B, size)``: ``weights (B, N)`` summed by block and cell (each row's base)."""
        b = self.value.shape[1]
        return self._sum(weights, self._flat, b * self.size).reshape(b, self.size)

    def _spread(self, cells, j: int, out):
        """Adds the cells' sums ``(..., size)`` of hat ``j`` at its columns ``base +
        offsets[j]`` (the cells past the last whose hat ``j`` fits hold no row: their sums
        are 0)."""
        o = int(self.offsets[j])
        out[..., o:] += cells[..., : self.size - o]

    def sums(self, r):
        """``sum_n r_n h(x_n)`` of every block, ``(B, size)``; ``r (N,)``."""
        out = np.zeros((self.value.shape[1], self.size))
        with np.errstate(invalid="ignore"):
            for j in range(self.value.shape[0]):
                self._spread(self._cells(self.value[j] * r[None, :]), j, out)
        out[self.nan] = np.nan
        return out

    def grams(self, w):
        """``sum_n w_n h(x_n) h(x_n)'`` of every block, ``(B, size, size)``: for each two hats
        ``j <= l`` of a row, one weighted count of the rows' cells, added at the two hats'
        columns (and the transposed entries)."""
        (n_hats, b, n), k = self.value.shape, self.size
        out = np.zeros((b, k, k))
        flat = out.reshape(b, k * k)
        step = max(1, GRAM_ENTRIES // max(n * n_hats, 1))  # blocks a count, for the memory
        for lo in range(0, b, step):
            v = self.value[:, lo:lo + step]
            m = v.shape[1]
            cell = self._flat[lo:lo + m] - lo * k  # (m, N): block and cell of each row
            with np.errstate(invalid="ignore"):
                wv = v * w[None, None, :]
            for j in range(n_hats):
                for l in range(j, n_hats):
                    with np.errstate(invalid="ignore"):
                        cells = self._sum(wv[j] * v[l], cell, m * k).reshape(m, k)
                    oj, ol = int(self.offsets[j]), int(self.offsets[l])
                    c = np.arange(k - max(oj, ol))  # the cells whose two hats fit
                    flat[lo:lo + m, (c + oj) * k + c + ol] += cells[:, c]
                    if j != l:
                        flat[lo:lo + m, (c + ol) * k + c + oj] += cells[:, c]
        out[self.nan] = np.nan
        return out

    def times(self, i: int, coef):
        """Block ``i``'s values ``h(x_n)' coef`` on every row, ``(N,)``."""
        base, v = self.base[i], self.value[:, i]
        out = v[0] * coef[base + self.offsets[0]]
        for j in range(1, v.shape[0]):
            out += v[j] * coef[base + self.offsets[j]]
        return out

    def project(self, i: int, r):
        """``sum_n r_n h(x_n)`` of block ``i``, ``(size,)``."""
        out = np.zeros(self.size)
        for j in range(self.value.shape[0]):
            self._spread(self._sum(self.value[j, i] * r, self.base[i], self.size), j, out)
        return out


def _dense_hats(z, n: int):
    """The ``n`` hats at clipped ``z``, ``z.shape + (n,)``, each computed as
    :func:`_sparse_hats` computes its two (so the nonzero ones are the same numbers); NaN
    where ``z`` is NaN."""
    t = z * (n - 1)
    return np.maximum(1 - np.abs(t[..., None] - np.arange(n, dtype=t.dtype)), 0)


class _PairProducts:
    """Every pair block's statistics as products of the covariates' dense hats: the same
    interface and numbers as :class:`_Blocks` of :func:`_sparse_pair_hats` (to float64
    rounding: the sums run in another order), for designs of many pairs.

    ``hats``: ``(columns, N, n2)`` (:func:`_dense_hats` of the pair view); ``first``,
    ``second``: the pairs' covariates ``(P,)``. A pair's right-hand side
    ``sum_n r_n h_a(x_nj) h_b(x_nl)`` is entry ``(a j, b l)`` of ``H' diag(r) H`` with ``H``
    the ``(N, n2 * columns)`` hats side by side, and its Gram entry ``((a, b), (a', b'))``
    is entry ``(a a' j, b b' l)`` of ``Q' diag(w) Q``, ``Q`` the products of two hats of one
    covariate (``(N, n2² * columns)``): matrix products over the used covariates, where
    the sparse form counts ``16`` bins a row for every pair in Python-sized pieces.

    Why (sixty-seventh session): a table of many covariates screens all its pairs
    (:func:`screen_pairs`): 2,016 at 64 covariates, whose sparse Grams took 1.35 s a design,
    13.5 s of the 10-class digits fit's 16 s (its ten one-versus-rest shape stages)."""

    def __init__(self, hats, first, second, n2: int):
        used, inverse = np.unique(np.concatenate([first, second]), return_inverse=True)
        self.first, self.second = inverse[:len(first)], inverse[len(first):]
        hats = hats[used]  # (c, N, n2)
        self.n2, self.size = n2, n2 * n2
        bad = np.isnan(hats).any((1, 2))
        self.nan = bad[self.first] | bad[self.second]
        self._raw = hats  # NaN on the rows where a covariate is (as the sparse hats)
        self.hats = np.where(np.isnan(hats), 0.0, hats)  # the NaN blocks are set apart
        self._side_by_side = self._wide(self.hats)  # H of every right-hand side (sums)

    def _wide(self, h):
        """``(c, N, m)`` -> ``(N, m * c)``, column ``(a, j)``."""
        c, n, m = h.shape
        return h.transpose(1, 2, 0).reshape(n, m * c)

    def _at_pairs(self, prod, m: int):
        """The pairs' entries ``(P, m, m)`` of a product ``(m c, m c)`` of
        :meth:`_wide` columns."""
        c = self.hats.shape[0]
        out = prod.reshape(m, c, m, c)[:, self.first, :, self.second]
        out[self.nan] = np.nan
        return out

    def sums(self, r):
        """``sum_n r_n h(x_n)`` of every block, ``(P, n2²)`` (row-major in ``(a, b)``)."""
        wide = self._side_by_side
        out = self._at_pairs((wide * r[:, None]).T @ wide, self.n2)
        return out.reshape(-1, self.size)

    def grams(self, w):
        """``sum_n w_n h(x_n) h(x_n)'`` of every block, ``(P, n2², n2²)``."""
        n2, h = self.n2, self.hats
        q = self._wide((h[:, :, :, None] * h[:, :, None, :]).reshape(h.shape[:2] + (-1,)))
        g = self._at_pairs((q * w[:, None]).T @ q, n2 * n2)  # (P, (a a'), (b b'))
        g = g.reshape(-1, n2, n2, n2, n2).transpose(0, 1, 3, 2, 4)
        return g.reshape(-1, self.size, self.size)

    def times(self, i: int, coef):
        """Block ``i``'s values ``h(x_n)' coef`` on every row, ``(N,)``."""
        a, b = self._sides(i)
        return np.einsum("na,ab,nb->n", a, coef.reshape(self.n2, self.n2), b)

    def project(self, i: int, r):
        """``sum_n r_n h(x_n)`` of block ``i``, ``(n2²,)``."""
        a, b = self._sides(i)
        return ((a * r[:, None]).T @ b).reshape(-1)

    def _sides(self, i: int):
        """Block ``i``'s two covariates' hats ``(N, n2)`` each (NaN where they are)."""
        return self._raw[self.first[i]], self._raw[self.second[i]]


PRODUCTS_WORK = 8192
"""A design's ``P`` pair blocks of ``n2²`` hats over ``c`` covariates are formed as products
(:class:`_PairProducts`) where ``(n2² c)² <= PRODUCTS_WORK * P``: the products' flops
``2 N (n2² c)²`` against the count's ``16 N P`` entries. Measured (BENCHMARKS.md, "A wide
small table's pair screen as matrix products"): at ``n2 = 3``, ``c = 64``, ``P = 64``
(ratio 0.63 of the bound) the products took 44 ms against 70-85 ms; at ``n2 = 4`` and 32
disjoint pairs (ratio 8) 82-87 ms against 36 ms."""

PRODUCTS = None
"""Force the pair blocks' form (tests): True :class:`_PairProducts`, False :class:`_Blocks`,
None by :func:`_by_products`."""


def _by_products(n_pairs: int, n_cols: int, n2: int) -> bool:
    """Whether a design's pair blocks are formed as products (:class:`_PairProducts`)."""
    if PRODUCTS is not None:
        return bool(PRODUCTS) and n2 > 1
    return n2 > 1 and (n2 * n2 * n_cols) ** 2 <= PRODUCTS_WORK * n_pairs


def _pair_blocks(x2, first, second, n2: int):
    """The pair blocks ``(first, second)`` of the pair view ``x2 (N, columns)``."""
    if len(first) and _by_products(len(first), len(np.union1d(first, second)), n2):
        return _PairProducts(_dense_hats(x2.T, n2), first, second, n2)
    idx, val = _sparse_hats(x2.T, n2)  # (columns, N, 2)
    o = 1 if n2 > 1 else 0  # a covariate's two hats: neighbours (one hat: the same twice)
    # the corners' products, as _corner_products forms them, in _Blocks' hat-major layout:
    # (2, 2, P, N) -> (4, P, N), corner 2 i + j the first covariate's hat i times the
    # second's hat j
    hat = np.ascontiguousarray(np.moveaxis(val, -1, 0))  # (2, columns, N)
    value = np.multiply(hat[:, None, first], hat[None, :, second], order="C")
    value = value.reshape((4,) + value.shape[2:])
    return _Blocks(idx[first, :, 0] * n2 + idx[second, :, 0], value, n2 * n2,
                   offsets=(0, o, o * n2, o * n2 + o), hat_major=True)  # cells and corners


def _system(g, s, n, weight: float = shapes_.RIDGE):
    """The blocks' centred ridge systems (:func:`jaxtree.shapes._block_system`), batched;
    computed in ``g``'s memory; ``weight``: the mains' ``RIDGE`` or the pairs'
    ``PAIR_RIDGE``."""
    k = g.shape[-1]
    lam = _ridge(g, weight)
    g -= s[..., :, None] * (s[..., None, :] / max(n, 1e-30))
    diag = g.reshape(g.shape[:-2] + (k * k,))[..., :: k + 1]  # a view of the diagonals
    diag += lam[..., None]
    return g


def _ridge(g, weight: float = shapes_.RIDGE):
    """Each block's ridge ``lambda = weight * trace / k`` (:func:`_system`'s)."""
    return weight * np.maximum(np.trace(g, axis1=-2, axis2=-1) / g.shape[-1], 1e-30)


class _Factors:
    """The gains' systems ``A = G + lambda I - s s' / n`` of some blocks (:func:`_system`),
    factored once per design, for ``c' A^{-1} c`` of each block at every step.

    ``B = G + lambda I`` is factored by a block Cholesky ``B = L L'`` in ``m x m`` blocks
    (``m`` the second covariate's hats of a pair, the whole block of a main shape), and the
    centring by Sherman-Morrison: with ``y = L^{-1} c`` and ``z = L^{-1} s``,
    ``c' A^{-1} c = y'y + (y'z)^2 / (n - z'z)``. A pair's hats at rows ``(a, b)`` and
    ``(a', b')`` share a row only where ``|a - a'| <= 1`` (their covariates' hats are
    neighbours or the same), so its ``B`` is block-tridiagonal in blocks of ``m = n2``
    (exact zeros elsewhere: the hats are products of clipped hats, exactly 0 past their
    neighbours): ``L`` is too, and a factorisation is ``n2`` Cholesky factorisations and
    products of ``n2 x n2`` blocks (``nb = n2``) instead of a dense one of ``n2^2``.
    A block that is not finite (a padding column's, a group member's) is factored as the
    identity and its gain is NaN (as the compiled gains make it).

    Why (seventy-seventh session, issue 27): the host stage's systems were inverted once
    per design (``np.linalg.inv``): at ``(32, 16)`` knots 45 pair blocks of 256
    coefficients took 75 ms of a 0.5 s stage on a 20,000 x 14 table, where the blocked
    factorisation takes a few milliseconds and a step's ``c' A^{-1} c`` about a millisecond
    (the inverse's products took 3-6 ms)."""

    def __init__(self, g, s, n: float, nb: int, weight: float = shapes_.RIDGE):
        b, k = g.shape[0], g.shape[-1]
        self.ok = np.isfinite(g).all((-2, -1)) & np.isfinite(s).all(-1)
        lam = _ridge(np.where(self.ok[:, None, None], g, 0.0), weight)
        if nb < 1 or k % nb:  # not blocks of equal size: one block
            nb = 1
        self.nb, self.m = nb, k // nb
        m = self.m
        self.n = max(n, 1e-30)
        inv, sub = [], []
        eye = np.eye(m)
        for a in range(self.nb):
            lo, hi = a * m, (a + 1) * m
            d = np.where(self.ok[:, None, None], g[:, lo:hi, lo:hi], eye)
            d = d + lam[:, None, None] * eye
            if a:
                d = d - sub[-1] @ np.swapaxes(sub[-1], -1, -2)  # B_aa - L_a,a-1 L_a,a-1'
            inv.append(np.linalg.inv(np.linalg.cholesky(d)) if b else d)
            if a + 1 < self.nb:  # L_a+1,a = B_a+1,a L_aa^{-T}
                below = np.where(self.ok[:, None, None], g[:, hi:hi + m, lo:hi], 0.0)
                sub.append(below @ np.swapaxes(inv[-1], -1, -2))
        self.inv, self.sub = inv, sub
        self.z = self._forward(np.where(self.ok[:, None], s, 0.0))
        self.denom = self.n - np.sum(self.z * self.z, -1)

    def _forward(self, c):
        """``L^{-1} c`` of each block, ``(B, k)``."""
        y = np.empty_like(c)
        m = self.m
        for a in range(self.nb):
            r = c[:, a * m:(a + 1) * m]
            if a:
                r = r - (self.sub[a - 1] @ y[:, (a - 1) * m:a * m, None])[..., 0]
            y[:, a * m:(a + 1) * m] = (self.inv[a] @ r[..., None])[..., 0]
        return y

    def quadratic(self, c):
        """``c' A^{-1} c`` of each block ``(B,)``; NaN where a block or its ``c`` is not
        finite."""
        if not len(c):
            return np.zeros(0)
        ok = self.ok & np.isfinite(c).all(-1)
        y = self._forward(np.where(ok[:, None], c, 0.0))
        q = np.sum(y * y, -1) + np.sum(y * self.z, -1) ** 2 / self.denom
        return np.where(ok, q, np.nan)


class Design:
    """The rows of one shape search on the host (float64) and its blocks' statistics: what
    :func:`jaxtree.shapes.with_table` holds for a compiled search.

    ``data``: chunked :class:`jaxtree.scoring.Data` (padding rows of zero weight, NaN padding
    columns); ``spec``: a :class:`jaxtree.shapes.ShapeSpec` or
    :class:`jaxtree.shapes.SlotSpec`; ``terms``: the term ids whose systems are formed
    (:func:`refit` sweeps the chosen terms only and asks for no gains), None all;
    ``views``: :func:`row_views` of ``data``'s rows (flattened), or None.

    The hats are kept sparse (:class:`_Blocks`: on each row at most 2 hats of a main shape
    and 4 of a pair are nonzero), so the Grams, the right-hand sides and a term's values
    cost ``O(N)`` per block at any number of knots (dense ``(N, 256)`` products per pair at
    ``(32, 16)`` knots would be ~64x the work), and the gains' systems are factored once
    (:class:`_Factors`). A search keeps its live pair slots only."""

    def __init__(self, data, spec, terms=None, views=None):
        x = np.asarray(data.x, np.float64)
        self.chunks = np.shape(data.y)
        self.dtype = np.dtype(data.x.dtype)
        self.spec = spec
        self.p = p = x.shape[-1]
        x = x.reshape(-1, p)
        self.y = np.asarray(data.y, np.float64).reshape(-1)
        self.w = np.asarray(data.w, np.float64).reshape(-1)
        n1, n2 = spec.n1, spec.n2
        first, second, live = shapes_.pair_index(spec)
        self.first, self.second = np.asarray(first, np.int64), np.asarray(second, np.int64)
        n_pairs = len(self.first)
        self.live = np.ones(n_pairs, bool) if live is None else np.asarray(live, bool)
        x1, x2 = row_views(x, spec) if views is None else views
        self.terms = terms
        # the blocks whose hats are kept (all, or the chosen terms of a refit), and where
        mains = np.arange(p) if terms is None else np.asarray([t for t in terms if t < p],
                                                               np.int64)
        # (a search's padding pair slots are never chosen: their gains are -inf)
        pairs = np.flatnonzero(self.live) if terms is None else np.asarray(
            [t - p for t in terms if t >= p], np.int64)
        self._mains, self._pairs = mains, pairs
        self._row = np.full(p + n_pairs, -1)
        self._row[mains], self._row[p + pairs] = np.arange(len(mains)), np.arange(len(pairs))
        self.h1 = _Blocks(*_sparse_hats(x1.T[mains], n1), n1)  # (p, N, 2)
        self.h2 = _pair_blocks(x2, self.first[pairs], self.second[pairs], n2)
        self.n = float(np.sum(self.w))
        self.s1, self.s2 = self.h1.sums(self.w), self.h2.sums(self.w)  # kept blocks'
        # the kept blocks' Grams; a block's centred ridge system (_system) is formed where
        # it is solved, at its own size (the compiled search pads every block to M columns
        # with the identity, jaxtree.shapes._solve_block; solve() solves as it does)
        self.g1, self.g2 = self.h1.grams(self.w), self.h2.grams(self.w)
        mm = self.mm = max(n1, n2 * n2)
        self.size = np.array([n1] * p + [n2 * n2] * n_pairs)
        self.sums = np.zeros((p + n_pairs, mm))
        self.sums[mains, :n1], self.sums[p + pairs, :n2 * n2] = self.s1, self.s2
        self._factored = None  # the gains' systems factored, at the first gains

    def _systems(self) -> tuple:
        """The gains' systems of the kept blocks, factored once (:class:`_Factors`; a
        backfitting round asks for no gains and factors nothing)."""
        if self._factored is None:
            self._factored = (_Factors(self.g1, self.s1, self.n, 1),
                              _Factors(self.g2, self.s2, self.n, self.spec.n2,
                                       shapes_.PAIR_RIDGE))
        return self._factored

    def _blocks(self, tid: int) -> tuple:
        return (self.h1 if tid < self.p else self.h2), int(self._row[tid])

    def times(self, tid: int, coef):
        """Term ``tid``'s values ``(N,)`` at its coefficients ``coef (K,)``."""
        blocks, i = self._blocks(tid)
        return blocks.times(i, coef)

    def project(self, tid: int, r):
        """``Phi_tid' r``, ``(K,)``, for ``r (N,)``."""
        blocks, i = self._blocks(tid)
        return blocks.project(i, r)

    def rhs(self, fit):
        """``(Phi^T W e of every block, sum W e)`` for the residual ``e = y - fit``
        (:func:`jaxtree.shapes._rhs`)."""
        if self.terms is not None:
            raise ValueError("a Design of some terms' systems has no gains")
        e = self.w * (self.y - fit)
        return self.h1.sums(e), self.h2.sums(e), e.sum()

    def gains(self, b1, b2, esum):
        """Every candidate's ridge gain (:func:`jaxtree.shapes.candidate_gains`): ``(p + P,)``,
        a padding pair slot's ``-inf``; ``(b1, b2, esum)``: :meth:`rhs`'s (the kept
        blocks')."""
        ebar = esum / max(self.n, 1e-30)
        f1, f2 = self._systems()
        out = np.full(self.p + len(self.first), -np.inf)
        out[self._mains] = f1.quadratic(b1 - self.s1 * ebar)
        out[self.p + self._pairs] = f2.quadratic(b2 - self.s2 * ebar)
        return out

    def solve(self, tid: int, b, esum):
        """Term ``tid``'s block update (:func:`jaxtree.shapes._solve_block`) for its right-hand
        side ``(b (K,), esum)``: ``(coefficients (M,), the intercept's shift)``."""
        size, sums = self.size[tid], self.sums[tid]
        c = b - sums[:size] * esum / self.n
        # The block's own system: the padded one's other rows are the identity's, its other
        # coefficients 0 (its polish's step is the padded system's, at least the identity's).
        new = np.zeros(self.mm)
        g = (self.g1 if tid < self.p else self.g2)[self._row[tid]]
        a = _system(g.copy(), sums[:size], self.n,
                    shapes_.RIDGE if tid < self.p else shapes_.PAIR_RIDGE)
        new[:size] = _box_solve(a, c, 1.0 if size < self.mm else 1e-30)
        new = _two_valued(new, sums, self.n, tid < self.p, self.spec, len(self.first))
        return new, (esum - sums @ new) / self.n


def _held_at(a, b, c):
    g = a @ b - c
    return ((b >= 1) & (g <= 0)) | ((b <= -1) & (g >= 0))


def _box_solve(a, c, least: float = 1e-30):
    """``argmin 0.5 b'Ab - c'b`` subject to ``|b| <= 1`` (:func:`jaxtree.shapes._box_solve`:
    the same active-set iterations and projected-gradient polish). ``least``: the least row
    sum of ``|A|`` that sets the polish's step (1 for a block solved without its padding,
    whose identity rows sum to 1: the padded system's step)."""
    n = a.shape[-1]
    b = np.clip(np.linalg.solve(a, c), -1.0, 1.0)
    held = _held_at(a, b, c)
    i, changed = 1, held.any()
    while i < shapes_.ACTIVE_SET_STEPS and changed:
        free = ~held
        a_ff = np.where(free[:, None] & free[None, :], a, np.eye(n))
        rhs = np.where(free, c - a @ np.where(held, b, 0.0), np.where(held, b, 0.0))
        b = np.clip(np.linalg.solve(a_ff, rhs), -1.0, 1.0)
        new_held = _held_at(a, b, c)
        i, changed, held = i + 1, bool(np.any(new_held != held)), new_held
    step = 1.0 / max(np.max(np.sum(np.abs(a), -1)), least)
    for _ in range(shapes_.PG_STEPS):
        b = np.clip(b - step * (a @ b - c), -1.0, 1.0)
    return b


def _two_valued(coef, sums, n, main: bool, spec, n_pairs: int):
    """:func:`jaxtree.shapes.two_valued_linear` of one block."""
    n1, n2 = spec.n1, spec.n2
    tiny = shapes_.TWO_VALUED_TOL * n
    out = coef.copy()
    if main:
        if n1 > 2 and np.sum(np.abs(sums[1:n1 - 1])) <= tiny:
            out[:n1] = coef[0] + (coef[n1 - 1] - coef[0]) * np.linspace(0.0, 1.0, n1)
        return out
    if n_pairs and n2 > 2:
        m2 = n2 * n2
        c2, s2 = coef[:m2].reshape(n2, n2).copy(), sums[:m2].reshape(n2, n2)
        t2 = np.linspace(0.0, 1.0, n2)
        if np.sum(np.abs(s2[1:n2 - 1, :])) <= tiny:  # the first covariate is two-valued
            c2 = c2[0][None, :] + (c2[-1] - c2[0])[None, :] * t2[:, None]
        if np.sum(np.abs(s2[:, 1:n2 - 1])) <= tiny:  # the second
            c2 = c2[:, :1] + (c2[:, -1:] - c2[:, :1]) * t2[None, :]
        out[:m2] = c2.reshape(-1)
    return out


def _flat(shapes, mm: int):
    """The coefficients of every candidate in one ``(p + P, M)`` float64 table."""
    main, pair = np.asarray(shapes.main, np.float64), np.asarray(shapes.pair, np.float64)
    out = np.zeros((main.shape[0] + pair.shape[0], mm))
    out[:main.shape[0], :main.shape[1]] = main
    out[main.shape[0]:, :pair.shape[1]] = pair
    return out


def _sweep(design: Design, coef, fit, intercept: float, order, n_terms: int, n_up: int,
           first: int, values=None) -> tuple:
    """Block backfitting over the chosen terms (:func:`jaxtree.shapes._sweep`): updates
    ``first .. first + n_up - 1`` of the terms in ``order``, cyclically; ``coef`` and
    ``fit`` change in place. Returns the intercept.

    ``values``: a dict of terms' values on the rows at ``coef`` (``(N,)`` float64, by term
    id), kept up to date here; a term not in it is evaluated at its first update. Each
    update then evaluates its term once (at the new coefficients) instead of twice (at the
    old ones for the partial residual, at the change for the fit): the same partial
    residuals, the fit's update to float64 rounding."""
    d = design
    values = {} if values is None else values
    for t in range(first, first + n_up):
        tid = int(order[t % max(n_terms, 1)])
        k = int(d.size[tid])
        v_old = values.get(tid)
        if v_old is None:
            v_old = d.times(tid, coef[tid, :k])
        e = d.w * (d.y - fit + v_old)
        new, shift = d.solve(tid, d.project(tid, e), e.sum())
        v_new = d.times(tid, new[:k])
        fit += (v_new - v_old) + shift
        values[tid] = v_new
        intercept += shift
        coef[tid] = new
    return intercept


def _state(shapes, coef, fit, intercept, dtype, chunks, **kw):
    """A :class:`jaxtree.shapes.State` of host arrays in the data's dtype."""
    p, n1 = np.shape(shapes.main)
    n2s = np.shape(shapes.pair)[1]
    out = shapes._replace(main=coef[:p, :n1].astype(dtype), pair=coef[p:, :n2s].astype(dtype),
                          intercept=np.asarray(intercept, dtype), **kw)
    return shapes_.State(out, fit.reshape(chunks).astype(dtype))


def start(data, spec) -> shapes_.State:
    """The empty model (:func:`jaxtree.shapes.start`): the intercept the weighted mean of
    ``y``."""
    y, w = np.asarray(data.y, np.float64), np.asarray(data.w, np.float64)
    dt = np.dtype(data.x.dtype)
    mean = np.asarray(np.sum(w * y) / np.sum(w), dt)
    p = data.x.shape[-1]
    n_pairs = len(shapes_.pair_index(spec)[0])
    sh = shapes_.Shapes(np.zeros((p, spec.n1), dt), np.zeros(p, bool),
                        np.zeros((n_pairs, spec.n2 * spec.n2), dt), np.zeros(n_pairs, bool),
                        mean, np.full(spec.max_terms, -1, np.int32), np.asarray(0, np.int32))
    return shapes_.State(sh, np.full(np.shape(data.y), mean, dt))


def _mse(d: Design, fit) -> float:
    return float(np.sum(d.w * (d.y - fit) ** 2) / np.sum(d.w))


def step(state: shapes_.State, design: Design, sweeps: int = 1):
    """One shape search iteration as a driver step (:func:`jaxtree.search.shape_step` of
    :func:`jaxtree.shapes.fit_step`): the best unchosen term added and backfitted. Returns
    ``(state, StepInfo)`` of host values."""
    d, spec = design, design.spec
    p, n_pairs = d.p, len(d.first)
    sh = state.shapes
    fit = np.asarray(state.fit, np.float64).reshape(-1).copy()
    gains = d.gains(*d.rhs(fit))
    main_on, pair_on = np.asarray(sh.main_on), np.asarray(sh.pair_on)
    n_terms = int(sh.n_terms)
    with np.errstate(invalid="ignore"):
        if spec.hierarchy and n_pairs:
            open_main = np.where(main_on, 0.0, np.maximum(gains[:p], 0.0))
            gains[p:] -= open_main[d.first] + open_main[d.second]
        gains = np.where(np.concatenate([main_on, pair_on]) | ~np.isfinite(gains), -np.inf, gains)
    tid = int(np.argmax(gains))
    ok = bool(gains[tid] > 0) and n_terms < spec.max_terms
    dt = d.dtype
    if ok:
        main_on, pair_on, order = main_on.copy(), pair_on.copy(), np.array(sh.order)
        if tid < p:
            main_on[tid] = True
        else:
            pair_on[tid - p] = True
        order[min(n_terms, spec.max_terms - 1)] = tid
        k = n_terms + 1
        full = k % shapes_.FULL_SWEEP_EVERY == 0
        coef = _flat(sh, d.mm)
        icpt = _sweep(d, coef, fit, float(sh.intercept), order, k, sweeps * k if full else 1,
                      0 if full else k - 1)
        state = _state(sh, coef, fit, icpt, dt, d.chunks, main_on=main_on, pair_on=pair_on,
                       order=order.astype(np.int32), n_terms=np.asarray(k, np.int32))
        status = search.STATUS_OK
    else:
        live = int(spec.live) if isinstance(spec, shapes_.SlotSpec) else \
            shapes_.n_mains(spec, p) + n_pairs
        full = n_terms >= spec.max_terms or n_terms >= live
        status = search.STATUS_FULL if full else search.STATUS_NO_CANDIDATE
    loss = np.asarray(_mse(d, fit), dt)
    c = min(max(tid - p, 0), max(n_pairs - 1, 0))
    main = tid < p or not n_pairs
    i32 = np.int32
    choice = search.Choice(i32(tid), i32(-1), i32(prog.ADD),
                           i32(tid if main else d.first[c]), i32(-1), dt.type(0),
                           np.asarray(state.shapes.intercept, dt), np.asarray(loss * d.n, dt),
                           i32(search.MOVE_SHAPE), i32(-1 if main else d.second[c]), i32(-1),
                           i32(0))
    return state, search.StepInfo(loss, choice, i32(status))


def refit(shapes, data, spec, sweeps: int = 1, views=None) -> shapes_.State:
    """:func:`jaxtree.shapes.refit` on the host: the terms of ``shapes`` backfitted to chunked
    ``data`` from their current coefficients, ``sweeps`` times over the chosen terms in
    their order (a :class:`jaxtree.shapes.State` of host arrays in the data's dtype).
    ``views``: :func:`row_views` of ``data``'s rows (flattened), or None."""
    n_terms = int(shapes.n_terms)
    d = Design(data, spec, terms=sorted({int(t) for t in np.asarray(shapes.order)[:n_terms]}),
               views=views)
    coef = _flat(shapes, d.mm)
    fit = np.full(d.y.shape, float(shapes.intercept))  # the terms' values (as evaluate's)
    values = {}
    for tid in np.asarray(shapes.order)[:n_terms]:
        tid = int(tid)
        values[tid] = d.times(tid, coef[tid, :int(d.size[tid])])
        fit += values[tid]
    icpt = _sweep(d, coef, fit, float(shapes.intercept), np.asarray(shapes.order), n_terms,
                  sweeps * n_terms, 0, values)
    return _state(shapes, coef, fit, icpt, d.dtype, d.chunks)


def evaluate(shapes, x, spec, views=None, hats=None):
    """The terms' values ``(N,)`` float64 at rows ``x (N, columns)``
    (:func:`jaxtree.shapes.evaluate`); ``views``: :func:`row_views` of ``x``, or None;
    ``hats``: a dict of each term's sparse hats on these rows, by term id, that this fills
    and reads (the same rows evaluated again), or None."""
    p = np.shape(shapes.main)[0]
    x1, x2 = row_views(np.asarray(x, np.float64), spec) if views is None else views
    first, second, _ = shapes_.pair_index(spec)
    out = np.full(x1.shape[0], float(shapes.intercept))
    main, pair = np.asarray(shapes.main, np.float64), np.asarray(shapes.pair, np.float64)
    hats = {} if hats is None else hats
    for tid in np.asarray(shapes.order)[:int(shapes.n_terms)]:
        tid = int(tid)
        got = hats.get(tid)
        if got is None:
            if tid < p:
                got = _sparse_hats(x1[:, tid], spec.n1)
            else:
                cols = np.asarray([first[tid - p], second[tid - p]])
                idx, val = _sparse_pair_hats(_sparse_hats(x2[:, cols].T, spec.n2), [0], [1],
                                             spec.n2)
                got = idx[0], val[0]
            hats[tid] = got
        idx, val = got
        out += np.sum(val * (main[tid] if tid < p else pair[tid - p])[idx], -1)
    return out


_held = ((), None, None)
"""The last held-out rows :func:`held_errors` read: ``(weak references to their arrays
(x, y, w), the spec, (x, y, w, views, hats))``. Weak: the rows are not kept alive past
their fit."""


def held_errors(shapes, data, spec) -> tuple:
    """``(mse, errors (n_chunks, m))`` of the terms on chunked held-out ``data``
    (:func:`jaxtree._fit.select.shape_mse_and_errors`). A search calls it after every step
    on the same rows: their float64 copies, views and each term's hats are kept for the
    next call on the same arrays and ``spec`` (the last rows only; on the weather table
    forming them again took 35 ms of a 480 ms stage, 11 calls)."""
    global _held
    refs, last_spec, kept = _held
    if (len(refs) == 3 and last_spec is spec
            and all(r() is a for r, a in zip(refs, (data.x, data.y, data.w)))):
        x, y, w, views, hats = kept
    else:
        x = np.asarray(data.x, np.float64)
        x = x.reshape(-1, x.shape[-1])
        y, w = (np.asarray(a, np.float64).reshape(-1) for a in (data.y, data.w))
        views, hats = row_views(x, spec), {}
        _held = (tuple(weakref.ref(a) for a in (data.x, data.y, data.w)), spec,
                 (x, y, w, views, hats))
    err = (y - evaluate(shapes, x, spec, views, hats)) ** 2
    dt = np.dtype(data.x.dtype)
    return np.asarray(np.sum(w * err) / np.sum(w), dt), err.reshape(np.shape(data.y))


def values(shapes, data, spec):
    """The terms' values on chunked ``data``'s rows, ``(n_chunks * m,)`` float64."""
    x = np.asarray(data.x, np.float64)
    return evaluate(shapes, x.reshape(-1, x.shape[-1]), spec)


HOST_SCREEN_WORK = 20_000_000
"""The most pairs times screened rows :func:`screen_pairs` ranks on the host; more go to the
compiled screen (:func:`jaxtree.shapes.screen_pairs`, the same pairs to float rounding).

Decision (sixty-eighth session): the host's cost grows with every pair's blocks, the
compiled screen's mostly with its compilation. At 1,000 rows (the default regressor, cache
off, the compiled screen patched in) the host screen's first fits were
shorter up to about 20,000 pairs (128 covariates, 8,128 pairs: 2.23 against 2.90 s; 180,
16,110: 2.72 against 2.91 s) and longer beyond (300 covariates, 44,850 pairs: 4.23 against
3.43 s; 500 rows of 1,000 covariates: 18.9 against 12.2 s, warm 11.6 against 6.0 s); warm
fits were 0.16-0.47 s shorter with the compiled screen from 128 covariates on, the same
trees and predictions (BENCHMARKS.md, "Wide tables of a few thousand rows")."""


def screen_pairs(data, keep: int = shapes_.MAX_PAIRS, p=None, spec=None) -> tuple:
    """:func:`jaxtree.shapes.screen_pairs` on the host: every main shape (8 hats) backfitted
    on the first rows, then the pairs ranked by their coarse ``3 x 3`` blocks' gains on the
    residual. The compiled screen itself where the pairs times the screened rows exceed
    :data:`HOST_SCREEN_WORK`."""
    pairs, plan = shapes_.screen_plan(data, keep, p, spec)
    if plan is None:
        return pairs
    chunks, m = np.shape(data.x)[:2]
    if len(pairs) * min(plan.chunks, chunks) * m > HOST_SCREEN_WORK:  # the rows it screens
        return shapes_.screen_pairs(data, keep, p, spec)
    head = scoring.Data(*(np.asarray(a)[:plan.chunks] for a in (data.x, data.y, data.w)))
    d = Design(head, plan.mains)
    st = start(head, plan.mains)
    fit = np.asarray(st.fit, np.float64).reshape(-1).copy()
    n_on = int(plan.on.sum())
    _sweep(d, np.zeros((d.p, d.mm)), fit, float(st.shapes.intercept), plan.order, n_on,
           3 * n_on, 0)
    fit = fit.astype(d.dtype).astype(np.float64)  # the state's dtype, as the compiled screen
    dc = Design(head, plan.coarse)
    return shapes_.screened(pairs, dc.gains(*dc.rhs(fit)), keep)
