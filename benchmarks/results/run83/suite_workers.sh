cd /tmp/wt1
for n in 3 2; do
  D=$(mktemp -d)
  /usr/bin/time -f "n=$n wall %e user %U sys %S cpu %P" env PYTHONPATH=/tmp/wt1 XDG_CACHE_HOME=$D /work/venv/bin/python -m pytest -q -p no:cacheprovider -n $n > /tmp/p83/pair_n$n.log 2>&1
  tail -1 /tmp/p83/pair_n$n.log >> /tmp/p83/pair.txt
done
echo done >> /tmp/p83/pair.txt
