"""Progress of a fit: the tqdm bar and the user's callback, one :class:`Reporter` per fit,
passed to the stages as a value (the iterations numbered across the shape and tree
stages)."""

from __future__ import annotations

import contextlib
import sys

import tqdm

from jaxtree import program as prog
from jaxtree import search


class ProgressBar:
    """A tqdm bar over the ``k+1`` iterations of a fit, shown when ``verbose > 0``.

    Each update shows the training loss (in ``y``'s units) and, after a bar, the chosen
    insertion (:meth:`describe`): ``mse=0.8482 | + 0.158·sin(πf10) at slot 0``. The bar
    keeps the loss from reading as equal to the term (``mse=0.8482 + 0.158·…`` did), and a
    negative weight folds into the sign (``- 0.0021·x2``, not ``+ -0.0021·x2``);
    ``verbose > 1`` also writes one line per iteration. Until the first iteration ends the
    bar says "compiling" (the first step's time includes its compilation). The CLI uses this
    bar too.

    A bar always ends full: a phase that runs fewer iterations than its total (a size chosen
    on held-out rows, a pair move filling the tree, the ``tol`` stop, the callback) sets its
    total to the iterations that ran when the next phase starts or the bar closes, so the
    last line reads ``n/n`` (issue 28: bars stopped at 11/27 and 1/11).
    """

    def __init__(self, k: int, verbose, names=None, basis=None, loss_name: str = "mse"):
        self.total, self.verbose, self.names, self.basis = k + 1, verbose, names, basis
        self.loss_name = loss_name
        self.bar = (tqdm.tqdm(total=k + 1, desc="jaxtree (compiling)", unit="it", file=sys.stderr,
                              leave=True, dynamic_ncols=True) if verbose else None)

    def describe(self, it, info) -> str:
        """An iteration's choice: ``'leaf 0.31·sin(3πage)'``, ``'+ 0.2·x2² at slot 2'``,
        ``'- 0.0021·x2 at slot 3'`` (a negative weight added), ``'* (-0.5·x1) at slot 1'``
        (a product keeps the sign with its term), ``'shape f(age)'``."""
        try:
            j, i, op = int(info["feature"]), int(info["basis"]), int(info["op"])
        except (KeyError, TypeError, ValueError):
            return ""
        names = self.names or tuple(f"x{m + 1}" for m in range(max(j, int(info.get("feature2", -1))) + 1))
        if info.get("move") == search.MOVE_SHAPE:
            j2 = int(info["feature2"])
            return f"shape f({names[j]})" if j2 < 0 else f"shape f({names[j]}, {names[j2]})"
        if self.basis is None or not (0 <= j < len(names) and 0 <= i < self.basis.q):
            return "no candidate"
        term = self.basis.render(i, str(names[j]))
        symbol = prog.OP_SYMBOLS.get(op, "?")
        if "weight" in info:
            w = float(info["weight"])
            if it == 0 or op == prog.LEAF:
                term = f"{w:.3g}·{term}"
            elif op == prog.ADD:  # + -0.0021·x reads as - 0.0021·x
                term, symbol = f"{abs(w):.3g}·{term}", ("-" if w < 0 else "+")
            else:
                term = f"{w:.3g}·{term}" if w >= 0 else f"({w:.3g}·{term})"
        if it == 0 or op == prog.LEAF:
            return f"leaf {term}"
        return f"{symbol} {term} at slot {int(info['slot'])}"

    def update(self, it, loss, info) -> None:
        if self.bar is None:
            return
        if self.bar.desc == "jaxtree (compiling)":
            self.bar.set_description_str("jaxtree", refresh=False)
        move = self.describe(it, info)
        text = f"{self.loss_name}={loss:.4g}" + (f" | {move}" if move else "")
        self.bar.set_postfix_str(text, refresh=False)
        self.bar.update(1)
        if self.verbose > 1:
            self.bar.write(f"[jaxtree] iteration {it:3d}  {text}", file=sys.stderr)

    def reset(self, k: int, what: str) -> None:
        """Starts a second phase of the fit (e.g. the refit after choosing the size)."""
        self.phase(k + 1, what)

    def phase(self, total: int, what: str, done: int = 0) -> None:
        """Starts a phase of ``total`` iterations named ``what``, ``done`` of them already
        counted (a later stage's iterations after an earlier one's); the current phase ends
        full (:meth:`finish`)."""
        self.finish()
        self.total = max(int(total), int(done))
        if self.bar is not None:
            self.bar.set_description_str(f"jaxtree {what}", refresh=False)
            self.bar.reset(total=self.total)
            if done:
                self.bar.update(int(done))

    def tick(self) -> None:
        """Counts one iteration of a phase whose records are not the model's (a held-out
        selection run of shape terms): no loss or insertion is shown."""
        if self.bar is not None:
            self.bar.update(1)

    def finish(self) -> None:
        """Ends the current phase full: its total becomes the iterations that ran, and the
        bar is drawn so (tqdm redraws at most every 0.1 s: a phase faster than that, the
        refit before the shape stage, was left on the screen at ``0/3``)."""
        if self.bar is not None:
            self.bar.total = self.bar.n
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.finish()
            self.bar.close()
            self.bar = None


class Reporter:
    """The per-iteration hook of one fit: the progress bar, then the user's ``callback``
    (a True return stops the search). Calling it is what every driver's ``callback`` does;
    :meth:`after` numbers a later stage's iterations after an earlier one's."""

    def __init__(self, bound: int, verbose, callback, names=None, basis=None,
                 loss_name: str = "mse"):
        self.bar = ProgressBar(bound, verbose, names, basis, loss_name)
        self.callback, self.names, self.offset, self.tag = callback, names, 0, {}
        self.label = ""  # the phase names' suffix within :meth:`tagged`
        self.asked_stop = False  # whether the callback has returned True (asked to stop)

    def __call__(self, it, loss, info) -> bool:
        it = it + self.offset
        self.bar.update(it, loss, info)
        if self.callback is None:
            return False
        stop = bool(self.callback(it, loss, dict(info, **self.tag) if self.tag else info))
        self.asked_stop = self.asked_stop or stop
        return stop

    def reset(self, k: int, what: str) -> None:
        self.bar.reset(k, what)

    def phase(self, total: int, what: str, done: int = 0) -> None:
        """:meth:`ProgressBar.phase` (named for the tree of :meth:`tagged`)."""
        self.bar.phase(total, f"{what} ({self.label})" if self.label else what, done)

    def tick(self, it=None, loss=None, info=None) -> bool:
        """A driver callback that only counts an iteration on the bar (never stops)."""
        self.bar.tick()
        return False

    @contextlib.contextmanager
    def after(self, iterations: int):
        """Within the block, iteration ``i`` is reported as ``iterations + i``."""
        self.offset = iterations
        try:
            yield self
        finally:
            self.offset = 0

    @contextlib.contextmanager
    def tagged(self, label: str, **tag):
        """Within the block, the callback's ``info`` also holds ``tag`` (one class's stage of
        a one-versus-rest fit: ``class`` and ``class_index``, as its search reports them)
        and the bar's phases say ``label`` (``"jaxtree shapes (class 2)"``)."""
        self.tag, self.label = tag, label
        try:
            yield self
        finally:
            self.tag, self.label = {}, ""

    def close(self) -> None:
        self.bar.close()


@contextlib.contextmanager
def reporting(spec, names, loss_name: str = "mse"):
    """The :class:`Reporter` of one fit of ``spec`` (closed even when the fit fails)."""
    rep = Reporter(spec.progress_bound, spec.verbose, spec.callback, names, spec.basis, loss_name)
    try:
        yield rep
    finally:
        rep.close()
