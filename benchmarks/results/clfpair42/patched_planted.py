import sys, os, warnings
sys.path.insert(0, sys.argv[1]); mode = sys.argv[2]
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
import numpy as np
warnings.simplefilter("ignore")
import jaxtree
from sklearn.metrics import roc_auc_score
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _patch
_patch.apply(mode, classification_only=True)
for name, f in [("sincos", lambda X: np.sin(3*np.pi*X[:,0])*np.cos(2*np.pi*X[:,1])),
                ("xor", lambda X: (X[:,0]-0.5)*(X[:,1]-0.5)),
                ("prod", lambda X: X[:,0]*X[:,1] - 0.25)]:
    aucs = []
    for seed in range(3):
        rng = np.random.default_rng(seed); X = rng.uniform(size=(1500, 5))
        z = f(X); z = z / z.std()
        y = (z + 0.3*rng.normal(size=len(z)) > 0).astype(int)
        est = jaxtree.TreeClassifier().fit(X[:1000], y[:1000])
        aucs.append(roc_auc_score(y[1000:], np.asarray(est.predict_proba(X[1000:]))[:, 1]))
    print(mode, name, round(float(np.mean(aucs)), 4), [round(a, 4) for a in aucs], flush=True)
