"""Where the seed figures come from.

Seed 000 (shell909090's "context" write-up, 2014-10-27/28) is the only seed with Python figures; seed 001 is
the same author's process-only draft and seed 003 measures processes and Go, not Python. Seed 000 timed
each Python construct with `timeit` over 100M iterations (10M for greenlet), 6 repeats, and divided the
mean time by the iteration count. Its `py_yield.py` and `py_greenlet.py` ran under `#!/usr/bin/python`
(Python 2.7 on Debian jessie), its `py_yield_from.py` under Python 3 (3.4 on jessie).
"""

from __future__ import annotations

from typing import Any

from ctxbench_kernels_py.spec import SeedReference

SEED_000_MACHINE = (
    "Intel Pentium G2030 @ 3.00GHz (2 cores, no HT), 8 GB, Debian jessie, Linux 3.16-2-amd64, 2014"
)


def seed_000(value: float, note: str, params: dict[str, Any] | None = None) -> SeedReference:
    """A figure of seed 000, in ns per op, at the parameter point `params`."""
    return SeedReference(
        seed="000", value=value, unit="ns/op", machine=SEED_000_MACHINE, params=params, note=note
    )
