"""The indicator rule patched into ``jaxtree.search`` for binary_small.py and binary_cat.py:
``table_config`` also scores a table's 0/1 columns from two columns each where compiling
dominates (the library applies ``with_binary`` only above the buckets' threshold). A fit
patched so must not keep the basis (``cache_basis=False``): the indicator scorer evaluates
the numeric columns' basis itself."""
import numpy as np

from jaxtree import scoring, search


def force_indicators() -> None:
    orig = search.table_config

    def patched(config, x, w, basis, k, cache_basis=False):
        c = orig(config, x, w, basis, k, cache_basis)
        if not cache_basis and not basis.per_feature:
            w2 = None if w is None else np.reshape(w, -1)
            c = c._replace(binary=scoring.binary_columns(np.reshape(x, (-1, x.shape[-1])), w2))
        return c

    search.table_config = patched
