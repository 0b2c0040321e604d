"""Numeric columns warped to their training quantiles (sklearn QuantileTransformer, uniform) before
the default fit: does a quantile grid help jaxtree? python quant.py TABLES"""
import sys

import pandas as pd
from sklearn.preprocessing import QuantileTransformer

import _folds


def warped(X, tr, te):
    """The folds' rows with the numeric columns of more than two values mapped to the training
    rows' quantiles (NaN passes through)."""
    num = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c]) and X[c].nunique() > 2]
    xtr, xte = X.iloc[tr].copy(), X.iloc[te].copy()
    q = QuantileTransformer(n_quantiles=min(1000, len(tr)), output_distribution="uniform",
                            random_state=0)
    xtr[num] = q.fit_transform(xtr[num].astype(float))
    xte[num] = q.transform(xte[num].astype(float))
    return xtr, xte


for name in sys.argv[1].split(","):
    _folds.report((name, "quantile-warped"), _folds.ba.jaxtree_model, warped, digits=4)
