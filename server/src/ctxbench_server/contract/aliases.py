"""Old kernel ids as aliases of their new ones (kernels/contract/README.md, "Renaming kernels").

The map is the contract's `legacy-ids.json`, copied into the package by `make gen` (checked by
`make gen-check`). Every door that takes a kernel id from outside (REST bodies and queries, a Hello's
catalog, a ResultReport) reads it through `canonical`; what is stored is the new id only (migration
0008 rewrote what older servers stored), so compare and history select one id with their indexes.
The one place an old id goes back out is dispatch to an agent whose catalog still lists it
(`listed_as` in that machine's spec of the kernel)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources

_FILE = resources.files("ctxbench_server.gen") / "legacy-ids.json"

# old id -> new id
RENAMES: dict[str, str] = dict(json.loads(_FILE.read_text(encoding="utf-8"))["renames"])
# new id -> its old ids, sorted
ALIASES: dict[str, list[str]] = {}
for _old, _new in sorted(RENAMES.items()):
    ALIASES.setdefault(_new, []).append(_old)

# The key a machine's spec of a kernel keeps the id its agent listed it under, when that is an alias.
LISTED_AS = "listed_as"


def canonical(kernel_id: str) -> str:
    """The kernel's current id: the new id of an alias, any other id unchanged."""
    return RENAMES.get(kernel_id, kernel_id)


def aliases_of(kernel_id: str) -> list[str]:
    return ALIASES.get(kernel_id, [])


def family_of(kernel_id: str) -> str:
    """A kernel id's family: its first segment (the naming rule)."""
    return kernel_id.partition(".")[0]


def matches_prefix(kernel_id: str, prefix: str) -> bool:
    """Whether a `kernels=<prefix>*` filter takes the kernel: its id or one of its old ids starts with
    the prefix (`sched.` takes sched.gosched, and so does the old `go.` of go.gosched)."""
    return kernel_id.startswith(prefix) or any(a.startswith(prefix) for a in aliases_of(kernel_id))


def canonical_list(kernel_ids: Iterable[str]) -> list[str]:
    """Each id canonical, repeats dropped, in order."""
    return list(dict.fromkeys(canonical(k) for k in kernel_ids))


def as_listed(kernel_id: str, spec: dict[str, object] | None) -> str:
    """The id to send an agent for a kernel: the one its catalog lists (an old agent's alias)."""
    listed = (spec or {}).get(LISTED_AS)
    return listed if isinstance(listed, str) and listed else kernel_id
