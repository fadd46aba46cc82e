"""Webhooks: signed POSTs to a real receiver on a loopback socket, retried after a 500 with backoff,
Slack's format, a refusal not retried, attempts capped, one sender per attempt whatever the number of
servers; and the REST budgets and their 422s."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from ctxbench_server.main import CtxbenchServer
from ctxbench_server.models import WebhookDelivery
from ctxbench_server.models.base import utcnow
from ctxbench_server.webhooks import service, signing
from ctxbench_server.webhooks.schemas import WebhookCreate
from ctxbench_server.webhooks.sender import Sender, backoff

from .compare_helpers import Seeder
from .conftest import eventually
from .schedules_helpers import Db, migrated
from .test_alerts import GETPPID, NOW, seed_series
from .webhook_receiver import Receiver, receiver

FAST = {"webhook_backoff_s": 0.2, "webhook_tick_s": 0.1, "alert_settle_s": 0.05}


def test_signature_round_trip() -> None:
    body = b'{"event":"alert.opened"}'
    sig = signing.sign("s3cret-s3cret-s3cret", 1_700_000_000, body)
    assert sig.startswith("sha256=") and len(sig) == 7 + 64
    assert signing.verify("s3cret-s3cret-s3cret", "1700000000", body, sig, now=1_700_000_100)
    assert not signing.verify("s3cret-s3cret-s3cret", "1700000000", body + b" ", sig, now=1_700_000_100)
    assert not signing.verify("another-secret-xx", "1700000000", body, sig, now=1_700_000_100)
    assert not signing.verify(
        "s3cret-s3cret-s3cret", "1700000001", body, sig, now=1_700_000_100
    )  # the time is signed
    assert not signing.verify("s3cret-s3cret-s3cret", "1700000000", body, sig, now=1_700_001_000)  # a replay


def test_backoff_doubles_up_to_its_cap(settings: Any) -> None:
    assert [backoff(settings, n) for n in (1, 2, 3)] == [10.0, 20.0, 40.0]
    assert backoff(settings, 30) == settings.webhook_backoff_cap_s


async def create(http: httpx.AsyncClient, url: str, **body: Any) -> dict[str, Any]:
    r = await http.post("/api/v1/webhooks", json={"name": "ops", "url": url, **body})
    assert r.status_code == 201, r.text
    return dict(r.json())


async def deliveries(http: httpx.AsyncClient, hook_id: str) -> list[dict[str, Any]]:
    r = await http.get(f"/api/v1/webhooks/{hook_id}/deliveries")
    assert r.status_code == 200, r.text
    return list(r.json())


async def open_alert(server: CtxbenchServer) -> str:
    seed = Seeder(server.sessionmaker)
    await seed.kernels()
    await seed_series(seed, "box", [100.0] * 6 + [130.0] * 6, 6)
    [a] = await server.alerts.check([("box", *GETPPID)], NOW)
    return a.id


def verified(rx: Receiver, secret: str) -> list[dict[str, Any]]:
    """Every POST the receiver got, each checked as a receiver would; their documents."""
    out = []
    for got in rx.got:
        h = {k.lower(): v for k, v in got.headers.items()}
        assert signing.verify(
            secret, h["x-ctxbench-timestamp"], got.body, h["x-ctxbench-signature"], time.time()
        )
        assert h["content-type"] == "application/json" and h["x-ctxbench-delivery"]
        out.append(json.loads(got.body))
    return out


@pytest.mark.parametrize("settings_overrides", [FAST])
async def test_an_alert_is_delivered_signed_and_retried_after_a_500(
    http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    with receiver([500]) as rx:
        hook = await create(http, rx.url)
        assert hook["secret"].startswith("whsec_") and hook["format"] == "json"
        assert hook["events"] == ["alert.opened"] and hook["pending"] == 0
        assert "secret" not in (await http.get(f"/api/v1/webhooks/{hook['id']}")).json()
        alert_id = await open_alert(server)
        server.webhook_sender.wake()

        async def delivered() -> bool:
            return [d["status"] for d in await deliveries(http, hook["id"])] == ["delivered"]

        await eventually(delivered, within=10)
        assert len(rx.got) == 2 and rx.got[0].path == "/hook"
        first, second = verified(rx, hook["secret"])
        assert first == second  # the same document, signed again with a new timestamp
        assert first["event"] == "alert.opened" and first["data"]["id"] == alert_id
        assert first["data"]["facts_changed"][0]["fact"] == "governor" and "+30" in first["summary"]
        ids = {g.headers["X-Ctxbench-Delivery"] for g in rx.got}
        [d] = await deliveries(http, hook["id"])
        assert ids == {d["id"]} and d["attempts"] == 2 and d["last_status_code"] == 200
        assert [(a["status_code"], a["error"]) for a in d["log"]] == [(500, "HTTP 500"), (200, None)]
        assert d["subject_id"] == alert_id and d["delivered_at"]
        seen = (await http.get("/api/v1/webhooks")).json()
        assert seen[0]["last_delivery"]["id"] == d["id"] and "secret" not in seen[0]
        # a re-check opens nothing, so nothing more is sent
        assert await server.alerts.check([("box", *GETPPID)], NOW) == []
        await asyncio.sleep(0.3)
        assert len(rx.got) == 2


FLAT = [100.0 * (1 + 0.004 * (i % 3)) for i in range(12)]
STEP = FLAT[:6] + [130.0] * 6


@pytest.mark.parametrize("settings_overrides", [FAST])
async def test_a_fleet_change_is_delivered_once_signed_and_retried(
    http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    """Hosts a and b step with the same governor change, d does not: the check that opens their alerts
    queues the fleet change (fleet_change.opened) to the webhook that asked for it, retried after a
    500; c stepping later opens its alert but sends the change (same id) no more. A webhook created
    with the default events gets the alerts only."""
    seed = Seeder(server.sessionmaker)
    await seed.kernels()
    for mid, centers in (("a", STEP), ("b", STEP), ("d", FLAT)):
        await seed_series(seed, mid, centers, 6 if centers is STEP else None)
    with receiver([500]) as rx, receiver() as alerts_rx:
        hook = await create(http, rx.url, events=["fleet_change.opened"])
        plain = await create(http, alerts_rx.url, name="alerts")
        assert hook["events"] == ["fleet_change.opened"] and plain["events"] == ["alert.opened"]
        assert len(await server.alerts.check([(m, *GETPPID) for m in "abd"], NOW)) == 2
        server.webhook_sender.wake()

        async def delivered() -> bool:
            return [d["status"] for d in await deliveries(http, hook["id"])] == ["delivered"]

        await eventually(delivered, within=10)
        first, second = verified(rx, hook["secret"])  # the 500, then the retry
        assert first == second and first["event"] == "fleet_change.opened"
        r = await http.get("/api/v1/fleet-changes", params={"since": (NOW - timedelta(days=3)).isoformat()})
        [change] = r.json()["fleet_changes"]
        assert first["data"] == change and first["summary"] == change["summary"]
        assert [h["machine_name"] for h in first["data"]["hosts"]] == ["a", "b"]
        assert first["summary"].endswith(
            "both went from governor powersave to performance; the other one did not"
        )
        [d] = await deliveries(http, hook["id"])
        assert d["subject_id"] == change["id"] and d["attempts"] == 2

        await seed_series(seed, "c", STEP, 6)  # joins the change: its first step, so its id, stays
        assert len(await server.alerts.check([("c", *GETPPID)], NOW)) == 1
        r = await http.get("/api/v1/fleet-changes", params={"since": (NOW - timedelta(days=3)).isoformat()})
        [change] = r.json()["fleet_changes"]
        assert change["id"] == d["subject_id"] and len(change["hosts"]) == 3
        server.webhook_sender.wake()

        async def alerts_sent() -> bool:
            got = await deliveries(http, plain["id"])
            return len(got) == 3 and all(x["status"] == "delivered" for x in got)

        await eventually(alerts_sent, within=10)
        assert {x["event"] for x in verified(alerts_rx, plain["secret"])} == {"alert.opened"}
        assert len(await deliveries(http, hook["id"])) == 1 and len(rx.got) == 2


@pytest.mark.parametrize("settings_overrides", [{**FAST, "webhook_max_attempts": 2}])
async def test_slack_format_refusals_and_the_attempt_cap(
    http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    with receiver([410]) as gone, receiver([500, 500]) as down, receiver() as slack:
        h_gone = await create(http, gone.url, name="gone")
        h_down = await create(http, down.url, name="down")
        h_slack = await create(http, slack.url, name="slack", format="slack")
        h_off = await create(http, slack.url, name="off", enabled=False)
        await open_alert(server)
        server.webhook_sender.wake()

        async def settled() -> bool:
            got = [await deliveries(http, h["id"]) for h in (h_gone, h_down, h_slack)]
            return all(len(d) == 1 and d[0]["status"] != "pending" for d in got)

        await eventually(settled, within=10)
        [d] = await deliveries(http, h_gone["id"])
        assert (d["status"], d["attempts"], d["last_status_code"]) == ("failed", 1, 410)  # not retried
        [d] = await deliveries(http, h_down["id"])
        assert (d["status"], d["attempts"], d["last_error"]) == ("failed", 2, "HTTP 500")  # capped
        assert len(down.got) == 2
        [d] = await deliveries(http, h_slack["id"])
        assert d["status"] == "delivered"
        [doc] = verified(slack, h_slack["secret"])
        assert list(doc) == ["text"] and doc["text"].startswith("syscall.getppid +30")
        assert await deliveries(http, h_off["id"]) == []  # disabled: nothing queued


@pytest.mark.parametrize("settings_overrides", [FAST])
async def test_no_answer_is_retried_and_ping_reaches_a_receiver(
    http: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    with receiver() as rx:
        closed = rx.url
    hook = await create(http, closed)  # nothing listens there any more
    r = await http.post(f"/api/v1/webhooks/{hook['id']}/test")
    assert r.status_code == 202 and r.json()["event"] == "ping" and r.json()["status"] == "pending"

    async def tried() -> bool:
        return (await deliveries(http, hook["id"]))[0]["attempts"] >= 1

    await eventually(tried, within=10)
    [d] = await deliveries(http, hook["id"])
    assert d["status"] == "pending" and d["last_status_code"] is None and "Connection" in d["last_error"]
    with receiver() as rx:
        r = await http.patch(f"/api/v1/webhooks/{hook['id']}", json={"url": rx.url})
        assert r.status_code == 200 and r.json()["url"] == rx.url

        async def got_it() -> bool:
            return (await deliveries(http, hook["id"]))[0]["status"] == "delivered"

        await eventually(got_it, within=10)
        [doc] = verified(rx, hook["secret"])
        assert doc["event"] == "ping"
    rotated = (await http.post(f"/api/v1/webhooks/{hook['id']}/rotate-secret")).json()
    assert rotated["secret"] != hook["secret"]
    assert (await http.delete(f"/api/v1/webhooks/{hook['id']}")).status_code == 204
    assert (await http.get(f"/api/v1/webhooks/{hook['id']}/deliveries")).status_code == 404


@pytest.mark.parametrize("settings_overrides", [{"max_webhooks": 2}])
async def test_budgets_scopes_and_422s(
    http: httpx.AsyncClient, anon: httpx.AsyncClient, server: CtxbenchServer
) -> None:
    ok = "https://hooks.example/x"
    for body, loc in (
        ({"name": "a", "url": "ftp://hooks.example/x"}, ["body", "url"]),
        ({"name": "a", "url": "file:///etc/passwd"}, ["body", "url"]),
        ({"name": "a", "url": "https://" + "a" * 2048}, ["body", "url"]),
        ({"name": "a", "url": "https://h.example:99999/"}, ["body", "url"]),
        ({"name": "", "url": ok}, ["body", "name"]),
        ({"name": "a\nb", "url": ok}, ["body", "name"]),
        ({"name": "a", "url": ok, "secret": "short"}, ["body", "secret"]),
        ({"name": "a", "url": ok, "format": "xml"}, ["body", "format"]),
        ({"name": "a", "url": ok, "events": ["run.finished"]}, ["body", "events", 0]),
        ({"name": "a", "url": ok, "events": []}, ["body", "events"]),
        ({"name": "a", "url": ok, "colour": "red"}, ["body", "colour"]),
    ):
        r = await http.post("/api/v1/webhooks", json=body)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == loc, (body, r.text)
    assert (await anon.get("/api/v1/webhooks")).status_code == 401
    r = await http.post("/api/v1/tokens", json={"name": "writer", "scope": "write"})
    writer = {"authorization": f"Bearer {r.json()['token']}"}
    assert (await http.get("/api/v1/webhooks", headers=writer)).status_code == 403
    assert (
        await http.post("/api/v1/webhooks", headers=writer, json={"name": "a", "url": ok})
    ).status_code == 403
    mine = await create(http, ok, secret="my-own-secret-0123456789")
    assert mine["secret"] == "my-own-secret-0123456789"
    await create(http, ok)
    r = await http.post("/api/v1/webhooks", json={"name": "third", "url": ok})
    assert r.status_code == 409 and "CTXBENCH_MAX_WEBHOOKS" in r.json()["detail"]
    r = await http.patch(f"/api/v1/webhooks/{mine['id']}", json={"url": "gopher://x"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "url"]
    assert (await http.get("/api/v1/webhooks/nope")).status_code == 404


async def test_patch_changes_the_events_a_webhook_receives(http: httpx.AsyncClient) -> None:
    """The explorer's event choice: PATCH events replaces the list (duplicates dropped), an unknown or
    empty one is a 422 naming body.events and changes nothing."""
    hook = await create(http, "https://hooks.example/x")
    url = f"/api/v1/webhooks/{hook['id']}"
    r = await http.patch(url, json={"events": ["fleet_change.opened", "alert.opened"]})
    assert r.status_code == 200 and r.json()["events"] == ["fleet_change.opened", "alert.opened"], r.text
    r = await http.patch(url, json={"events": ["alert.opened", "alert.opened"]})
    assert r.status_code == 200 and r.json()["events"] == ["alert.opened"], r.text
    for events, loc in ((["run.finished"], ["body", "events", 0]), ([], ["body", "events"])):
        r = await http.patch(url, json={"events": events})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == loc, r.text
    r = await http.patch(url, json={"events": ["fleet_change.opened"]})
    assert r.json()["events"] == ["fleet_change.opened"]
    [listed] = (await http.get("/api/v1/webhooks")).json()
    assert listed["events"] == ["fleet_change.opened"] and listed["name"] == "ops"


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Db]:
    async for d in migrated(tmp_path):
        yield d


async def test_two_senders_make_each_attempt_once(db: Db) -> None:
    with receiver() as rx:
        async with db.sessionmaker() as s:
            hook = await service.create(s, WebhookCreate(name="x", url=rx.url), db.settings, "t", utcnow())
            for i in range(5):
                await service.enqueue(s, "alert.opened", f"a{i}", {"i": i}, f"alert {i}", utcnow())
            await s.commit()
        senders = [Sender(db.sessionmaker, db.settings), Sender(db.process(), db.settings)]
        now = utcnow() + timedelta(seconds=1)
        attempted = await asyncio.gather(*(x.tick(now) for x in senders))
        assert sum(attempted) == 5 and len(rx.got) == 5
        assert sorted(json.loads(g.body)["data"]["i"] for g in rx.got) == list(range(5))
        assert verified(rx, hook.secret)
        async with db.sessionmaker() as s:
            assert set(await s.scalars(select(WebhookDelivery.status))) == {"delivered"}
        assert await asyncio.gather(*(x.tick(now) for x in senders)) == [0, 0]
