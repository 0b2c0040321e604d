"""jaxtree: compact, human-readable regression formulas found by a jitted greedy search.

A model is a weighted labeled binary tree (Xu, Honorio and Wang): internal nodes ``+``
or ``*``, leaves ``w * phi_i(x_j)``. See :class:`TreeRegressor` for the estimator and
:func:`predict` for the pure functional prediction.
"""

from jaxtree import (basis, batch, classifier, datasets, debug, export, losses, moves, plan,
                     program, reference, refine, scoring, search, sharding, simplify, stream,
                     theory)
from jaxtree._compilation_cache import disable as disable_compilation_cache
from jaxtree._base import TargetPrecisionWarning, WeightBoxWarning
from jaxtree._inputs.validation import (DataSizeWarning, MissingValueWarning, NotFittedError,
                                        UnseenLevelWarning)
from jaxtree.basis import Basis, default_basis, get_basis, make_basis
from jaxtree.batch import BatchResult, fit_batch, fit_batch_classifier
from jaxtree.classifier import TreeClassifier, load
from jaxtree.estimator import TreeRegressor
from jaxtree.model import TreeModel, predict
from jaxtree.program import Program
from jaxtree._warmup import warmup

__version__ = "0.1.0"

__all__ = [
    "BatchResult",
    "Basis",
    "DataSizeWarning",
    "MissingValueWarning",
    "NotFittedError",
    "Program",
    "TargetPrecisionWarning",
    "TreeClassifier",
    "TreeModel",
    "TreeRegressor",
    "UnseenLevelWarning",
    "WeightBoxWarning",
    "basis",
    "batch",
    "classifier",
    "datasets",
    "debug",
    "default_basis",
    "disable_compilation_cache",
    "export",
    "fit_batch",
    "fit_batch_classifier",
    "get_basis",
    "load",
    "losses",
    "make_basis",
    "moves",
    "plan",
    "predict",
    "program",
    "reference",
    "refine",
    "scoring",
    "search",
    "sharding",
    "simplify",
    "stream",
    "theory",
    "warmup",
]
