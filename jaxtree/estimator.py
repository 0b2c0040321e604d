"""``TreeRegressor``: a scikit-learn style estimator over the functional core.

A thin shell: ``fit`` resolves the hyperparameters once and runs the fit pipeline
(:mod:`jaxtree._fit`: encode, target transform, scale, the stages over the rows wherever
they live), and the fitted attributes are set from its
:class:`~jaxtree._fit.pipeline.FitResult`. Both engines (``"jax"``: the jitted batched
search; ``"reference"``: the paper's algorithm in plain numpy) produce the same
:class:`jaxtree.program.Program`, so prediction, formulas and files
(:class:`jaxtree._base.Regressor`) are written once and serve both.
"""

from __future__ import annotations

from typing import Callable, Optional

from jaxtree import _compilation_cache
from jaxtree import model as model_
from jaxtree._base import (ParamsProtocol, Regressor, from_file, loaded_result,
                            set_fitted)
from jaxtree._inputs import encoding as encoding_
from jaxtree._fit import pipeline
from jaxtree._fit.spec import AUTO_TERMS, DEFAULT_MIN_SUPPORT, DEFAULT_TOL
from jaxtree._fit.spec import (DEFAULT_Y_BOUND, ENGINES, PARAMETER_CONSTRAINTS,
                               TARGET_TRANSFORMS, Params, check_params)

__all__ = [
    "check_params",
    "ENGINES",
    "load",
    "PARAMETER_CONSTRAINTS",
    "ParamsProtocol",
    "TARGET_TRANSFORMS",
    "TreeRegressor",
]


class TreeRegressor(Regressor):
    """Compositional nonparametric regression tree (Xu, Honorio and Wang).

    The model is ``y = w0 + T(x)``, where ``T`` is a binary tree of ``k`` operations
    (``+`` or ``*``) over ``k+1`` leaves ``w * phi_i(x_j)``, ``|w| <= 1``, found by greedy
    structure search. Covariates are min-max scaled to ``[0, 1]`` and ``y`` to
    ``[-1, 1]`` with the training data; predictions are returned in ``y``'s units.

    Args:
      k: number of operations (the paper's ``k``: ``k=10`` gives 21 nodes, 11 leaves).
      basis: a :class:`jaxtree.basis.Basis`, a preset name (``"default"``, ``"fourier"``,
        ``"splines"``, ``"polynomial"``), a dict of family sizes for
        :func:`jaxtree.basis.make_basis`, or None for the default ``q = 40`` set.
      refine: weight adjustment after each insertion: ``"optax"`` (joint projected
        L-BFGS, default), ``"coordinate"`` (the paper's coordinate descent) or None.
      engine: ``"jax"`` (compiled, batched) or ``"reference"`` (plain numpy, the
        paper's algorithm; supports ``refine`` ``"coordinate"`` or None).
      chunk_size: rows per sequential step of every pass over the rows (memory
        ``O(chunk*p*q)``). ``"auto"`` (default): the row plan of :mod:`jaxtree.plan`, 2,048
        on a CPU and up to about a million on a GPU (one large step instead of hundreds of
        small ones); an integer wins. The plan that ran is ``row_plan_``.
      coordinate_sweeps: passes over the leaves for ``refine="coordinate"``.
      refine_steps: L-BFGS iterations of the joint refinement after each insertion
        (``refine="optax"``): ``"auto"`` (default) 20, and 10 on fits of 32,768 rows and
        more, where each step is a pass over many rows and the later ones moved no test
        score measured (``jaxtree._fit.spec.refine_steps_for``; BENCHMARKS.md, "Ten
        refinement steps on large tables"); an integer ``>= 0`` is used as given
        (``paper()`` sets 20).
      precision: matmul precision of the scorer: ``"highest"`` (default; keeps float32
        out of TF32 on GPUs), ``"high"`` or ``"default"``.
      clip: policy for covariates outside the training range at predict time. True
        (default): clip each covariate to its training ``[min, max]`` (the basis functions are
        bounded only on the scaled ``[0, 1]``) and the prediction to the training targets'
        range widened by a tenth of its half-range on each side
        (:func:`jaxtree.model.predict`). False: evaluate the formula as is (cubics and
        Fourier terms can grow or oscillate). :func:`jaxtree.predict` takes the same ``clip``.
      verbose: print each iteration's loss and insertion to stderr when > 0.
      callback: ``callback(iteration, loss, info) -> bool`` after each iteration;
        returning True stops the search early.
      random_state: seed of the held-out split when ``validation_fraction`` is set (None
        means 0: fits are deterministic); the search itself uses no randomness.
      shapes: ``"auto"`` (default), 0 (none: the paper's model), an integer ``S`` or
        ``"additive"``.
        Shape terms are whole one-covariate functions ``f(x_j)`` and two-covariate functions
        ``f(x_i, x_l)`` (hats on knots, see :mod:`jaxtree.shapes`), chosen greedily by least
        squares and backfitted; the model is ``w0 + sum of shapes + T(x)``. ``"auto"``: on fits
        of at least 100 rows (``AUTO_SHAPES_MIN_ROWS``; engine ``"jax"``) the tree is searched
        first, then up to ``max(16, max_terms - 4)`` shape terms of its residual are added,
        as many as held-out rows support (``shape_path_``), at most ``max_terms`` with the
        tree's, and the tree's weights are refitted given them. On in-memory fits of 20 to
        1,999 rows (``SHAPES_FIRST_MAX_ROWS``) the other order, shape terms of ``y``
        first, is fitted too and kept where held-out rows prefer it (``shape_order_``);
        there, where the shape terms alone came within ``SHAPES_FIRST_GATE`` (3) times the
        tree first's held-out MSE, ``"additive"``'s fit, with its tree and without it
        (``k=0``: its main shapes and one leaf), the latter with every covariate's term
        (no backward elimination), and with every term a line (a ridge regression), is
        weighed against that fit by 5-fold cross-validation on the training rows
        (``additive_cv``; twenty-nine more fits) and the setting of the lowest mean squared
        error is kept (``shape_order_`` then ``"additive"``, ``"additive k=0"``,
        ``"additive k=0 all terms"`` or ``"additive k=0 lines"``; data of the tree's form,
        such as the paper's, stay above the gate and pay nothing). ``S``: ``S`` terms before the tree, then one backfitting round. ``"additive"``
        (rows in memory): every covariate's main shape first (16 hats), all penalised
        together and their smoothness chosen by GCV on the training rows, terms that GCV
        does not support dropped, then the tree on their residual
        (:mod:`jaxtree._fit.additive`: often the better model on small smooth tables, worse
        where the truth is a tree). Above 200,000 rows
        (``shapes.SEARCH_ROWS``) the terms are chosen on a subset and backfitted on all rows;
        streamed fits take the same steps in bounded memory. Every rule is in the docs'
        "Shape terms" (``docs/model.md``).
      shape_knots: ``(n1, n2)``: hats per one-covariate shape and per axis of a
        two-covariate shape, or ``"auto"`` (default): ``(3, 2)`` for ``shapes="auto"`` below
        2,000 rows (``FINE_KNOTS_MIN_ROWS``: a main shape is a line with one bend), ``(32,
        16)`` from 2,000 rows, ``(24, 12)`` for ``shapes=S`` and ``(16, 2)`` for
        ``"additive"``
        (:func:`jaxtree._fit.spec.knots_for` says why).
      beam_width: trees advanced together by ``search="beam"``, the best distinct children
        by candidate SSE (:func:`jaxtree.search.beam_fit`; 1 is the greedy search exactly).
      search: ``"auto"`` (default), ``"greedy"`` (the paper's algorithm, one insertion at a
        time), ``"beam"`` (``beam_width`` greedy trees advanced together, the best kept) or
        ``"backfit"`` (adds pair lookahead while the tree is small and replacement moves
        after every insertion; :func:`jaxtree.search.search_config`). ``"auto"`` is
        ``"backfit"`` on in-memory fits of fewer than 10,000 rows (``AUTO_SMALL_MAX_ROWS``;
        engine ``"jax"``, one device, ``p*q`` at most ``AUTO_PAIR_MAX_CANDIDATES``), where the
        search is cheap and the data few, else ``"greedy"``; the choice is ``search_``.
        Streaming supports ``"greedy"``.
      validation_fraction: a float in ``(0, 1)`` chooses the size from the data: that
        fraction of the rows is held out, the search runs to ``k`` on the rest, the smallest
        size within half a paired standard error of the best held-out MSE is chosen (``k_``;
        :func:`jaxtree._fit.select.choose_size`) and the tree is refitted on all rows;
        ``path_`` lists every size. None grows the tree to ``k``. ``"auto"`` (default): 0.2 on
        in-memory fits of 20 to 9,999 rows (engine ``"jax"``, one device), else None; the
        value used is ``validation_fraction_``. A beam's size is judged by its best member.
      cache_basis: ``"auto"`` (default), True or False: evaluate the basis once for all
        rows and keep it (``4*n*p*q`` bytes in float32) instead of in every pass. ``"auto"``
        keeps it where compiling costs more than searching (in-memory JAX fits with
        ``n*p*q`` below ``jaxtree.scoring.BUCKET_MIN_WORK``): the search's programs then hold
        no basis code and compile about a quarter faster.
      devices: None (one device), an int ``n`` (the first ``n`` devices) or ``'all'``:
        shard the rows over a ``'data'`` mesh (:mod:`jaxtree.sharding`; shape terms are
        searched on one device).
      target_transform: None (fit ``y``), ``"log"`` (fit ``log y``, for ``y > 0``: products
        and powers become sums; predictions are ``exp(f) * s`` with Duan's smearing factor
        ``s``, :mod:`jaxtree._target`), ``"square"`` (fit ``y²``, for ``y >= 0``: ``sqrt(x1² +
        x2²)`` becomes a sum; predictions are ``sqrt(max(f, 0))``) or ``"auto"`` (each
        applicable transform fitted on a deterministic 75/25 split, the lower held-out MSE in
        ``y``'s units kept, ties to the simpler, refitted on all rows): ``target_transform_``.
      y_bound: the search maps ``y`` (or ``log y``) into ``[-y_bound, y_bound]``, a number in
        ``(0, 1]``. With covariates scaled to ``[0, 1]`` a linear effect ``y = a*x + b`` needs
        the weight ``|w| = 2*y_bound``: the default 0.25 leaves the weight box ``|w| <= 1``
        room for it, so ``y = 50*x1 + 3`` prints as itself, where the paper's ``y_bound=1``
        (:meth:`paper`) builds the slope from other functions. A weight that ends on the box
        is counted in ``weights_at_bound_`` and the fit warns
        (:class:`jaxtree.WeightBoxWarning`) that a smaller ``y_bound`` gives room.
      prune_tol: None (default) keeps the searched tree. A number ``>= 0``: after the search,
        drop leaves while the cheapest removal lowers the training ``R²`` by at most
        ``prune_tol``, re-fitting the weights after each (:func:`jaxtree.simplify.prune`;
        on streamed and chunked fits :func:`jaxtree.stream.prune`, the same removals).
      missing: ``"indicator"`` (default): missing values (NaN, None, ``pd.NA``) in ``X`` are
        learned from: each numeric column with missing values in training gets a fill value
        (its training minimum) and a 0/1 covariate ``"<col> missing"``; a missing value at
        predict time in a column without one takes the fill. ``"error"``: refuse them
        (``ValueError``). See :mod:`jaxtree._inputs.encoding` for every rule.
      categorical_features: which columns are categories, each level becoming a 0/1
        covariate ``"<col>=<level>"`` (e.g. ``carrier=UA``): ``"from_dtype"`` (default: a
        DataFrame's ``category``, string and object columns), None (none: a string column is
        a ``TypeError``), or column indices, names or a boolean mask (as
        ``HistGradientBoostingRegressor``). Unseen levels at predict time count as
        ``"<col>=other"`` when the column has one, else as all zeros.
      max_categories: most covariates per categorical column, ``"<col>=other"`` included
        (default 16); the least frequent levels beyond it are grouped into ``other``.
      min_frequency: levels seen in fewer training rows are grouped into ``other`` (default 5).
      tol: the search stops early once no candidate lowers the training loss by this relative
        amount (default ``1e-6``; the move that did not is undone), or once the loss is at
        the float precision's floor (an exact fit, :data:`jaxtree.search.FLOOR_EPS`);
        ``status_`` then has ``Status.CONVERGED`` and ``k_`` is below ``k``. None or 0: grow
        the tree to ``k`` (``paper()`` does; :func:`jaxtree.search.stop_rule`).
      min_support: a candidate leaf ``w * phi_i(x_j)`` enters the tree only where its basis
        function is nonzero on at least this many training rows: a float in ``[0, 1)`` a
        share of them (default ``0.02``), an int a row count, 0 for no rule (as
        scikit-learn's ``min_samples_leaf``). It keeps out a hat at the edge of a covariate
        fitted to a row or two (:func:`jaxtree.scoring.with_support`); ``paper()`` sets 0.
      max_terms: ``shapes="auto"`` adds shape terms after the tree until the formula has this
        many terms (default 20; the tree's counted as in its sum of products): a larger
        value trades readability for accuracy (BENCHMARKS.md: the weather table's RMSE 8%
        lower at 40, with 32 terms).
      additive_cv: the folds of the cross-validated choice of ``shapes="additive"`` on small
        tables (``shapes``: past its gate, on in-memory fits of 20 to 1,999 rows): ``"auto"``
        (default) ``ADDITIVE_CV_FOLDS`` (5); an integer of at least 2 that many folds; 0 no
        choice: the default's own fit, without the choice's fits (where it runs, a warm fit
        about ten times shorter, at the accuracy it buys on small smooth tables:
        BENCHMARKS.md, "The additive fit chosen by cross-validation").
      screen_rows: ``"auto"`` (default), or an integer ``>= 0``: the tree search's insertion
        step scores every candidate on at most this many evenly spaced rows, then the
        ``jaxtree.scoring.SCREEN_CANDIDATES`` (32) best of them exactly on every row, and
        inserts the best of those (:func:`jaxtree.scoring.screened_score`: the weight is
        the exact fit on all rows; the choice is the full scorer's wherever that one is
        among the 32). 0 scores every candidate on every row (the paper's search, and
        ``paper()``'s setting). ``"auto"``: 8,192 rows on fits of 32,768 rows and more, 16,384 from 65,536
        (``jaxtree.scoring.screen_for``; engine ``"jax"``, one device; in memory or
        streamed block by block, where the sample is read into memory once), else 0:
        about 20% off a warm fit at 10⁵ rows, more on larger ones. ``TreeClassifier`` takes
        the same setting (its insertions are scored on the Newton working data).

    Safety rails (:mod:`jaxtree._fit.limits`): ``k`` is bounded by the rows, at most one
    operation per 5 rows (``k <= n // 5``; the paper's Experiment 1 fits ``k = 10`` on 50
    rows): a larger ``k`` warns (``DataSizeWarning``) and the fit uses the bound. Fewer than
    10 rows warn that the model interpolates them. A fit whose search would need more memory
    than the budget (half the device's memory, or ``JAXTREE_MEMORY_BUDGET``) is refused
    before compiling, with the estimate and the largest ``k`` that fits.

    Data larger than memory: pass ``X`` as a ``numpy.memmap`` (float dtype) or a
    :class:`jaxtree.stream.ChunkReader`; every pass then streams it chunk by chunk (engine
    ``'jax'``; :mod:`jaxtree.stream`). A large in-memory float array (``n * p >=
    CHUNKED_FIT_MIN_VALUES``) under the default search options is read the same way, with
    no copy of the whole array (the same model); ``predict`` evaluates blocks of rows padded
    to one compiled size (:func:`jaxtree._fit.pipeline.predict_block_rows`).

    Attributes:
      model_: (set by ``fit``, as every attribute below) the fitted :class:`jaxtree.model.TreeModel` pytree.
      history_: training MSE (in ``y``'s units) after the first leaf and each insertion.
      choices_: the insertion chosen at each iteration (a dict with the keys
        :data:`jaxtree.search.CHOICE_KEYS`, the same on both engines).
      status_: the search's :class:`jaxtree.search.Status` flags.
      k_: the number of operations of the fitted tree.
      search_: the search this fit ran with (``"auto"`` resolved by the data's size).
      validation_fraction_: the held-out fraction this fit ran with (``"auto"`` resolved).
      shape_path_: with ``shapes`` and ``validation_fraction``: one dict per number of shape
        terms of the selection run (``n_shapes``, ``train_mse``, ``val_mse``, ``terms``); else
        None.
      shape_order_: ``"tree first"`` or ``"shapes first"`` where the fit tried both
        orders (``shapes="auto"``, fewer than 2,000 rows, see ``shapes``), ``"additive"``,
        ``"additive k=0"``, ``"additive k=0 all terms"`` or ``"additive k=0 lines"`` where
        cross-validation then kept ``shapes="additive"``'s fit (with its tree, with ``k=0``,
        with ``k=0`` and every covariate's term, or with ``k=0`` and every term a line);
        else None.
      shape_order_scores_: then the held-out MSE of each order (a dict; ``"shapes first"``
        nan where its tree was not searched: no shape term accepted first, or the terms alone
        over ``SHAPES_FIRST_GATE`` times the tree first's), ``"shape terms alone"`` (the
        gate's number, where held-out rows accepted a shape term first) and, where the
        cross-validation ran, ``"cv default"``, ``"cv additive"`` and ``"cv additive
        k=0"`` (each setting's 5-fold MSE, ``y``'s units); else None.
      path_: with ``validation_fraction``: one dict per iteration of the selection run
        (``n_ops``, ``train_mse``, ``val_mse``, ``formula`` and ``model``, a
        :class:`jaxtree.model.TreeModel` to predict with at that size); else None.
      n_features_in_: number of covariates (the raw columns of ``X``, before encoding).
      feature_names_in_: their names when X had string column names.
      encoding_: the fitted :class:`jaxtree._inputs.encoding.EncodingSpec` (missing values and
        categories; the numeric columns that took two values, ``two_valued``, which formulas
        read as lines: ``1.5·am``).
      encoded_feature_names_: the names of the covariates the tree sees (the
        model's ``feature_names``: ``"carrier=UA"``, ``"year missing"``, ...), equal to the
        raw names when ``X`` is numeric without missing values.
      far_tails_: ``{covariate: (observed min, observed max)}`` for each covariate whose
        range stops short of a far tail (where its extreme 0.5% of rows span more than twice
        the rest; the model's range is ``model_.x_min`` to ``model_.x_min + 1 /
        model_.x_scale``, and a value beyond it is clipped to it, in the fit as in
        ``predict``: the fitted function is flat there; docs/decisions.md, "Scaling");
        empty when no range was cut, and for a loaded model or ``fit_batch``'s members.
      target_transform_: ``"identity"``, ``"log"`` or ``"square"``: the model's transform.
      target_transform_scores_: with ``target_transform="auto"``, the held-out MSE of each
        candidate transform (``inf`` for one that does not apply to ``y``); else None.
      pruned_: with ``prune_tol``, the removed leaves as ``(feature, basis, R² cost)``.
      row_plan_: the :class:`jaxtree.plan.RowPlan` the fit ran: platform, rows per step,
        sequential steps per pass, streamed block size, whether the rows were held on the
        device (``chunk_size``).
      refine_steps_: the L-BFGS steps of the joint refinement the fit ran (``refine_steps``
        resolved for its rows).

    Examples:
      >>> import jaxtree
      >>> X, y = jaxtree.datasets.paper_synthetic(n=300, p=4, seed=0)
      >>> est = jaxtree.TreeRegressor(k=3).fit(X, y)
      >>> est.predict(X[:2]).shape
      (2,)
    """

    def __init__(self, k: int = 10, *, basis=None, refine: Optional[str] = "optax",
                 engine: str = "jax", chunk_size="auto", coordinate_sweeps: int = 3,
                 refine_steps="auto", precision: str = "highest", clip: bool = True,
                 verbose: int = 0, callback: Optional[Callable] = None, random_state=None,
                 devices=None, cache_basis="auto",
                 validation_fraction="auto", search: str = "auto",
                 target_transform: Optional[str] = None, y_bound: float = DEFAULT_Y_BOUND,
                 prune_tol: Optional[float] = None, shapes="auto",
                 shape_knots="auto", beam_width: int = 4,
                 missing: str = "indicator", categorical_features="from_dtype",
                 max_categories: int = encoding_.DEFAULT_MAX_CATEGORIES,
                 min_frequency: int = encoding_.DEFAULT_MIN_FREQUENCY,
                 tol: Optional[float] = DEFAULT_TOL, min_support=DEFAULT_MIN_SUPPORT,
                 max_terms: int = AUTO_TERMS, additive_cv="auto", screen_rows="auto"):
        self.k = k
        self.basis = basis
        self.refine = refine
        self.engine = engine
        self.chunk_size = chunk_size
        self.coordinate_sweeps = coordinate_sweeps
        self.refine_steps = refine_steps
        self.precision = precision
        self.clip = clip
        self.verbose = verbose
        self.callback = callback
        self.random_state = random_state
        self.cache_basis = cache_basis
        self.devices = devices
        self.validation_fraction = validation_fraction
        self.search = search
        self.target_transform = target_transform
        self.y_bound = y_bound
        self.prune_tol = prune_tol
        self.shapes = shapes
        self.shape_knots = shape_knots
        self.beam_width = beam_width
        self.missing = missing
        self.categorical_features = categorical_features
        self.max_categories = max_categories
        self.min_frequency = min_frequency
        self.tol = tol
        self.min_support = min_support
        self.max_terms = max_terms
        self.additive_cv = additive_cv
        self.screen_rows = screen_rows

    @classmethod
    def for_laws(cls, k: int = 20, *, basis="default+physics", y_bound: float = 0.25,
                 target_transform: Optional[str] = "auto", search: str = "backfit",
                 validation_fraction: Optional[float] = 0.2,
                 prune_tol: Optional[float] = 1e-6, **kwargs) -> "TreeRegressor":
        """The "exact laws" preset: an estimator for learning a formula (docs/laws.md,
        "Exact laws"). Every setting is an ordinary keyword (``get_params`` shows them, so
        ``clone`` and saved models keep them) and each can be overridden: noisy data does not
        buy extra leaves, and leaves that explain almost nothing are pruned.

        Args:
          k: the most operations (an upper bound; the held-out rule picks the size).
          basis: the basis (default: the paper's with the physics families).
          y_bound: the search maps ``y`` (or ``log y``) into ``[-y_bound, y_bound]`` (0.25: a
            law's weights fit the box).
          target_transform: ``"auto"`` (``log y`` or ``y``, chosen on held-out rows), or as
            for the class.
          search: the search strategy (default ``"backfit"``).
          validation_fraction: share of rows held out to pick the size.
          prune_tol: prune leaves that cost less than this share of ``R²``.
          kwargs: any other :class:`TreeRegressor` parameter.

        Example: ``jaxtree.TreeRegressor.for_laws().fit(X, y).law()``.
        """
        return cls(k, basis=basis, y_bound=y_bound, target_transform=target_transform,
                   search=search, validation_fraction=validation_fraction,
                   prune_tol=prune_tol, **kwargs)

    @classmethod
    def paper(cls, k: int = 10, **kwargs) -> "TreeRegressor":
        """The paper's algorithm (Xu, Honorio and Wang): the greedy search grown to exactly
        ``k`` operations, no shape terms (``search="greedy"``, ``validation_fraction=None``,
        ``shapes=0``) on the paper's scaling ``Y = [-1, 1]`` (``y_bound=1``), with no early
        stop (``tol=None``; ``k`` is still bounded by the rows) and every candidate scored
        (``min_support=0``); the weights are still refined jointly (``refine="optax"``,
        ``refine_steps=20`` at every size; ``refine="coordinate"`` is the paper's coordinate
        descent). Every setting can be overridden. The reproduction scripts and the races
        against the numpy reference use it.
        """
        kwargs = {"search": "greedy", "validation_fraction": None, "shapes": 0,
                  "y_bound": 1.0, "tol": None, "min_support": 0, "screen_rows": 0,
                  "refine_steps": 20, **kwargs}
        return cls(k, **kwargs)

    def __sklearn_tags__(self):
        """scikit-learn's estimator tags (imported lazily: only scikit-learn calls this)."""
        from sklearn.utils import InputTags, RegressorTags, Tags, TargetTags

        return Tags(estimator_type="regressor", target_tags=TargetTags(required=True),
                    regressor_tags=RegressorTags(),
                    input_tags=InputTags(allow_nan=getattr(self, "missing", None) != "error"))

    def _check_params(self) -> Params:
        return check_params(self.get_params())

    def fit(self, X, y, sample_weight=None):
        """Fits the tree.

        Args:
          X: ``(n_samples, n_features)`` numbers (numpy, pandas, ...); n >= 2.
          y: ``(n_samples,)`` targets.
          sample_weight: optional ``(n_samples,)`` non-negative weights.

        Returns:
          self. If the fit fails or is interrupted (KeyboardInterrupt) the estimator is
          left as it was.

        Raises:
          ValueError / TypeError: for invalid data or hyperparameters, with the fix.
        """
        _compilation_cache.enable()
        result = pipeline.fit(X, y, sample_weight, self.get_params())
        return set_fitted(self, result)


def load(path, custom_functions=None) -> TreeRegressor:
    """Loads a model file written by :meth:`TreeRegressor.save` into a fitted estimator.

    Args:
      path: the JSON file.
      custom_functions: ``{name: fn}`` for custom basis functions (they are saved by name).

    Raises:
      ValueError: for a file of another version, a corrupted or foreign file.
    """
    d = model_.load_dict(path)
    m = model_.from_dict(d, custom_functions, path)
    est, hist = from_file(TreeRegressor, d, path, m)
    return set_fitted(est, loaded_result(d, path, m, hist))
