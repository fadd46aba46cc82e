"""Which host facts a share shows anonymous viewers (issue 26): the sharer chooses (POST /shares `facts`),
by default what a comparison needs, never the hostname, kernel command line or vulnerabilities unless
chosen. Real server, real database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from ctxbench_server.compare.schemas import DEFAULT_SHARE_FACTS
from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import Share

from .compare_helpers import Seeder, spread

SECRET_FACTS = {
    "kernel_cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/mapper/secret-root ro",
    "vulnerabilities": {"spectre_v2": "Vulnerable"},
}
VIEW = {"machines": ["db-prod-7", "db-prod-8"], "kernels": ["ctxsw.*"]}


@pytest.fixture
async def seed(server: CtxbenchServer) -> AsyncIterator[Seeder]:
    s = Seeder(server.sessionmaker)
    await s.kernels()
    for mid, value in (("db-prod-7", 100), ("db-prod-8", 150)):
        # Each differs in its secrets too, so the facts diff would name them.
        secrets = {
            "kernel_cmdline": f"{SECRET_FACTS['kernel_cmdline']} {mid}",
            "vulnerabilities": {"spectre_v2": f"Vulnerable {mid}"},
        }
        await s.machine(mid, kernel_release=f"6.1.{value}", **secrets)
        await s.result(await s.run(mid), mid, "ctxsw.pipe", spread(value))
    yield s


async def shared(http: httpx.AsyncClient, anon: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    r = await http.post("/api/v1/shares", json=body)
    assert r.status_code == 201, r.text
    got = await anon.get(f"/api/v1/shares/{r.json()['slug']}")
    assert got.status_code == 200, got.text
    out: dict[str, Any] = got.json()
    return out


def facts_named(share: dict[str, Any]) -> set[str]:
    """Every fact the share lets a viewer read, from the machines and the facts diff."""
    named = {k for m in share["compare"]["machines"] for k in m["facts"]}
    named |= {d["fact"].split(".", 1)[0] for d in share["compare"]["facts_diff"]}
    if any(m["hostname"] for m in share["compare"]["machines"]):
        named.add("hostname")
    return named


async def test_a_share_carries_what_a_comparison_needs_by_default(
    seed: Seeder, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    share = await shared(http, anon, {"view": VIEW})
    assert share["view"]["facts"] == list(DEFAULT_SHARE_FACTS)
    assert facts_named(share) <= set(DEFAULT_SHARE_FACTS)
    machine = share["compare"]["machines"][0]
    assert machine["facts"]["cpu_model"] == "Test CPU" and machine["facts"]["memory_bytes"] == 2**34
    assert machine["hostname"] == "" and machine["name"] == "db-prod-7"
    assert [d["fact"] for d in share["compare"]["facts_diff"]] == ["kernel_release"]
    text = str(share)
    assert "secret-root" not in text and "Vulnerable" not in text and "Debian" not in text
    # The compare itself (a signed-in reader) still shows every fact.
    live = (await http.get("/api/v1/compare", params={"machines": "db-prod-7,db-prod-8"})).json()
    assert "kernel_cmdline" in live["machines"][0]["facts"]


async def test_the_sharer_chooses_the_facts(
    seed: Seeder, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    share = await shared(http, anon, {"view": VIEW, "facts": ["cpu_model", "vulnerabilities", "hostname"]})
    assert share["view"]["facts"] == ["cpu_model", "vulnerabilities", "hostname"]
    assert facts_named(share) == {"cpu_model", "vulnerabilities", "hostname"}
    assert share["compare"]["machines"][0]["hostname"] == "db-prod-7"
    assert {d["fact"] for d in share["compare"]["facts_diff"]} == {"vulnerabilities.spectre_v2"}

    none = await shared(http, anon, {"view": VIEW, "facts": []})
    assert facts_named(none) == set() and none["compare"]["facts_diff"] == []


@pytest.mark.parametrize(
    ("facts", "loc"),
    [(["cpu_model", "password"], ["body", "facts", 1]), ("cpu_model", ["body", "facts"])],
)
async def test_an_unknown_fact_is_refused_by_name(
    seed: Seeder, http: httpx.AsyncClient, facts: Any, loc: list[Any]
) -> None:
    r = await http.post("/api/v1/shares", json={"view": VIEW, "facts": facts})
    assert r.status_code == 422, r.text
    assert [e["loc"] for e in r.json()["detail"]] == [loc]


async def test_a_share_made_before_shows_the_default_facts(
    seed: Seeder, server: CtxbenchServer, http: httpx.AsyncClient, anon: httpx.AsyncClient
) -> None:
    """Shares stored before sharers chose kept every fact: they show the default ones now."""
    live = (await http.get("/api/v1/compare", params={"machines": "db-prod-7,db-prod-8"})).json()
    async with server.sessionmaker() as s:
        s.add(
            Share(
                slug="OldShare00000000", view={**VIEW, "baseline": "db-prod-7"}, result_ids=[], compare=live
            )
        )
        await s.commit()
    old = (await anon.get("/api/v1/shares/OldShare00000000")).json()
    assert "facts" not in old["view"] and facts_named(old) <= set(DEFAULT_SHARE_FACTS)
    assert "secret-root" not in str(old)
