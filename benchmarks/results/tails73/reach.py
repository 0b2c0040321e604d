import os, sys
sys.argv = [sys.argv[0]] + sys.argv[1:]
sys.path.insert(0, os.getcwd()); sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
import jaxtree._scaling as S
S.TAIL_REACH = float(os.environ["REACH"])
import bench_accuracy
bench_accuracy.main()
