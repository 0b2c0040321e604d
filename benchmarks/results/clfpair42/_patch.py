"""The pair rule patched into ``jaxtree.search`` for the ``patched*.py`` measurements (the
commit before a change, run as the change would behave). One place for every mode:

* ``nopair``: ``search_config`` returns no pair lookahead (for classification losses only
  where ``classification_only``, as the classifier's change does; else for every loss);
* ``factorR``: ``pair_taken`` takes a pair whose gain exceeds ``R`` times the single
  insertion's (the library's rule is ``R = 2``);
* ``relF``: the library's rule and a gain of more than ``F`` % of the tree's SSE;
* anything else: the library as it is."""
import jax.numpy as jnp

from jaxtree import search


def apply(mode: str, classification_only: bool = False) -> None:
    if mode == "nopair":
        orig = search.search_config

        def patched(s, max_k, n_candidates=0, **kw):
            c = orig(s, max_k, n_candidates, **kw)
            if classification_only and kw.get("loss", "squared") == "squared":
                return c
            return c._replace(pair_leaves=0)

        search.search_config = patched
    elif mode.startswith("factor"):
        r = float(mode[6:])
        search.pair_taken = lambda rss, single, pair: (
            jnp.isfinite(pair) & ((rss - pair) > r * (rss - single)))
    elif mode.startswith("rel"):
        f = float(mode[3:]) / 100
        search.pair_taken = lambda rss, single, pair: (
            jnp.isfinite(pair) & ((rss - pair) > 2 * (rss - single)) & ((rss - pair) > f * rss))
