r"""Counting and sample-complexity results of Xu, Honorio and Wang.

This module turns the theory of "On the Statistical Efficiency of Compositional
Nonparametric Prediction" (Sections 2-4 and Appendix A) into exact, checkable
numbers. It is plain Python: counts are exact ``int``; bounds are ``float``.

Notation: ``k`` operations (``+`` or ``*``), ``p`` covariates, ``q`` basis
functions, ``n`` samples. A labeled binary tree with ``2K+1`` nodes has ``K``
operation nodes and ``K+1`` leaves; each leaf is one of the ``pq`` labels
:math:`\phi_i(x_j)`. :math:`\mathcal{F}^*_{2K+1}` is the set of trees with exactly
``2K+1`` nodes, :math:`\mathcal{F}_{2k+1} = \bigcup_{K \le k} \mathcal{F}^*_{2K+1}`.

Results (paper numbering)
-------------------------
::

    * Tree count (Appendix A, proof of Lemma 1), with ordered children:

          |F*_1| = pq,   |F*_{2K+1}| = 2 * sum_{i odd < 2K} |F*_i| |F*_{2K-i}|
                                    = Catalan(K) * 2^K * (pq)^(K+1),
          |F_{2k+1}| = sum_{K=0}^{k} |F*_{2K+1}|.           -> count_trees

    * Lemma 1: for k >= 1, |F_{2k+1}| <= 4 k k! (pq)^(k+1).  -> count_trees_bound

    * Lemma 3: M_{2k+1} < 1.45^(k+1), where M_f is the number of products of basis
      functions in the expansion of tree f and, by the proof's recursion,
      M*_1 = 1, M*_{2K+1} = max_{a+b=K-1} max(M*_a M*_b, M*_a + M*_b).
                                       -> max_product_terms, max_product_terms_bound

    * Theorem 1: with probability >= 1 - delta, for every tree and weights,
      E_D[h] <= Ê_S[h] + 2 sqrt((k+1)/n)
                       + sqrt(((k+1) log pq + log(8 k k!) + log(1/delta)) / (2n)).
                                                          -> generalization_bound

    * Corollary 1: the excess risk is <= epsilon w.p. >= 1 - delta if
      n >= [3(k+1)(log pq + 8) + 3 log(8 k k!) + 6 log(2/delta)] / (2 epsilon^2).
                                                           -> sufficient_samples

    * Theorem 2: on the multiplication-only, unit-weight ensemble G_{2k+1}, if
      n <= (log(q^(k+1) C(p, k+1)) - 2 log 2) sigma^2 / 2 then every estimator fails
      with probability >= 1/2.                                -> necessary_samples
      |G_{2k+1}| itself:                               -> restricted_ensemble_size

Where the paper is off
----------------------
Each item is demonstrated by a test in ``tests/test_theory.py``.

1. **|F*_3| (proof of Lemma 1).** The paper states ``|F*_3| = 2(pq)^2 - 2pq``, but its
   own recursion gives 2(pq)^2 (ordered children), and counting children as
   unordered (the "switching subtrees gives an equivalent structure" remark)
   gives pq(pq + 1). 2(pq)^2 - 2pq counts ordered pairs of *distinct* leaves,
   which matches neither, and is 0 for pq = 1 although phi_1(x_1) + phi_1(x_1)
   is a tree. We default to ordered children, the convention the recursion and
   the union bound of Theorem 1 use (it is also an upper bound on the unordered
   count, so the theory stays valid); ``ordered=False`` gives the exact count of
   equivalence classes under swapping children. The claimed strict
   ``|F*_3| < 2(pq)^2`` is an equality.
2. **Intermediate bound in Lemma 1's proof.** The step
   sum_{i=0}^{k-1} i!(k-1-i)! <= k k!/2^(k-1) uses Jensen with 1/x "concave"; 1/x is
   convex, the inequality is reversed and false for every k >= 3 (k = 3: 5 > 4.5).
   The conclusion it feeds, ``|F*_{2k+1}| <= 2k k! (pq)^(k+1)``, is false for
   k = 3, 4, 5 (Catalan(k) 2^k = 40, 224, 1344 > 36, 192, 1200) and true for
   every other k. **Lemma 1 itself is true** for all k >= 1 and pq >= 1: dividing
   by (pq)^(k+1) it suffices that sum_{i<=k} Catalan(i) 2^i <= 4k k!, checked
   exactly for k <= 60; beyond k = 15 it follows from Catalan(i) 2^i <= 8^i.
   At k = 0 the formula gives ``0 < |F_1| = pq``, so the lemma rightly needs k >= 1.
3. **Lemma 3's induction step.** The step claims
   max(1.45^(a+1) 1.45^(b+1), 1.45^(a+1) + 1.45^(b+1)) = 1.45^(K+1) for a + b = K-1.
   At K = 3 (its first use) the sum wins: 1.45^3 + 1.45 = 4.499 > 1.45^4 = 4.420,
   so the proof does not go through at K = 3 (it does for K >= 4). **Lemma 3
   itself is true for every k**: the recursion's exact values are the maximal
   values of + / * expressions in k+1 ones, 3^(m/3), 4 * 3^((m-4)/3),
   2 * 3^((m-2)/3) for m = k+1 = 0, 1, 2 (mod 3), m >= 2, so
   M_{2k+1} <= 3^((k+1)/3) = 1.44225^(k+1) < 1.45^(k+1) (an induction that works
   for all K once K <= 3 is checked directly). The sharp base is 3^(1/3); the
   tightest case is k = 2, M = 3 < 3.0486. Products of pairs (2^((k+1)/2)) and
   triples (3^((k+1)/3)) both stay below 1.45^(k+1); Lemma 3 never fails.
4. **Rademacher step of Theorem 1.** The chain writes
   E_sigma[sup_{||v||_1<=1} <v, s>] = E sup_j s_j <= sqrt(2 log M) ...: the sup is
   ``max_j |s_j|``, a maximum over 2M signed coordinates, so Massart's lemma gives
   sqrt(2 log(2M)/n), and "=" should be "<=". With M = 1 (k = 0) the written chain
   gives 0, while one leaf, n = 1, has Rademacher complexity exactly 1. The
   corrected chain still gives <= sqrt((k+1)/n) for k >= 4 (2M_{2k+1} <= e^((k+1)/2));
   for k <= 3, M_{2k+1} = k+1 and ``E max_j |s_j| <= sqrt(M n)`` gives the same
   sqrt((k+1)/n). So the theorem's term survives, with "<=" (equality at k = 0,
   n = 1) rather than "<".
5. **Lipschitz constant in Theorem 1.** The regression loss
   d(y, y') = min(1, (y - y')^2 / 2) is sqrt(2)-Lipschitz in y', not 1-Lipschitz,
   so the contraction step gives 2 sqrt(2) sqrt((k+1)/n) for regression
   (the hinge-type loss for classification is 1-Lipschitz). This module returns
   the paper's formula unchanged.
6. **k = 0 in Theorem 1 and Corollary 1.** log(8 k k!) is undefined at k = 0.
   The constant comes from the union bound 2|F_{2k+1}| <= 8 k k! (pq)^(k+1); at
   k = 0 the exact 2|F_1| = 2 pq is used instead, i.e. log(8 k k!) is replaced
   by log 2.
7. **Size of the restricted ensemble (Theorem 2).** The paper sets
   ``c = |G_{2k+1}| = sum_{i=1}^{k} q^(i+1) C(p, i+1)``, but its definition of G allows
   ``|A| <= k+1`` including single leaves, so ``|G_{2k+1}| = sum_{i=0}^{k} q^(i+1) C(p, i+1)``
   (the paper drops the pq single-leaf trees; at k = 0 its sum is empty, 0, and
   "c >= q^(k+1) C(p, k+1)" fails). The claim c >= q^(k+1) C(p, k+1) holds for the
   correct c for all k, so Theorem 2 is unaffected. Also
   ||g_A - g_A'||^2 = 2 I(g_A = g_A') in eq. (5) should read 2 I(g_A != g_A');
   the basis phi_i(z) = sqrt(2) cos(i pi z) has sup norm sqrt(2) > 1, outside the
   [-1, 1] range Section 2 assumes for Phi.

Examples:
    >>> count_trees(1, 2, 1)
    10
    >>> count_trees(1, 2, 1, ordered=False)
    8
    >>> max_product_terms(7)
    18
    >>> sufficient_samples(3, 10, 5, 0.5, 0.05)
    360
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

__all__ = [
    "count_trees",
    "count_trees_bound",
    "max_product_terms",
    "max_product_terms_bound",
    "generalization_bound",
    "classification_risk_bound",
    "sufficient_samples",
    "necessary_samples",
    "restricted_ensemble_size",
]


# ---------------------------------------------------------------------------
# Input checks.
# ---------------------------------------------------------------------------


def _check_int(value, name: str, minimum: int, meaning: str) -> int:
    """Returns ``value`` as an ``int`` after checking it is an integer >= minimum."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        hint = f" Use {name}={int(value)}." if (
            isinstance(value, float) and value.is_integer()) else ""
        raise TypeError(
            f"{name} ({meaning}) must be an integer >= {minimum}; got "
            f"{type(value).__name__} {value!r}.{hint}")
    value = int(value)
    if value < minimum:
        raise ValueError(
            f"{name} ({meaning}) must be an integer >= {minimum}; got {value}.")
    return value


def _check_real(value, name: str) -> float:
    """Returns ``value`` as a finite ``float`` after checking its type."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number; got {type(value).__name__} {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}.")
    return value


def _check_unit_interval(value, name: str, meaning: str) -> float:
    """Returns ``value`` as a float after checking it lies in the open (0, 1)."""
    value = _check_real(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(
            f"{name} ({meaning}) must lie in the open interval (0, 1); got {value}.")
    return value


def _check_kpq(k, p, q) -> tuple[int, int, int]:
    k = _check_int(k, "k", 0, "number of operations")
    p = _check_int(p, "p", 1, "number of covariates")
    q = _check_int(q, "q", 1, "number of basis functions")
    return k, p, q


# ---------------------------------------------------------------------------
# Lemma 1: number of labeled binary trees.
# ---------------------------------------------------------------------------


def _star_counts(k: int, m: int, ordered: bool) -> list[int]:
    """Returns [|F*_1|, |F*_3|, ..., |F*_{2k+1}|] for ``m = pq`` leaf labels."""
    counts = [m]
    for big_k in range(1, k + 1):
        # The root has two subtrees with a and b operations, a + b = K - 1.
        if ordered:
            # Paper: |F*_{2K+1}| = 2 sum_{i odd < 2K} |F*_i| |F*_{2K-i}|.
            total = sum(counts[a] * counts[big_k - 1 - a] for a in range(big_k))
        else:
            # Children form a multiset: pairs with a < b once, a == b as
            # unordered pairs with repetition, C(n + 1, 2).
            total = sum(counts[a] * counts[big_k - 1 - a]
                        for a in range(big_k) if a < big_k - 1 - a)
            if (big_k - 1) % 2 == 0:
                half = counts[(big_k - 1) // 2]
                total += half * (half + 1) // 2
        counts.append(2 * total)
    return counts


def count_trees(k, p, q, *, ordered: bool = True, exact_size: bool = False) -> int:
    r"""Exact number of labeled binary trees with at most ``2k+1`` nodes.

    Counts :math:`|\mathcal{F}_{2k+1}|` of Section 2: full binary trees whose
    ``K <= k`` internal nodes are labeled ``+`` or ``*`` and whose ``K+1`` leaves
    are labeled by one of the ``pq`` pairs :math:`\phi_i(x_j)`.

    Convention. With ``ordered=True`` (default) left and right children are
    distinguished, which is what the paper's recursion
    :math:`|F^*_{2K+1}| = 2 \sum_{i \text{ odd} < 2K} |F^*_i||F^*_{2K-i}|` counts;
    in closed form :math:`|F^*_{2K+1}| = \mathrm{Catalan}(K)\,2^K (pq)^{K+1}`.
    With ``ordered=False`` trees that differ only by swapping the two children
    of operation nodes are identified (the paper's "equivalent structure"
    remark); the count is then of canonical forms, children as a multiset
    (identical children allowed, e.g. ``phi(x) + phi(x)``). No further algebra
    (associativity, identical functions) is applied.

    The paper's own value :math:`|F^*_3| = 2(pq)^2 - 2pq` matches neither
    convention (ordered gives ``2(pq)^2``, unordered ``pq(pq+1)``); see the
    module docstring, "Where the paper is off", item 1.

    Args:
        k: Maximum number of operations, int >= 0.
        p: Number of covariates, int >= 1.
        q: Number of basis functions, int >= 1.
        ordered: Whether children are ordered (paper's recursion) or unordered.
        exact_size: If True return :math:`|\mathcal{F}^*_{2k+1}|`, the trees with
            exactly ``2k+1`` nodes, instead of at most ``2k+1``.

    Returns:
        The exact count as a Python ``int``.

    Raises:
        TypeError: If ``k``, ``p`` or ``q`` is not an integer (``bool`` and
            ``float`` are refused).
        ValueError: If ``k < 0``, ``p < 1`` or ``q < 1``.

    Examples:
        >>> count_trees(0, 3, 2)
        6
        >>> count_trees(1, 1, 1)  # phi, phi + phi, phi * phi (both orders equal)
        3
        >>> count_trees(2, 1, 1, exact_size=True)  # Catalan(2) * 2**2
        8
        >>> count_trees(2, 1, 1, exact_size=True, ordered=False)
        4
    """
    k, p, q = _check_kpq(k, p, q)
    counts = _star_counts(k, p * q, bool(ordered))
    return counts[k] if exact_size else sum(counts)


def count_trees_bound(k, p, q) -> int:
    r"""Lemma 1's upper bound :math:`4k\,k!\,(pq)^{k+1}` on :math:`|\mathcal{F}_{2k+1}|`.

    The bound holds for all ``k >= 1`` (for the ordered count, hence also the
    unordered one) even though the paper's proof has a false intermediate step
    (module docstring, item 2).

    Args:
        k: Maximum number of operations, int >= 1.
        p: Number of covariates, int >= 1.
        q: Number of basis functions, int >= 1.

    Returns:
        The bound as an exact Python ``int``.

    Raises:
        TypeError: If an argument is not an integer.
        ValueError: If ``k < 1`` (the lemma is stated for ``k >= 1``; at ``k = 0``
            the formula gives 0, below :math:`|\mathcal{F}_1| = pq`; use
            ``count_trees(0, p, q)``), or ``p < 1`` or ``q < 1``.

    Examples:
        >>> count_trees_bound(2, 3, 1)
        432
    """
    k, p, q = _check_kpq(k, p, q)
    if k < 1:
        raise ValueError(
            "k (number of operations) must be an integer >= 1 for Lemma 1's "
            "bound; got 0. At k = 0 the formula 4k*k!*(pq)^(k+1) is 0, below "
            "|F_1| = pq; use count_trees(0, p, q) for the exact value.")
    return 4 * k * math.factorial(k) * (p * q) ** (k + 1)


# ---------------------------------------------------------------------------
# Lemma 3: number of products in the expansion of a tree.
# ---------------------------------------------------------------------------

_M_TABLE = [1]  # _M_TABLE[K] = M*_{2K+1}; grown on demand, values never change.


def max_product_terms(k) -> int:
    r"""Exact :math:`M_{2k+1}`, the most products any tree with ``k`` ops expands to.

    A tree's function is a sum of :math:`M_f` products of basis functions: a
    leaf has one term, ``+`` adds the children's term counts and ``*``
    multiplies them. Computed by the recursion in the proof of Lemma 3,

    .. math::
        M^*_1 = 1, \quad M^*_{2K+1} = \max_{a+b=K-1}
        \max(M^*_{2a+1} M^*_{2b+1},\; M^*_{2a+1} + M^*_{2b+1}),

    and :math:`M_{2k+1} = M^*_{2k+1}` (the sequence is increasing). Values:
    1, 2, 3, 4, 6, 9, 12, 18, 27, ... -- the largest number writable with
    ``k+1`` ones, ``+``, ``*`` and brackets; always below ``1.45**(k+1)``.

    Args:
        k: Number of operations, int >= 0.

    Returns:
        The exact maximum as a Python ``int``.

    Raises:
        TypeError: If ``k`` is not an integer.
        ValueError: If ``k < 0``.

    Examples:
        >>> [max_product_terms(k) for k in range(8)]
        [1, 2, 3, 4, 6, 9, 12, 18]
    """
    k = _check_int(k, "k", 0, "number of operations")
    table = _M_TABLE
    for big_k in range(len(table), k + 1):
        best = 0
        for a in range(big_k):
            m_a, m_b = table[a], table[big_k - 1 - a]
            best = max(best, m_a * m_b, m_a + m_b)
        table.append(best)
    return table[k]


def max_product_terms_bound(k, *, exact: bool = False):
    r"""Lemma 3's bound :math:`1.45^{k+1}` on :math:`M_{2k+1}`.

    The strict inequality ``max_product_terms(k) < 1.45**(k+1)`` holds for
    every ``k >= 0``: :math:`M_{2k+1} \le 3^{(k+1)/3} < 1.45^{k+1}` since
    :math:`3 < 1.45^3 = 3.048625`. The paper's induction step is wrong at
    ``K = 3`` though (module docstring, item 3).

    Args:
        k: Number of operations, int >= 0.
        exact: If True return the exact rational ``Fraction(29, 20)**(k+1)``
            (no overflow, exact comparisons) instead of a float.

    Returns:
        ``1.45**(k+1)`` as a ``float``, or as a ``fractions.Fraction`` when
        ``exact`` is True.

    Raises:
        TypeError: If ``k`` is not an integer.
        ValueError: If ``k < 0``.
        OverflowError: If ``exact`` is False and the float overflows
            (``k`` above about 1900).

    Examples:
        >>> max_product_terms_bound(1, exact=True)
        Fraction(841, 400)
    """
    k = _check_int(k, "k", 0, "number of operations")
    if exact:
        return Fraction(29, 20) ** (k + 1)
    return 1.45 ** (k + 1)


# ---------------------------------------------------------------------------
# Theorem 1, Corollary 1: sufficient number of samples.
# ---------------------------------------------------------------------------


def _log_union_constant(k: int) -> float:
    """Returns log(8 k k!) for k >= 1 and log 2 for k = 0 (exact 2|F_1| = 2pq)."""
    if k == 0:
        return math.log(2.0)
    return math.log(8.0) + math.log(k) + math.lgamma(k + 1)


def generalization_bound(n, k, p, q, delta) -> float:
    r"""Theorem 1's gap between true and empirical risk.

    .. math::
        2\sqrt{\frac{k+1}{n}} + \sqrt{\frac{(k+1)\log(pq) + \log(8k\,k!)
        + \log(1/\delta)}{2n}},

    which holds with probability at least ``1 - delta`` simultaneously for all
    trees in :math:`\mathcal{F}_{2k+1}` and all weights with
    :math:`\|w\|_1 \le 1`. ``log k!`` is computed with ``math.lgamma``. At
    ``k = 0``, where ``log(8k k!)`` is undefined, the union bound's constant
    ``8k k! (pq)^(k+1)`` is replaced by the exact ``2|F_1| = 2pq``, i.e.
    ``log(8k k!)`` becomes ``log 2``. The formula is the paper's; for the
    regression loss the first term should carry an extra factor ``sqrt(2)``
    (module docstring, item 5).

    Args:
        n: Number of samples, int >= 1.
        k: Maximum number of operations, int >= 0.
        p: Number of covariates, int >= 1.
        q: Number of basis functions, int >= 1.
        delta: Failure probability in (0, 1).

    Returns:
        The bound as a ``float``; it decreases like ``1/sqrt(n)``.

    Raises:
        TypeError: If an integer argument is not an integer, or ``delta`` is
            not a real number.
        ValueError: If an argument is out of range.

    Examples:
        >>> round(generalization_bound(1000, 3, 10, 5, 0.05), 4)
        0.2352
    """
    n = _check_int(n, "n", 1, "number of samples")
    k, p, q = _check_kpq(k, p, q)
    delta = _check_unit_interval(delta, "delta", "failure probability")
    rademacher = 2.0 * math.sqrt((k + 1) / n)
    numerator = ((k + 1) * math.log(p * q) + _log_union_constant(k)
                 + math.log(1.0 / delta))
    return rademacher + math.sqrt(numerator / (2.0 * n))


def classification_risk_bound(empirical_risk, n, k, p, q, delta) -> float:
    r"""Theorem 1 for classification: a bound on the true ramp risk.

    With labels in ``{-1, 1}`` and the paper's loss ``d(y, f) = min(1, max(0, 1 - y f))``
    (1-Lipschitz with values in ``[0, 1]``, so Theorem 1 applies as printed, without the
    regression loss's ``sqrt(2)``), with probability at least ``1 - delta`` every tree of
    ``k`` operations satisfies ``E[d] <= empirical_risk + generalization_bound(n, k, p, q,
    delta)``. The ramp also bounds the 0-1 loss (``d >= 1[y f <= 0]``), so this bounds the
    misclassification rate too. ``empirical_risk`` is the mean ramp loss on the ``n``
    training samples, e.g. ``TreeClassifier(loss="margin").fit(X, y).history_[-1]``.

    Examples:
        >>> round(classification_risk_bound(0.1, 1000, 3, 10, 5, 0.05), 4)
        0.3352
    """
    r = _check_real(empirical_risk, "empirical_risk")
    if not 0 <= r <= 1:
        raise ValueError(f"empirical_risk must be a mean ramp loss in [0, 1]; got {r}.")
    return min(1.0, r + generalization_bound(n, k, p, q, delta))


def sufficient_samples(k, p, q, epsilon, delta) -> int:
    r"""Corollary 1: samples that make the excess risk at most ``epsilon``.

    The smallest integer

    .. math::
        n \ge \frac{3(k+1)(\log pq + 8) + 3\log(8k\,k!) + 6\log(2/\delta)}
        {2\epsilon^2},

    for which the empirical risk minimiser over :math:`\mathcal{H}_{2k+1}` has
    excess risk at most ``epsilon`` with probability at least ``1 - delta``.
    At ``k = 0`` ``log(8k k!)`` is replaced by ``log 2`` as in
    :func:`generalization_bound`.

    Args:
        k: Maximum number of operations, int >= 0.
        p: Number of covariates, int >= 1.
        q: Number of basis functions, int >= 1.
        epsilon: Target excess risk in (0, 1).
        delta: Failure probability in (0, 1).

    Returns:
        The smallest sufficient ``n`` as a Python ``int`` (at least 1).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument is out of range.

    Examples:
        >>> sufficient_samples(0, 1, 1, 0.9, 0.5)
        22
    """
    k, p, q = _check_kpq(k, p, q)
    epsilon = _check_unit_interval(epsilon, "epsilon", "target excess risk")
    delta = _check_unit_interval(delta, "delta", "failure probability")
    return max(1, math.ceil(_sufficient_samples_real(k, p, q, epsilon, delta)))


def _sufficient_samples_real(k: int, p: int, q: int, epsilon: float,
                             delta: float) -> float:
    """Returns the real right-hand side of Corollary 1's sample condition."""
    numerator = (3.0 * (k + 1) * (math.log(p * q) + 8.0)
                 + 3.0 * _log_union_constant(k) + 6.0 * math.log(2.0 / delta))
    return numerator / (2.0 * epsilon ** 2)


# ---------------------------------------------------------------------------
# Theorem 2: necessary number of samples.
# ---------------------------------------------------------------------------


def restricted_ensemble_size(k, p, q, *, paper: bool = False) -> int:
    r"""Size of Theorem 2's restricted ensemble :math:`\mathcal{G}_{2k+1}`.

    :math:`\mathcal{G}_{2k+1}` holds the unit-weight products
    :math:`\prod_{(i,j)\in A} \phi_i(x_j)` over sets ``A`` of at most ``k+1``
    (basis, covariate) pairs using each covariate at most once, ``A`` non-empty
    (a tree has at least one leaf). Hence
    :math:`|\mathcal{G}_{2k+1}| = \sum_{i=0}^{k} q^{i+1}\binom{p}{i+1}`.
    The paper writes the sum from ``i = 1``, dropping the ``pq`` single leaves
    (module docstring, item 7); ``paper=True`` returns that value.

    Args:
        k: Maximum number of operations, int >= 0.
        p: Number of covariates, int >= 1.
        q: Number of basis functions, int >= 1.
        paper: If True return the paper's :math:`\sum_{i=1}^{k}` instead.

    Returns:
        The exact size as a Python ``int``.

    Raises:
        TypeError: If an argument is not an integer.
        ValueError: If an argument is out of range.

    Examples:
        >>> restricted_ensemble_size(1, 3, 2), restricted_ensemble_size(1, 3, 2, paper=True)
        (18, 12)
    """
    k, p, q = _check_kpq(k, p, q)
    start = 1 if paper else 0
    return sum(q ** (i + 1) * math.comb(p, i + 1) for i in range(start, k + 1))


def necessary_samples(k, p, q, sigma) -> float:
    r"""Theorem 2's sample threshold below which recovery fails w.p. >= 1/2.

    .. math::
        n_0 = \Bigl(\log\bigl(q^{k+1}\tbinom{p}{k+1}\bigr) - 2\log 2\Bigr)
        \frac{\sigma^2}{2}.

    For every ``n <= n_0`` any estimator of a tree drawn uniformly from
    :math:`\mathcal{G}_{2k+1}` is wrong with probability at least 1/2, so
    ``n_0`` is the largest sample size at which the lower bound bites (any
    integer ``n <= floor(n_0)``). The value is returned unclamped: when
    :math:`q^{k+1}\binom{p}{k+1} \le 4` it is ``<= 0`` and when it is below 1
    the theorem says nothing about any ``n >= 1`` (vacuous).

    Args:
        k: Maximum number of operations, int >= 0.
        p: Number of covariates, int >= k + 1.
        q: Number of basis functions, int >= 1.
        sigma: Noise standard deviation, > 0.

    Returns:
        ``n_0`` as a ``float`` (may be ``<= 0``; see above).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If an argument is out of range, including ``p < k + 1``
            (then :math:`\binom{p}{k+1} = 0`, the logarithm is undefined and no
            product of ``k+1`` distinct covariates exists).

    Examples:
        >>> round(necessary_samples(2, 10, 5, 1.0), 4)
        4.1148
    """
    k, p, q = _check_kpq(k, p, q)
    sigma = _check_real(sigma, "sigma")
    if sigma <= 0.0:
        raise ValueError(
            f"sigma (noise standard deviation) must be > 0; got {sigma}.")
    if p < k + 1:
        raise ValueError(
            f"p (number of covariates) must be >= k + 1 = {k + 1} for Theorem 2; "
            f"got p={p}. With fewer covariates C(p, k+1) = 0 and "
            f"log(q^(k+1) C(p, k+1)) is undefined; lower k or raise p.")
    log_size = (k + 1) * math.log(q) + math.log(math.comb(p, k + 1))
    return (log_size - 2.0 * math.log(2.0)) * sigma ** 2 / 2.0
