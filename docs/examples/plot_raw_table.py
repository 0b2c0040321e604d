"""
A raw table: missing values and a text column
=============================================

Fit a pandas table as it comes, with a text column and missing numbers, without any
cleaning: each level of the text column becomes a 0/1 indicator, and a numeric column
with missing values gets a fill value plus a ``"<col> missing"`` indicator. The formula
names the indicators, and :meth:`~jaxtree.TreeRegressor.plot_terms` draws one panel per
term.
"""

# %%
# A small table of flight delays
# ------------------------------
# The delay depends on the carrier (``EV`` is late), grows after 17:00 and is large
# for the flights without a departure time (say, diverted ones).
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import jaxtree

rng = np.random.default_rng(0)
n = 1200
X = pd.DataFrame({"carrier": rng.choice(["UA", "EV", "DL"], n),
                  "dep_hour": rng.uniform(5, 24, n),
                  "distance": rng.uniform(200, 2500, n)})
missing = rng.uniform(size=n) < 0.1
X.loc[missing, "dep_hour"] = np.nan
late_hours = np.maximum(X.dep_hour.fillna(0) - 17, 0)   # 0 where the hour is missing
delay = pd.Series(12 * (X.carrier == "EV") + 0.5 * late_hours ** 2 + 30 * missing
                  + rng.normal(0, 2, n), name="delay")
print(X.head())
print(X.isna().sum().to_dict())

# %%
# The fit
# -------
# The table goes in as it is; ``encoded_feature_names_`` are the covariates the tree
# sees. The formula is in the table's units, with indicators written ``[carrier = EV]``
# and ``[dep_hour missing]``.
est = jaxtree.TreeRegressor(k=6).fit(X, delay)
print(est.encoded_feature_names_)
print(est.formula())
print(f"training R²: {est.score(X, delay):.3f}")

# %%
# New rows, with an unseen carrier and a missing hour
# ---------------------------------------------------
# An unseen level counts as the rare levels' group, a missing hour takes the learned
# fill value and sets its indicator.
new = pd.DataFrame({"carrier": ["EV", "UA", "AA"], "dep_hour": [20.0, np.nan, 9.0],
                    "distance": [500.0, 800.0, 1500.0]})
print(new.assign(predicted_delay=est.predict(new)))

# %%
# One panel per term
# ------------------
# :meth:`~jaxtree.TreeRegressor.explain` lists the formula's top-level terms with their
# share of the explained variance; :meth:`~jaxtree.TreeRegressor.plot_terms` draws each
# one against its covariate (an indicator's as two bars).
print(est.explain(X)[["term", "share", "mean_abs"]])
est.plot_terms(X)
plt.show()
