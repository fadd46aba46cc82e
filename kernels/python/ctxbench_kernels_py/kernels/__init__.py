"""The Python kernels (families call and coroutine), one module per kind of switch, in the order `--list`
prints them."""

from __future__ import annotations

from ctxbench_kernels_py.kernels import baseline, coroutines, generators
from ctxbench_kernels_py.spec import Kernel

KERNELS: tuple[Kernel, ...] = (*baseline.KERNELS, *generators.KERNELS, *coroutines.KERNELS)
BY_ID: dict[str, Kernel] = {k.id: k for k in KERNELS}
