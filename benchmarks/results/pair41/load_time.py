import sys, os, time, warnings
sys.path.insert(0, sys.argv[1])
os.environ["JAXTREE_COMPILATION_CACHE"] = "0"
warnings.simplefilter("ignore")
import jaxtree
from jaxtree.debug import count_compilations
t = time.perf_counter()
with count_compilations() as c:
    m = jaxtree.load(sys.argv[2])
print(sys.argv[1], sys.argv[2].split("/")[-1], "load", round(time.perf_counter() - t, 3), "compiles", c.compiles)
