"""The kernel CLI contract (kernels/contract/kernel-cli.schema.json) as the server reads it: a copy that
`make gen` puts in the package (checked by `make gen-check`), so the server, and through GET /limits the
explorer, take the kernels' own defaults from the contract instead of keeping copies that drift."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

_FILE = resources.files("ctxbench_server.gen") / "kernel-cli.schema.json"

SCHEMA: dict[str, Any] = json.loads(_FILE.read_text(encoding="utf-8"))
_OPTIONS: dict[str, Any] = SCHEMA["$defs"]["options"]["properties"]

# What a kernel uses when a run sends no value (a profile whose min_time_s is None).
KERNEL_DEFAULT_MIN_TIME_S: float = _OPTIONS["min_time_s"]["default"]
KERNEL_DEFAULT_REPETITIONS: int = _OPTIONS["repetitions"]["default"]
