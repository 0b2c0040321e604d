"""jaxtree's default with other keywords on bench_accuracy's folds (shape_knots, max_terms, ...).
    python knots.py TABLES CONFIGS
CONFIGS: ';'-separated python dicts of the estimators' keywords."""
import ast
import sys

import _folds

for name in sys.argv[1].split(","):
    for cfg in sys.argv[2].split(";"):
        kw = ast.literal_eval(cfg)
        _folds.report((name, cfg), lambda task: _folds.ba.jaxtree_model(task).set_params(**kw))
