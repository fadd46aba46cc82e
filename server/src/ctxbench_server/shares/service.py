"""Shares: a comparison frozen under an unguessable slug (its view, exact result ids and answer)."""

from __future__ import annotations

import copy
import re
import secrets
import string
from collections.abc import Container, Iterable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.compare import service as compare_service
from ctxbench_server.compare.schemas import DEFAULT_SHARE_FACTS, ShareFact, ShareView
from ctxbench_server.contract import aliases
from ctxbench_server.errors import NotFound, ValidationFailed, field_error
from ctxbench_server.models import Share

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
SLUG_LENGTH = 16  # 62^16 ≈ 4.8e28
SLUG = re.compile(r"[0-9A-Za-z]{12,64}")
LOC = ("body", "view")


def new_slug() -> str:
    return "".join(secrets.choice(BASE62) for _ in range(SLUG_LENGTH))


def only_facts(answer: dict[str, Any], facts: Iterable[str]) -> dict[str, Any]:
    """The compare answer as a share keeps it: of each machine only the chosen facts (its hostname only
    when chosen), and only the differences between chosen facts ("vulnerabilities.x" goes with
    "vulnerabilities"). Nothing else of the answer holds a fact."""
    keep = set(facts)
    for m in answer["machines"]:
        m["facts"] = {k: v for k, v in (m.get("facts") or {}).items() if k in keep}
        if "hostname" not in keep:
            m["hostname"] = ""
    answer["facts_diff"] = [d for d in answer["facts_diff"] if d["fact"].split(".", 1)[0] in keep]
    return answer


async def create(
    session: AsyncSession, view: ShareView, online: Container[str], facts: list[ShareFact] | None = None
) -> Share:
    """Freezes the comparison `view` describes, carrying only `facts` of the machines (by default
    DEFAULT_SHARE_FACTS); the view records which, as `facts`."""
    q = compare_service.CompareQuery(
        machines=compare_service.split_list(view.machines),
        kernels=compare_service.split_list(view.kernels),
        baseline=view.baseline,
        runs=compare_service.split_list(view.runs),
        batch=view.batch,
        sides=view.sides,
    )
    try:
        answer = await compare_service.compare(session, q, online, LOC)
    except compare_service.UnknownMachine as e:  # in a body it is a bad field, not a missing page
        raise ValidationFailed(
            [field_error([*LOC, "machines", e.index], f"unknown machine {e.machine_id!r}", "unknown_machine")]
        ) from e
    stored_view: dict[str, Any] = view.model_dump(mode="json")
    kernels = stored_view.get("kernels")  # stored under new ids, as every kernel id (kernels/aliases.py)
    if isinstance(kernels, list):
        stored_view["kernels"] = aliases.canonical_list(kernels)
    elif isinstance(kernels, str):
        stored_view["kernels"] = ",".join(aliases.canonical_list(compare_service.split_list(kernels)))
    stored_view["baseline"] = answer["baseline"]
    chosen = list(dict.fromkeys(DEFAULT_SHARE_FACTS if facts is None else facts))
    stored_view["facts"] = chosen
    share = Share(
        slug=new_slug(), view=stored_view, result_ids=answer["result_ids"], compare=only_facts(answer, chosen)
    )
    session.add(share)
    await session.commit()
    return share


async def get(session: AsyncSession, slug: str) -> Share:
    share = await session.get(Share, slug) if SLUG.fullmatch(slug) else None
    if share is None:
        raise NotFound("share not found")
    return share


def shown(share: Share) -> dict[str, Any] | None:
    """The frozen answer as GET /shares/{slug} shows it. A share made before sharers chose facts (its
    view has no `facts`) stored every fact: it shows the default ones only."""
    if share.compare is None or "facts" in share.view:
        return share.compare
    return only_facts(copy.deepcopy(share.compare), DEFAULT_SHARE_FACTS)
