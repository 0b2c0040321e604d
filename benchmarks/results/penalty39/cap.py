"""The default with a larger term cap (monkeypatched; now the estimators' max_terms).
    python cap.py TABLES SHAPES TERMS"""
import sys

import _folds
from jaxtree._fit import spec as S

S.AUTO_SHAPES, S.AUTO_TERMS = int(sys.argv[2]), int(sys.argv[3])
for name in sys.argv[1].split(","):
    _folds.report((name, f"cap {sys.argv[2]}/{sys.argv[3]}"), _folds.ba.jaxtree_model, digits=4)
