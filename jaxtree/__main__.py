import sys

from jaxtree.cli import run

sys.exit(run())
