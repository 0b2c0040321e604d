"""The library's boundary: what a user hands in, checked and encoded before any stage runs.

* :mod:`jaxtree._inputs.validation`: tables, targets, weights, labels and hyperparameters
  checked, with messages that say what was wrong and what to do; the library's warnings and
  errors.
* :mod:`jaxtree._inputs.encoding`: a table's categories and missing values encoded as
  numeric covariates, the same way at fit and at predict time.
* :mod:`jaxtree._inputs.table`: a training table read once, validated and encoded (the
  :class:`~jaxtree._inputs.table.Table` the fit pipeline plans from).

Decision (fifty-third session, issue 26): the two modules were ``jaxtree/_validation.py`` and
``jaxtree/_encoding.py``. Reading a table goes back and forth between them (the encoder asks
the validator whether a value is missing, what a frame's column names are, whether a column
of objects holds numbers) and they change together, so they live together here, with the
table they make (fifty-fifth session); nothing else of the library is imported by any of
them but :mod:`jaxtree._threads`.
"""
