"""Experiment (thirty-fourth session; BENCHMARKS.md, "A logit scale for the classifier's tree"):
the classifier's tree in units of U logits (its logistic loss taken at U f). AUC does not
depend on the decision function's scale, so predictions are left unscaled. Run from the
repository root with UNIT=U, SHAPES=0 (the shape stage does not know about U) and
JAXTREE_COMPILATION_CACHE=0 (the cached programs were compiled without the wrapper);
the other arguments are bench_accuracy.py's."""
import sys, os
U = float(os.environ.get("UNIT", "1"))
SHAPES = os.environ.get("SHAPES", "auto")
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
import jax, jax.numpy as jnp
from jaxtree import losses
_pw, _gh = losses.pointwise, losses.grad_hess
def pointwise(loss, y, f):
    return _pw(loss, y, U * f) if loss == "logistic" else _pw(loss, y, f)
def grad_hess(loss, y, f):
    if loss != "logistic": return _gh(loss, y, f)
    g, h = _gh(loss, y, U * f)
    return U * g, U * U * h
losses.pointwise, losses.grad_hess = pointwise, grad_hess
import jaxtree, bench_accuracy
if SHAPES != "auto":
    bench_accuracy.jaxtree_model = lambda task: (jaxtree.TreeRegressor() if task == "regression"
                                                 else jaxtree.TreeClassifier(shapes=int(SHAPES)))
bench_accuracy.main(sys.argv[1:])
