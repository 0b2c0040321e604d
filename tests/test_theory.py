"""Tests for jaxtree.theory: brute-force counts and checks of the paper's claims."""

import doctest
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from jaxtree import theory
from jaxtree.theory import (
    count_trees,
    count_trees_bound,
    generalization_bound,
    max_product_terms,
    max_product_terms_bound,
    necessary_samples,
    restricted_ensemble_size,
    sufficient_samples,
)


# ---------------------------------------------------------------------------
# Brute-force helpers.
# ---------------------------------------------------------------------------


def _trees(n_ops, labels):
    """Yields every ordered labeled tree with exactly n_ops operation nodes."""
    if n_ops == 0:
        for label in labels:
            yield ("leaf", label)
        return
    for n_left in range(n_ops):
        for left in list(_trees(n_left, labels)):
            for right in list(_trees(n_ops - 1 - n_left, labels)):
                for op in "+*":
                    yield (op, left, right)


def _canonical(tree):
    """String form with the children of every operation node sorted."""
    if tree[0] == "leaf":
        return f"L{tree[1]}"
    children = sorted([_canonical(tree[1]), _canonical(tree[2])])
    return f"({tree[0]} {children[0]} {children[1]})"


def _expand(tree):
    """Expands a tree into its list of monomials (tuples of leaf labels)."""
    if tree[0] == "leaf":
        return [(tree[1],)]
    left, right = _expand(tree[1]), _expand(tree[2])
    if tree[0] == "+":
        return left + right
    return [a + b for a in left for b in right]


def _n_terms(tree):
    """Number of products in the expansion: + adds counts, * multiplies them."""
    if tree[0] == "leaf":
        return 1
    left, right = _n_terms(tree[1]), _n_terms(tree[2])
    return left + right if tree[0] == "+" else left * right


def _catalan(n):
    return math.comb(2 * n, n) // (n + 1)


def _m_closed_form(k):
    """Largest value of a +/* expression in k+1 ones (known closed form)."""
    m = k + 1
    if m == 1:
        return 1
    if m % 3 == 0:
        return 3 ** (m // 3)
    if m % 3 == 1:
        return 4 * 3 ** ((m - 4) // 3)
    return 2 * 3 ** ((m - 2) // 3)


# ---------------------------------------------------------------------------
# Tree counts (Lemma 1).
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("p,q", [(1, 1), (1, 2), (2, 1), (2, 2)])
@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_count_trees_matches_brute_force(k, p, q):
    labels = [(i, j) for i in range(q) for j in range(p)]
    ordered_total, classes_total = 0, 0
    for n_ops in range(k + 1):
        trees = list(_trees(n_ops, labels))
        assert len(set(map(repr, trees))) == len(trees)  # all distinct
        classes = {_canonical(t) for t in trees}
        assert count_trees(n_ops, p, q, exact_size=True) == len(trees)
        assert count_trees(n_ops, p, q, exact_size=True, ordered=False) == len(classes)
        ordered_total += len(trees)
        classes_total += len(classes)
    assert count_trees(k, p, q) == ordered_total
    assert count_trees(k, p, q, ordered=False) == classes_total
    assert isinstance(count_trees(k, p, q), int)


def test_ordered_count_closed_form():
    for k in range(30):
        for m in (1, 2, 6, 35):
            expected = _catalan(k) * 2 ** k * m ** (k + 1)
            assert count_trees(k, m, 1, exact_size=True) == expected


def test_paper_value_of_f3_matches_neither_convention():
    for p, q in [(1, 1), (2, 1), (3, 4)]:
        m = p * q
        paper = 2 * m ** 2 - 2 * m
        ordered = count_trees(1, p, q, exact_size=True)
        unordered = count_trees(1, p, q, exact_size=True, ordered=False)
        assert ordered == 2 * m ** 2  # what the paper's own recursion gives
        assert unordered == m * (m + 1)
        assert paper not in (ordered, unordered)
    # With one label the paper claims no 3-node tree exists; there are 2.
    assert 2 * 1 ** 2 - 2 * 1 == 0
    assert count_trees(1, 1, 1, exact_size=True, ordered=False) == 2
    # The claimed strict |F*_3| < 2 (pq)^2 is an equality.
    assert count_trees(1, 3, 2, exact_size=True) == 2 * 1 * math.factorial(1) * 6 ** 2


@pytest.mark.parametrize("p", [1, 2, 3, 10])
@pytest.mark.parametrize("q", [1, 2, 5])
def test_lemma1_bound_holds_on_grid(p, q):
    for k in range(1, 16):
        bound = count_trees_bound(k, p, q)
        assert count_trees(k, p, q) <= bound
        assert count_trees(k, p, q, ordered=False) <= count_trees(k, p, q)


def test_lemma1_reduces_to_pq_one_and_holds_far_out():
    # |F_{2k+1}| / (pq)^(k+1) is largest at pq = 1, so this covers every p, q.
    for k in range(1, 61):
        assert sum(_catalan(i) * 2 ** i for i in range(k + 1)) <= 4 * k * math.factorial(k)
    # Tail argument: sum_i Catalan(i) 2^i <= sum_i 8^i < 8^(k+1)/7 <= 4k k! for k >= 15.
    for k in range(15, 61):
        assert 8 ** (k + 1) < 7 * 4 * k * math.factorial(k)


def test_lemma1_intermediate_bound_fails_exactly_at_3_4_5():
    # Paper: |F*_{2k+1}| <= 2k k! (pq)^(k+1). Ratio does not depend on pq.
    failing = [k for k in range(1, 201)
               if count_trees(k, 1, 1, exact_size=True) > 2 * k * math.factorial(k)]
    assert failing == [3, 4, 5]
    assert count_trees(3, 2, 3, exact_size=True) > 2 * 3 * math.factorial(3) * 6 ** 4


def test_lemma1_jensen_step_is_reversed():
    # Paper: sum_{i<k} i!(k-1-i)! <= k k!/2^(k-1) "since 1/x is concave".
    for k in range(1, 40):
        lhs = sum(math.factorial(i) * math.factorial(k - 1 - i) for i in range(k))
        rhs = Fraction(k * math.factorial(k), 2 ** (k - 1))
        if k <= 2:
            assert lhs == rhs
        else:
            assert lhs > rhs  # convex 1/x: Jensen goes the other way


def test_count_trees_bound_values_and_k0():
    assert count_trees_bound(1, 1, 1) == 4
    assert count_trees_bound(3, 2, 5) == 4 * 3 * 6 * 10 ** 4
    with pytest.raises(ValueError, match=r"^k .*>= 1.*count_trees\(0, p, q\)"):
        count_trees_bound(0, 2, 2)


# ---------------------------------------------------------------------------
# Number of products (Lemma 3).
# ---------------------------------------------------------------------------


def test_max_product_terms_matches_brute_force():
    for k in range(8):
        best = max(_n_terms(t) for t in _trees(k, [0]))
        assert max_product_terms(k) == best


def test_term_count_rule_matches_symbolic_expansion():
    for k in range(5):
        for tree in _trees(k, [0, 1]):
            assert len(_expand(tree)) == _n_terms(tree)
    # The paper's Figure 1 example: (a + b) * (c + d) has 4 products.
    fig1 = ("*", ("+", ("leaf", "a"), ("leaf", "b")), ("+", ("leaf", "c"), ("leaf", "d")))
    assert len(_expand(fig1)) == 4


def test_max_product_terms_closed_form():
    for k in range(400):
        assert max_product_terms(k) == _m_closed_form(k)


def test_lemma3_holds_for_every_k_checked():
    failing = [k for k in range(400)
               if not max_product_terms(k) < max_product_terms_bound(k, exact=True)]
    assert failing == []
    # Sharper: M^3 <= 3^(k+1), and 3 < 1.45^3, so the lemma holds for all k.
    for k in range(400):
        assert max_product_terms(k) ** 3 <= 3 ** (k + 1)
    assert 3 < Fraction(29, 20) ** 3
    # Tightest case is k = 2: 3 < 3.048625.
    ratios = [max_product_terms(k) / max_product_terms_bound(k) for k in range(60)]
    assert max(range(60), key=ratios.__getitem__) == 2
    # Pairs and triples: (1+1)*(1+1) = 4 < 1.45^4; 3^((k+1)/3) < 1.45^(k+1).
    assert max_product_terms(3) == 4 < max_product_terms_bound(3)


def test_lemma3_induction_step_fails_at_k3():
    b = Fraction(29, 20)
    # Step claims max(b^(a+1) b^(c+1), b^(a+1) + b^(c+1)) = b^(K+1) for a + c = K - 1.
    def step(big_k):
        return max(max(b ** (a + 1) * b ** (big_k - a), b ** (a + 1) + b ** (big_k - a))
                   for a in range(big_k))
    assert step(3) > b ** 4  # 1.45^3 + 1.45 = 4.499 > 4.420
    assert all(step(big_k) == b ** (big_k + 1) for big_k in range(4, 60))


def test_max_product_terms_bound_float_and_exact():
    assert max_product_terms_bound(0) == pytest.approx(1.45)
    assert max_product_terms_bound(3) == pytest.approx(1.45 ** 4)
    assert max_product_terms_bound(5, exact=True) == Fraction(29, 20) ** 6


# ---------------------------------------------------------------------------
# Theorem 1's proof: Rademacher and Lipschitz steps.
# ---------------------------------------------------------------------------


def _rademacher_single_leaf(n):
    """Exact E_sigma sup_{|w|<=1} (1/n) sum_i sigma_i w, with phi(x_i) = 1."""
    total = sum(abs(sum(s)) for s in itertools.product((-1, 1), repeat=n))
    return total / 2 ** n / n


def test_rademacher_chain_needs_absolute_value():
    m1 = max_product_terms(0)
    for n in range(1, 11):
        true = _rademacher_single_leaf(n)
        paper_chain = math.sqrt(2 * math.log(m1) / n)  # = 0
        corrected = math.sqrt(2 * math.log(2 * m1) / n)  # Massart over +-u_j
        assert paper_chain < true <= corrected
        assert true <= math.sqrt(1 / n) + 1e-15  # the theorem's term, k = 0
    assert _rademacher_single_leaf(1) == 1.0 == math.sqrt(1 / 1)  # not strict


def test_corrected_rademacher_term_gives_sqrt_k_plus_1_for_k_ge_4():
    ok = [k for k in range(200)
          if 2 * math.log(2 * max_product_terms(k)) <= k + 1]
    assert ok == list(range(4, 200))
    # For k <= 3, M = k + 1 and E max_j |s_j| <= sqrt(M n) gives sqrt((k+1)/n).
    assert [max_product_terms(k) for k in range(4)] == [1, 2, 3, 4]


def test_regression_loss_is_sqrt2_lipschitz():
    def loss(y, y_hat):
        return np.minimum(1.0, (y - y_hat) ** 2 / 2.0)
    a = np.linspace(-3.0, 3.0, 600001)
    slopes = np.abs(np.diff(loss(0.0, a)) / np.diff(a))
    assert slopes.max() == pytest.approx(math.sqrt(2), rel=1e-4)
    assert slopes.max() > 1.4


# ---------------------------------------------------------------------------
# Theorem 1 and Corollary 1.
# ---------------------------------------------------------------------------


def test_generalization_bound_formula_and_k0():
    n, k, p, q, delta = 500, 4, 20, 7, 0.1
    expected = 2 * math.sqrt((k + 1) / n) + math.sqrt(
        ((k + 1) * math.log(p * q) + math.log(8 * k * math.factorial(k))
         + math.log(1 / delta)) / (2 * n))
    assert generalization_bound(n, k, p, q, delta) == pytest.approx(expected, rel=1e-12)
    k0 = 2 * math.sqrt(1 / n) + math.sqrt(
        (math.log(p * q) + math.log(2) + math.log(1 / delta)) / (2 * n))
    assert generalization_bound(n, 0, p, q, delta) == pytest.approx(k0, rel=1e-12)


def test_union_constant_covers_twice_the_tree_count():
    for k in range(0, 12):
        for m in (1, 3, 40):
            constant = 2 * m if k == 0 else 8 * k * math.factorial(k) * m ** (k + 1)
            assert 2 * count_trees(k, m, 1) <= constant


def test_generalization_bound_scaling_and_monotonicity():
    for n in (10, 100, 12345):
        ratio = generalization_bound(n, 3, 10, 5, 0.05) / generalization_bound(4 * n, 3, 10, 5, 0.05)
        assert ratio == pytest.approx(2.0, rel=1e-12)
    values_k = [generalization_bound(200, k, 10, 5, 0.05) for k in range(0, 20)]
    values_p = [generalization_bound(200, 3, p, 5, 0.05) for p in (1, 2, 10, 100)]
    values_q = [generalization_bound(200, 3, 10, q, 0.05) for q in (1, 2, 10, 100)]
    values_n = [generalization_bound(n, 3, 10, 5, 0.05) for n in (1, 10, 100, 1000)]
    for values in (values_k, values_p, values_q):
        assert all(a < b for a, b in zip(values, values[1:]))
    assert all(a > b for a, b in zip(values_n, values_n[1:]))
    assert generalization_bound(200, 3, 10, 5, 0.01) > generalization_bound(200, 3, 10, 5, 0.1)


@pytest.mark.parametrize("k,p,q,epsilon,delta", [
    (0, 1, 1, 0.9, 0.5), (1, 3, 2, 0.5, 0.1), (3, 10, 5, 0.2, 0.05),
    (10, 100, 40, 0.1, 0.01), (50, 1000, 10, 0.05, 1e-6)])
def test_sufficient_samples_minimal_and_sufficient(k, p, q, epsilon, delta):
    n = sufficient_samples(k, p, q, epsilon, delta)
    assert isinstance(n, int)
    lhs = theory._sufficient_samples_real(k, p, q, epsilon, delta)
    assert n >= lhs and n - 1 < lhs
    # The proof's chain: Theorem 1 at delta/2 plus Hoeffding at delta/2 <= epsilon.
    chain = (generalization_bound(n, k, p, q, delta / 2)
             + math.sqrt(math.log(2 / delta) / (2 * n)))
    assert chain <= epsilon


# ---------------------------------------------------------------------------
# Theorem 2.
# ---------------------------------------------------------------------------


def _brute_ensemble(k, p, q):
    """All non-empty sets A of (basis, covariate) pairs, |A| <= k+1, covariates distinct."""
    sets = set()
    for size in range(1, k + 2):
        for covariates in itertools.combinations(range(p), size):
            for bases in itertools.product(range(q), repeat=size):
                sets.add(frozenset(zip(bases, covariates)))
    return sets


@pytest.mark.parametrize("k,p,q", [(0, 1, 1), (0, 3, 2), (1, 3, 2), (2, 4, 2), (3, 4, 3)])
def test_restricted_ensemble_size_brute_force(k, p, q):
    size = len(_brute_ensemble(k, p, q))
    assert restricted_ensemble_size(k, p, q) == size
    paper = restricted_ensemble_size(k, p, q, paper=True)
    assert size - paper == p * q  # the paper drops the single-leaf trees
    lower = q ** (k + 1) * math.comb(p, k + 1)
    assert size >= lower
    if k == 0:
        assert paper == 0 < lower  # paper's "c >= q^(k+1) C(p, k+1)" fails at k = 0
    else:
        assert paper >= lower


def test_restricted_ensemble_orthonormality_and_distance():
    nodes, weights = np.polynomial.legendre.leggauss(80)
    weights = weights / 2.0  # uniform density on [-1, 1]

    def phi(i, z):
        return math.sqrt(2.0) * np.cos(i * math.pi * z)

    for i in range(1, 5):
        assert np.sum(weights * phi(i, nodes)) == pytest.approx(0.0, abs=1e-12)
        for j in range(1, 5):
            inner = np.sum(weights * phi(i, nodes) * phi(j, nodes))
            assert inner == pytest.approx(float(i == j), abs=1e-12)
    assert np.max(np.abs(phi(1, np.linspace(-1, 1, 101)))) == pytest.approx(math.sqrt(2))

    # ||g_A - g_A'||^2 = 2 I(A != A') (the paper writes I(A = A')), p = 2, q = 2.
    grid = np.meshgrid(nodes, nodes, indexing="ij")
    w2 = np.outer(weights, weights)

    def g(a):
        out = np.ones_like(grid[0])
        for basis, cov in a:
            out = out * phi(basis + 1, grid[cov])
        return out

    ensemble = sorted(_brute_ensemble(1, 2, 2), key=sorted)
    for a, b in itertools.product(ensemble, repeat=2):
        dist = np.sum(w2 * (g(a) - g(b)) ** 2)
        assert dist == pytest.approx(2.0 * (a != b), abs=1e-10)


def test_necessary_samples_values_and_fano():
    k, p, q, sigma = 3, 100, 40, 0.5
    n0 = necessary_samples(k, p, q, sigma)
    log_c = (k + 1) * math.log(q) + math.log(math.comb(p, k + 1))
    assert n0 == pytest.approx((log_c - 2 * math.log(2)) * sigma ** 2 / 2)
    assert n0 > 0
    # At n = n0, Fano's bound 1 - (n/sigma^2 + log 2)/log c is exactly 1/2.
    assert 1 - (n0 / sigma ** 2 + math.log(2)) / log_c == pytest.approx(0.5)
    assert necessary_samples(k, p, q, 2 * sigma) == pytest.approx(4 * n0)
    assert necessary_samples(10, 100, 40, 0.05) > 0
    # Vacuous cases are returned unclamped: q^(k+1) C(p, k+1) <= 4 gives n0 <= 0.
    assert necessary_samples(0, 1, 1, 1.0) < 0
    assert necessary_samples(0, 2, 2, 1.0) == pytest.approx(0.0, abs=1e-15)
    assert necessary_samples(1, 2, 1, 1.0) < 0


def test_necessary_samples_needs_enough_covariates():
    with pytest.raises(ValueError, match=r"^p .*>= k \+ 1 = 4.*got p=3"):
        necessary_samples(3, 3, 5, 1.0)


# ---------------------------------------------------------------------------
# Input validation.
# ---------------------------------------------------------------------------

_GOOD = {"n": 100, "k": 2, "p": 5, "q": 3, "delta": 0.1, "epsilon": 0.1, "sigma": 1.0}

_CALLS = {
    count_trees: ("k", "p", "q"),
    count_trees_bound: ("k", "p", "q"),
    max_product_terms: ("k",),
    max_product_terms_bound: ("k",),
    generalization_bound: ("n", "k", "p", "q", "delta"),
    sufficient_samples: ("k", "p", "q", "epsilon", "delta"),
    necessary_samples: ("k", "p", "q", "sigma"),
    restricted_ensemble_size: ("k", "p", "q"),
}

_BAD_VALUES = {
    "k": [-1], "p": [0, -3], "q": [0], "n": [0, -5],
    "delta": [0.0, 1.0, -0.2, 1.5, float("nan"), float("inf")],
    "epsilon": [0.0, 1.0, 2.0, float("nan")],
    "sigma": [0.0, -1.0, float("inf")],
}

_BAD_TYPES = {
    "k": [True, 2.0, 2.5, "2", None], "p": [False, 5.0], "q": [3.0, None],
    "n": [100.0, True], "delta": [True, "0.1", None], "epsilon": [None, "x"],
    "sigma": [True, "1"],
}


def _cases(table):
    for func, names in _CALLS.items():
        for name in names:
            for value in table[name]:
                yield pytest.param(func, names, name, value,
                                   id=f"{func.__name__}-{name}-{value!r}")


@pytest.mark.parametrize("func,names,name,value", list(_cases(_BAD_VALUES)))
def test_bad_values_raise_value_error(func, names, name, value):
    kwargs = {n: _GOOD[n] for n in names}
    kwargs[name] = value
    with pytest.raises(ValueError, match=rf"^{name} "):
        func(*kwargs.values())


@pytest.mark.parametrize("func,names,name,value", list(_cases(_BAD_TYPES)))
def test_bad_types_raise_type_error(func, names, name, value):
    kwargs = {n: _GOOD[n] for n in names}
    kwargs[name] = value
    with pytest.raises(TypeError, match=rf"^{name} "):
        func(*kwargs.values())


def test_error_messages_name_the_range():
    with pytest.raises(ValueError, match=r"k \(number of operations\) must be an integer >= 0; got -1"):
        count_trees(-1, 1, 1)
    with pytest.raises(ValueError, match=r"delta .*open interval \(0, 1\); got 1.0"):
        generalization_bound(10, 1, 1, 1, 1.0)
    with pytest.raises(TypeError, match=r"k .*got float 2.0\. Use k=2\."):
        max_product_terms(2.0)
    with pytest.raises(ValueError, match=r"sigma .*> 0; got 0.0"):
        necessary_samples(1, 5, 2, 0.0)


def test_numpy_integers_are_accepted():
    assert count_trees(np.int64(2), np.int32(2), 3) == count_trees(2, 2, 3)
    assert sufficient_samples(np.int64(3), 10, 5, np.float32(0.5), 0.05) == \
        sufficient_samples(3, 10, 5, 0.5, 0.05)


# ---------------------------------------------------------------------------
# Docs.
# ---------------------------------------------------------------------------


def test_public_names_have_docstrings():
    for name in theory.__all__:
        assert getattr(theory, name).__doc__, name
    assert "Where the paper is off" in theory.__doc__


def test_doctests_run():
    result = doctest.testmod(theory, verbose=False)
    assert result.attempted > 0 and result.failed == 0
