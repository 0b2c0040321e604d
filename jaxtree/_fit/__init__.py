"""The fit pipeline: a table becomes a fitted model in a short chain of stages over
explicit values (DESIGN.md section 10).

- :mod:`jaxtree._fit.spec`: hyperparameters checked against one constraint table and
  resolved once (``"auto"`` included) into a frozen :class:`~jaxtree._fit.spec.FitSpec`;
  nothing below reads an estimator again.
- :mod:`jaxtree._fit.select`: the choices made on held-out rows (splits, subsets, the
  one-standard-error rule, the size path), shared by the estimators and ``fit_batch``.
- :mod:`jaxtree._fit.source`: where the rows live (in memory, or read block by block from a
  memmap, a :class:`jaxtree.stream.ChunkReader` or a large in-memory array) behind one
  protocol: the stages never branch on it.
- :mod:`jaxtree._fit.stages`: the stages, written once: the tree and its size, shape terms
  before or after it, the backfitting round, pruning.
- :mod:`jaxtree._fit.pipeline`: encode -> target transform -> scale -> stages ->
  :class:`~jaxtree._fit.pipeline.FitResult`, which the estimator turns into fitted
  attributes.
"""
