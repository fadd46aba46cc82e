"""Entry point of ctxbench-kernels-py inside the agent bundle (scripts/dist.sh zips it as __main__.py).

The bundle's kernels are run by the host's python3, whatever its site-packages hold: pyperf comes from
the bundle's python/ directory (next to kernels/). A Python older than 3.9 exits 3 and says so, as a
missing module does (greenlet is not carried: a compiled extension, per Python version;
coroutine.py_greenlet exits 3 without it).
"""

import os
import sys

# The host's python3 runs this, not ours: an old one must get this far (no newer syntax above).
if sys.version_info < (3, 9):  # noqa: UP036
    v = sys.version_info
    sys.stderr.write(f"ctxbench-kernels-py: needs python3 >= 3.9, {sys.executable} is {v[0]}.{v[1]}\n")
    sys.exit(3)

_bundle = os.path.dirname(os.path.dirname(os.path.realpath(sys.argv[0])))
sys.path.insert(1, os.path.join(_bundle, "python"))

from ctxbench_kernels_py.cli import run_main  # noqa: E402

sys.exit(run_main(sys.argv[1:]))
