import sys

from jaxtree.cli import main

sys.exit(main())
