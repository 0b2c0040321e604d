# usage: ab.sh ROUNDS ; alternates old (HEAD worktree) and new (main tree), fresh cache each
# As run in the thirty-sixth session: /tmp/w36/old a git worktree of 9c3cfde, /work/main the prototype.
for r in $(seq $1); do
 for side in old new; do
  dir=/tmp/w36/old; [ $side = new ] && dir=/work/main
  C=$(mktemp -d /tmp/w36/cacheXXXX)
  out=$(cd $dir && XDG_CACHE_HOME=$C /work/venv/bin/python -c "
import time,sys
sys.path.insert(0,'.')
t0=time.perf_counter()
import jaxtree
from jaxtree import _executables as E
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(n=1000, p=10, seed=0)
t1=time.perf_counter()
est = jaxtree.TreeRegressor(k=10).fit(X, y)
t2=time.perf_counter()
print('fit %.2f ahead_used %s pred %.6f' % (t2-t1, getattr(E,'ahead_used','-'), est.predict(X[:5]).sum()))
" 2>&1 | tail -1)
  out2=$(cd $dir && XDG_CACHE_HOME=$C /work/venv/bin/python -c "
import time,sys
sys.path.insert(0,'.')
import jaxtree
from jaxtree.datasets import paper_synthetic
X, y = paper_synthetic(n=1000, p=10, seed=0)
t1=time.perf_counter()
est = jaxtree.TreeRegressor(k=10).fit(X, y)
print('second %.3f' % (time.perf_counter()-t1))
" 2>&1 | tail -1)
  echo "$r $side $out $out2"
  rm -rf $C
 done
done
