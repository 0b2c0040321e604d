"""The count form's Grams (host_shapes._Blocks.grams) of an old checkout against this one's,
bitwise, on rows with NaN and zero weights, with small groups of blocks too:

    python benchmarks/results/products67/bitwise.py OLD_CHECKOUT
"""
import importlib.util, sys, numpy as np
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
old = load(sys.argv[1] + "/jaxtree/_fit/host_shapes.py", "old_hs")
new = load(__file__.rsplit("/benchmarks/", 1)[0] + "/jaxtree/_fit/host_shapes.py", "new_hs")
rng = np.random.default_rng(0)
for n2, ge in ((2, 1 << 22), (3, 1000), (4, 5000), (16, 1 << 22)):
    new.GRAM_ENTRIES = ge
    x = rng.random((7, 333)); x[3, ::4] = np.nan; x[5] = np.nan
    w = rng.random(333); w[-5:] = 0
    f, s = np.array([0, 1, 2, 3, 4, 5]), np.array([1, 2, 0, 4, 6, 6])
    for mod_blocks in ((lambda m: m._Blocks(*m._sparse_pair_hats(m._sparse_hats(x, n2), f, s, n2), n2 * n2)),
                       (lambda m: m._Blocks(*m._sparse_hats(x, n2), n2))):
        a, b = mod_blocks(old).grams(w), mod_blocks(new).grams(w)
        assert np.array_equal(a, b, equal_nan=True), (n2, ge)
print("bitwise equal")
