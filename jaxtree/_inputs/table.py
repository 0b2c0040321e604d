"""A training table read once: validated, its categories and missing values encoded as
numeric covariates (:func:`read_table`, both estimators' in-memory fits; a memmap's or a
ChunkReader's table is read block by block by :func:`jaxtree._fit.pipeline.read_stream`,
into the same :class:`Table`).

Decision (fifty-fifth session, issue 26): the table and its reader were in
:mod:`jaxtree._fit.pipeline`. Reading a table is the boundary's work (validation and
encoding, nothing of the search), so it lives beside them; the pipeline takes a
:class:`Table` and plans the fit from it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import jax
import numpy as np

from jaxtree._inputs import encoding as encoding_
from jaxtree._inputs import validation as V


@dataclasses.dataclass(frozen=True)
class Table:
    """A training table read once (:func:`read_table` in memory,
    :func:`jaxtree._fit.pipeline.read_stream` block by block): validated, its missing values
    and categories encoded as numeric covariates.

    Attributes:
      x: ``(n, m)`` the encoded covariates (the user's own array when nothing was encoded;
        streamed: a memmap, or its rows encoded on demand).
      sample_weight: ``(n,)`` checked weights, or None (streamed: as given, checked by the
        reader).
      encoding: the table encoding (:mod:`jaxtree._inputs.encoding`; the identity spec for
        numbers; None for a streamed table without missing values, whose identity spec the
        scaling sets).
      names: the table's own column names (a DataFrame's), or None.
      dtype: the compute dtype (float32, or float64 for float64 input under x64).
      y: the regressor's targets (checked, or a streamed reader's), or None (the
        classifier checks its labels itself).
      reader: a streamed table's :class:`jaxtree.stream.ChunkReader` (``x``, ``y`` and the
        weights read block by block; the fit's row plan chooses the chunk it reads), else
        None.
      chunk_size: the chunk size a streamed table asks of the row plan (a ChunkReader's
        own, else the estimator's ``chunk_size``); None in memory (the estimator's).
      n_weighted: the rows of positive weight
        (:func:`jaxtree._inputs.validation.check_weighted_rows`, at least 2), None without
        weights: the rows the fit's size rules count (:func:`jaxtree._fit.limits.check_size`).
    """

    x: Any
    sample_weight: Optional[np.ndarray]
    encoding: Any
    names: Optional[tuple]
    dtype: Any
    y: Any = None
    reader: Any = None
    chunk_size: Any = None
    n_weighted: Optional[int] = None

    @property
    def n(self) -> int:
        return self.x.shape[0]

    @property
    def feature_names(self) -> tuple:
        """The covariates' names (the raw names when nothing was encoded)."""
        return encoding_.names_out(self.encoding, self.x.shape[1])


def read_table(X, sample_weight, hyper: dict) -> Table:
    """Validates and encodes an in-memory training table (both estimators): missing values
    and categories become covariates (:func:`jaxtree._inputs.encoding.fit_transform`, with the
    settings of ``hyper``), the weights are checked and the covariates must be representable
    in the compute dtype. Fewer than 2 rows, or fewer than 2 of positive weight, are refused."""
    xa, enc = encoding_.fit_transform(X, hyper)
    names = V.frame_feature_names(X)
    n = xa.shape[0]
    if n < 2:
        raise ValueError(f"fit needs at least 2 samples; got {n}.")
    sw = V.check_sample_weight(sample_weight, n)
    n_weighted = V.check_weighted_rows(sw, n)
    dtype = V.float_dtype_for(np.asarray(xa), bool(jax.config.jax_enable_x64))
    V.check_representable(xa, None, dtype,
                          feature_names=names if enc.is_identity else enc.feature_names_out)
    return Table(xa, sw, enc, names, dtype, n_weighted=n_weighted)

