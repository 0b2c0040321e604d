"""Every Python snippet in the README and the documentation's pages runs and asserts what its
comments and text claim.

The snippets are the ```` ```python ```` blocks of ``README.md`` and of the Markdown pages in
``docs/`` (the user guide the README's sections moved to; not the gallery's scripts, which
``tests/test_gallery.py`` runs); a block found in both runs once.

Running is not enough (issue 28 item 7): the shapes snippet promised ``f(x2, x3)`` and printed
``f(x1) + f(x3) + f(x2) + cos·cos``, the Huber example "changed" the loss from 0.0012233 to
0.0012233, and the classifier's "missing values are learned from" had nothing to show for it.
So a snippet that makes a claim carries an ``assert`` for it (readers see the check), the
test makes sure those asserts stay there (:data:`CLAIMS`), and it checks the claims once
more on the snippet's own variables after it ran (:data:`CHECKS`).
"""

import pathlib
import re
import textwrap

import pytest

pytestmark = pytest.mark.additive_choice  # the snippets run with the library's defaults

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks():
    """``(blocks, where)``: each distinct snippet once, and the file it was first found in."""
    blocks, where = [], []
    for source in SOURCES:
        for b in re.findall(r"```python\n(.*?)```", source.read_text(encoding="utf-8"), flags=re.S):
            b = textwrap.dedent(b)
            if b not in blocks:
                blocks.append(b)
                where.append(source.relative_to(ROOT).as_posix())
    return blocks, where


BLOCKS, WHERE = _blocks()

# A string that finds a snippet: the assert lines it must carry, one per claim.
CLAIMS = {
    "shape_knots=(10, 6)": ['assert "f(x2, x3)" in est.formula()'],
    "optax.huber_loss": ["assert float(huber(w)) < 0.95 * float(huber(model.program.weight))"],
    "TreeClassifier(k=4, validation_fraction=0.3)": [
        'assert "dep_time missing" in clf.encoded_feature_names_',
        'assert clf.predict(cancelled)[0] == "late"'],
    "Coulomb": ['assert str(est.law()) == "8.99*q1*q2/r**2"'],
    'basis="splines"': ['assert "[carrier = EV]" in est.formula()'],
    'backend="numpy"': ["assert abs(f(X) - est.predict(X)).max() < 1e-4"],
    "est.save(path)": ["assert (jaxtree.load(path).predict(X) == est.predict(X)).all()"],
}


def _shape_terms_promised(block: str, ns: dict) -> None:
    """Every shape term a comment of the snippet names is in the printed formula."""
    promised = {t for line in block.splitlines() if "#" in line
                for t in re.findall(r"f\([^()]*\)", line.split("#", 1)[1])}
    assert "f(x2, x3)" in promised, promised
    formula = ns["est"].formula()
    assert promised <= set(re.findall(r"f\([^()]*\)", formula)), (promised, formula)


def _huber_loss_fell(block: str, ns: dict) -> None:
    """The fine-tuning changes the weights and lowers the Huber loss it minimises."""
    import numpy as np

    before, after = float(ns["huber"](ns["model"].program.weight)), float(ns["huber"](ns["w"]))
    assert after < 0.95 * before, (before, after)
    assert not np.allclose(np.asarray(ns["w"]), np.asarray(ns["model"].program.weight))


def _missing_rows_learned_from(block: str, ns: dict) -> None:
    """Rows with a missing ``dep_time`` are fitted (an indicator covariate is made) and their
    outcome is learned: a flight without a departure time is predicted late, as they were."""
    import numpy as np
    import pandas as pd

    clf, X, y = ns["clf"], ns["X"], ns["y"]
    assert "dep_time missing" in clf.encoded_feature_names_
    gone = X.dep_time.isna().to_numpy()
    assert (y[gone] == "late").mean() > 0.8  # the data the text describes
    late = list(clf.classes_).index("late")
    rows = pd.DataFrame({"carrier": ["UA", "DL"], "dep_time": [np.nan, np.nan]})
    assert (clf.predict_proba(rows)[:, late] > 0.5).all()


# A string that finds a snippet: a check of its variables after it ran.
CHECKS = {
    "shape_knots=(10, 6)": _shape_terms_promised,
    "optax.huber_loss": _huber_loss_fell,
    "TreeClassifier(k=4, validation_fraction=0.3)": _missing_rows_learned_from,
}


def test_readme_has_snippets():
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("marker", sorted(CLAIMS))
def test_snippets_assert_their_claims(marker):
    found = [b for b in BLOCKS if marker in b]
    assert len(found) == 1, f"{len(found)} README/docs snippets contain {marker!r}"
    lines = {re.sub(r"\s+#.*$", "", line).strip() for line in found[0].splitlines()}
    for claim in CLAIMS[marker]:
        assert claim in lines, f"the snippet with {marker!r} no longer asserts: {claim}"


# Snippets that make no claim (nothing in CLAIMS or CHECKS) only have to run; each costs a
# first compilation of its own (15-45 s on CI's two cores), so they run in the slow suite and
# the default suite runs the snippets whose claims it checks (save/load, the classifier on a
# table with missing values, the Huber fine-tuning, splines, export, shapes, the physics law)
# and the functional example under jit/vmap/grad (it shares its fit with the Huber snippet).
# Their paths keep oracles in the default suite: the demo fit (test_estimator.py), a custom
# basis (test_basis.py), devices= (test_sharding.py, test_classifier_sharding.py), the core
# step (test_search.py), fit_batch (test_batch.py), a memmap (test_stream.py).
SLOW_SNIPPETS = ("paper_synthetic(n=1000, p=10", 'functions=[("tanh(2{x})"', 'devices="all"',
                 "search.step_jit(prog, data", "jaxtree.fit_batch(X, y, k=2",
                 'mmap_mode="r"', 'engine="reference", **opts')


def _snippet(index):
    slow = any(marker in BLOCKS[index] for marker in SLOW_SNIPPETS)
    claims = any(marker in BLOCKS[index] for marker in (*CLAIMS, *CHECKS))
    assert not (slow and claims), f"snippet {index} ({WHERE[index]}) makes a claim: keep it in the default suite"
    return pytest.param(index, marks=pytest.mark.slow) if slow else index


def test_slow_snippets_are_found():
    for marker in SLOW_SNIPPETS:
        assert sum(marker in b for b in BLOCKS) == 1, marker


@pytest.mark.parametrize("index", [_snippet(i) for i in range(len(BLOCKS))])
def test_readme_snippet_runs(index):
    ns = {"__name__": "__readme__"}
    exec(compile(BLOCKS[index], f"{WHERE[index]}[python block {index}]", "exec"), ns)
    for marker, check in CHECKS.items():
        if marker in BLOCKS[index]:
            check(BLOCKS[index], ns)
