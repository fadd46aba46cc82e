"""Several server processes on one PostgreSQL: what each must tell the others, through PostgreSQL itself.

Every process keeps one connection of its own (asyncpg, outside the pools) that LISTENs on four channels
(payload: JSON `{"from": <process id>, "ids": [...]}`, ids coalesced, under PostgreSQL's 8000 bytes):

- `ctxbench_run`: runs whose state or results changed (sent after the commit): each process's event
  streams of those runs re-read them once (runs/events.py);
- `ctxbench_machine`: machines with news for their agent (a run posted, cancelled or retried on a process
  that does not hold the agent's stream): the process that holds it reconciles (dispatch/dispatcher.py);
- `ctxbench_release`: machines whose agent connected to another process, or that were revoked: a
  process holding an older stream of one closes it;
- `ctxbench_change`: the explorer's push channel (push/changes.py): `<kind>:<what>:<id>` tokens (a machine
  online or offline, renamed, deleted; a run created or deleted; a batch changed) that each process sends
  to its own browsers' streams (run progress needs none: it comes on `ctxbench_run`).

The same connection holds a session advisory lock per machine whose stream this process holds: a machine
is served by one process at a time (a newer stream elsewhere asks the holder to let go, then takes the
lock), "online" is read from pg_locks, and a process that dies lets go of all its machines at once: the
others see those locks gone at their next read of pg_locks (every PING_S) and tell their own browsers
that those machines went offline (a process that stops gracefully says so itself, at once).

Every transaction begun under a machine's lock (AgentHub.locks) also takes `pg_advisory_xact_lock` of
that machine first, so a cancel on one process and a result stored on another never interleave.

NOTIFYs sent while the connection is down are lost: after it reconnects the process takes its machines'
locks again and resyncs (every followed run is re-read, every held machine reconciled).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Container, Iterable
from typing import Any

import asyncpg
from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.orm import Session, SessionTransaction

from ctxbench_server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

RUN_CHANNEL = "ctxbench_run"
MACHINE_CHANNEL = "ctxbench_machine"
RELEASE_CHANNEL = "ctxbench_release"
CHANGE_CHANNEL = "ctxbench_change"
CHANNELS = (RUN_CHANNEL, MACHINE_CHANNEL, RELEASE_CHANNEL, CHANGE_CHANNEL)
ONLINE_TOKEN = "machine:online:"  # a change token (push/changes.py): a machine came online
LISTEN_TASK = "cluster-listen"
# A stopping process's last notifications (its machines gone offline) may take this long to go out.
LAST_WORDS_S = 2.0
APPLICATION_NAME = "ctxbench-cluster"  # the listener's name in pg_stat_activity
MAX_PAYLOAD = 7000  # bytes of one NOTIFY (PostgreSQL's limit is 8000)
CLAIM_WAIT_S = 5.0  # how long a new stream waits for another process to let its machine go
PING_S = 5.0  # the listener checks its connection (and who is online) this often; a dead one is replaced
RECONNECT_MAX_S = 5.0
START_WAIT_S = 30.0  # a server that cannot listen within this at start does not start

# The machine whose lock (AgentHub.locks) the running task holds: transactions it begins take the
# machine's advisory lock too (see _lock_machine_in_transaction).
locked_machine: contextvars.ContextVar[str | None] = contextvars.ContextVar("locked_machine", default=None)


def advisory_key(kind: str, machine_id: str) -> int:
    """A signed 64-bit advisory lock key for (kind, machine id)."""
    digest = hashlib.sha256(f"ctxbench:{kind}:{machine_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def presence_key(machine_id: str) -> int:
    return advisory_key("presence", machine_id)


def _lock_machine_in_transaction(session: Session, _tx: SessionTransaction, connection: Connection) -> None:
    machine_id = locked_machine.get()
    if machine_id is not None and connection.dialect.name == "postgresql":
        connection.execute(
            text("SELECT pg_advisory_xact_lock(:k)"), {"k": advisory_key("machine", machine_id)}
        )


_MACHINE_LOCK = text("SELECT pg_advisory_xact_lock(:k)")


async def lock_machines(session: AsyncSession, machine_ids: Iterable[str]) -> None:
    """On PostgreSQL the session's transaction takes these machines' advisory locks, sorted (two
    transactions of a cluster never wait for each other in a circle): for a transaction that changes
    several machines, begun with `locked_machine` unset. Nothing on SQLite (one process per file)."""
    if session.get_bind().dialect.name == "postgresql":
        for machine_id in sorted(set(machine_ids)):
            await session.execute(_MACHINE_LOCK, {"k": advisory_key("machine", machine_id)})


def lock_machines_across_processes() -> None:
    """Installs the session hook (once per process): on PostgreSQL, a transaction begun while the task
    holds a machine's lock first waits for that machine's transaction-level advisory lock."""
    if not event.contains(Session, "after_begin", _lock_machine_in_transaction):
        event.listen(Session, "after_begin", _lock_machine_in_transaction)


class Online(Container[str]):
    """Machines with a stream on this process or on any other (their presence lock is held)."""

    def __init__(self, local: Iterable[str], keys: set[int]) -> None:
        self.local = set(local)
        self.keys = keys

    def __contains__(self, machine_id: object) -> bool:
        return isinstance(machine_id, str) and (
            machine_id in self.local or presence_key(machine_id) in self.keys
        )


# Advisory locks held in this database by any session: the presence keys among them.
PRESENCE_KEYS = (
    "SELECT classid::bigint, objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND objsubid = 1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def _signed(hi: int, lo: int) -> int:
    """pg_locks shows a bigint advisory key as classid (high half) and objid (low half)."""
    u = (hi << 32) | lo
    return u - (1 << 64) if u >= 1 << 63 else u


async def _cancel(tasks: list[asyncio.Task[None]]) -> None:
    """Ends the tasks (each cancelled until it ends: tasks.cancel_and_wait); how they ended is no news."""
    for task in tasks:
        task.cancel()
    for task in tasks:
        await cancel_and_wait(task)


class Cluster:
    """This process's listener connection: publishes and receives the four channels, holds presence."""

    def __init__(self, engine: AsyncEngine) -> None:
        _, kwargs = engine.dialect.create_connect_args(engine.url)
        for key in ("prepared_statement_cache_size", "prepared_statement_name_func", "async_creator_fn"):
            kwargs.pop(key, None)
        self._connect_kwargs: dict[str, Any] = dict(kwargs)
        self.instance = uuid.uuid4().hex[:12]
        # What receiving does (set by main: events, dispatch, hub); each takes one id.
        self.on_run: Callable[[str], None] = lambda _id: None
        self.on_machine: Callable[[str], None] = lambda _id: None
        self.on_release: Callable[[str], None] = lambda _id: None
        self.on_change: Callable[[str], None] = lambda _token: None
        self.on_resync: Callable[[], None] = lambda: None
        # A machine another process held went offline without a word (that process was killed, or lost
        # its connection): seen by the watch as its presence lock gone. Told here, to this process only.
        self.on_gone: Callable[[str], None] = lambda _id: None
        self._conn: asyncpg.Connection | None = None
        self._generation = 0  # connections so far: a lock taken on an earlier one died with it
        self._use = asyncio.Lock()  # one operation at a time on the connection
        self._connected = asyncio.Event()
        self._lost = asyncio.Event()
        self._pending: dict[str, dict[str, None]] = {ch: {} for ch in CHANNELS}
        self._wake = asyncio.Event()
        self._held: Counter[str] = Counter()  # machine -> local streams that claimed it
        self._tasks: list[asyncio.Task[None]] = []
        self._unlocking: set[asyncio.Task[None]] = set()
        self._closed = False
        self._stopping = False  # let_go: nothing more is published but close's last notifications
        self.reconnects = 0
        self._keys: set[int] = set()  # presence keys held anywhere, as last read
        self._keys_read: asyncio.Future[set[int]] | None = None
        self._watched: set[int] | None = None  # presence keys at the watch's last read (this connection)
        self._names: dict[int, str] = {}  # presence key -> machine id, of the machines seen so far
        self._announced: set[int] = set()  # presence keys of machines said online since that read

    # -- life cycle

    async def start(self) -> None:
        """Connects (the first time within START_WAIT_S) and starts listening and publishing."""
        lock_machines_across_processes()
        self._tasks = [
            asyncio.create_task(self._listen(), name=LISTEN_TASK),
            asyncio.create_task(self._publish(), name="cluster-publish"),
        ]
        try:
            async with asyncio.timeout(START_WAIT_S):
                await self._connected.wait()
        except TimeoutError:
            await self.close()
            raise OSError(f"no PostgreSQL listener connection within {START_WAIT_S:.0f} s") from None

    async def let_go(self) -> None:
        """Graceful stop, first step: stops publishing and gives back every machine's presence on the
        listener connection, which stays open for `close`'s last notifications (the stopping process's
        "offline" changes): another process's browser, told so, reads the machine offline, never a
        presence lock not yet gone."""
        self._stopping = True
        tasks = [t for t in self._tasks if t.get_name() != LISTEN_TASK] + list(self._unlocking)
        await _cancel(tasks)
        with contextlib.suppress(Exception):  # bounded: a dead connection lets go of them anyway
            async with asyncio.timeout(LAST_WORDS_S):
                await self._unlock_all()
        self._held.clear()

    async def _unlock_all(self) -> None:
        async with self._use:
            if self._conn is not None:
                await self._conn.execute("SELECT pg_advisory_unlock_all()")

    async def close(self) -> None:
        """Stops (`let_go` first if not done), sends what is still pending (within LAST_WORDS_S), and
        ends the listener connection."""
        if not self._stopping:
            await self.let_go()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(LAST_WORDS_S):
                await self._send_pending()
        self._closed = True
        await _cancel([*self._tasks, *self._unlocking])  # the listener's own `finally` ends its connection
        self._tasks = []

    async def _send_pending(self) -> None:
        async with self._use:
            conn = self._conn
            if conn is None:
                return
            for channel in CHANNELS:
                ids = list(self._pending[channel])
                self._pending[channel] = {}
                for payload in self._payloads(ids):
                    await conn.execute("SELECT pg_notify($1, $2)", channel, payload)

    async def _listen(self) -> None:
        delay = 0.1
        while not self._closed:
            try:
                conn = await asyncpg.connect(
                    **self._connect_kwargs, server_settings={"application_name": APPLICATION_NAME}
                )
            except Exception as e:  # whatever the cause, the next try may work
                log.warning("cluster: cannot connect to PostgreSQL (%s); retrying in %.1f s", e, delay)
                await asyncio.sleep(delay)
                delay = min(RECONNECT_MAX_S, delay * 2)
                continue
            delay = 0.1
            self._lost.clear()
            conn.add_termination_listener(lambda _c: self._lost.set())
            try:
                for channel in CHANNELS:
                    await conn.add_listener(channel, self._received)
                self._generation += 1
                self._conn = conn
                self._watched = None  # what went while it was down: on_resync refetches everything
                if self._generation > 1:
                    self.reconnects += 1
                    log.warning("cluster: listener connection back; resyncing")
                await self._retake_presence()
                self._connected.set()
                self._wake.set()  # what was published meanwhile goes out now
                self.on_resync()
                await self._watch(conn)
            except Exception as e:  # a dead connection, or anything else: a new connection starts afresh
                log.warning("cluster: listener connection failed: %r", e)
            finally:
                self._connected.clear()
                self._conn = None
                with contextlib.suppress(Exception):
                    conn.terminate()
            if not self._closed:
                log.warning("cluster: listener connection lost; reconnecting")
                await asyncio.sleep(delay)

    async def _watch(self, conn: asyncpg.Connection) -> None:
        """Returns when the connection is gone (closed by the server, or a ping unanswered). Its ping is
        the read of who is online: a machine whose presence lock went since the last one, and that no
        stream here holds, is `on_gone` (its process died: a process that stops says so itself; one
        that hands a machine over says online again, after, on the same connection's notifications)."""
        while not self._closed:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(PING_S):
                    await self._lost.wait()
            if self._lost.is_set() or conn.is_closed():
                return
            async with self._use:
                async with asyncio.timeout(PING_S):
                    rows = await conn.fetch(PRESENCE_KEYS)
                self._keys = keys = {_signed(hi, lo) for hi, lo in rows}
                gone = set() if self._watched is None else (self._watched | self._announced) - keys
                self._watched, self._announced = keys, set()
                if gone - self._names.keys():  # a machine not seen yet (rare: one read of the ids)
                    async with asyncio.timeout(PING_S):
                        ids = await conn.fetch("SELECT id FROM machines")
                    self._names.update((presence_key(r["id"]), r["id"]) for r in ids)
            for key in gone:
                machine_id = self._names.get(key)
                if machine_id is not None and not self.holds(machine_id):
                    log.info("cluster: machine %s went offline with the process that held it", machine_id)
                    self.on_gone(machine_id)

    # -- publishing

    def publish_run(self, run_id: str) -> None:
        self._queue(RUN_CHANNEL, run_id)

    def publish_machine(self, machine_id: str) -> None:
        self._queue(MACHINE_CHANNEL, machine_id)

    def publish_release(self, machine_id: str) -> None:
        self._queue(RELEASE_CHANNEL, machine_id)

    def publish_change(self, token: str) -> None:
        self._queue(CHANGE_CHANNEL, token)

    def _queue(self, channel: str, id_: str) -> None:
        self._pending[channel][id_] = None
        self._wake.set()

    async def _publish(self) -> None:
        while not self._closed:
            await self._wake.wait()
            self._wake.clear()
            await self._connected.wait()
            for channel in CHANNELS:
                ids = list(self._pending[channel])
                if not ids:
                    continue
                self._pending[channel] = {}
                try:
                    for payload in self._payloads(ids):
                        async with self._use:
                            conn = self._conn
                            if conn is None:
                                raise asyncpg.InterfaceError("no listener connection")
                            await conn.execute("SELECT pg_notify($1, $2)", channel, payload)
                except Exception as e:  # the connection died (it is replaced), or the database refused
                    log.warning("cluster: could not notify %s (%r); sending again on reconnect", channel, e)
                    for id_ in ids:  # at most a few repeats: receivers re-read, which is idempotent
                        self._pending[channel][id_] = None

    def _payloads(self, ids: list[str]) -> Iterable[str]:
        chunk: list[str] = []
        size = 0
        for id_ in ids:
            n = len(json.dumps(id_).encode()) + 1
            if chunk and size + n > MAX_PAYLOAD - 64:
                yield json.dumps({"from": self.instance, "ids": chunk})
                chunk, size = [], 0
            chunk.append(id_)
            size += n
        if chunk:
            yield json.dumps({"from": self.instance, "ids": chunk})

    # -- receiving

    def _received(self, _conn: object, _pid: int, channel: str, payload: str) -> None:
        try:
            msg = json.loads(payload)
            sender, ids = str(msg["from"]), [str(i) for i in msg["ids"]]
        except (ValueError, KeyError, TypeError):
            log.warning("cluster: ignoring a malformed notification on %s", channel)
            return
        own = sender == self.instance
        handler = {
            RUN_CHANNEL: self.on_run,
            MACHINE_CHANNEL: self.on_machine,
            RELEASE_CHANNEL: self.on_release,
            CHANGE_CHANNEL: self.on_change,
        }
        if own and channel != MACHINE_CHANNEL:
            return  # this process told its own streams already, and never asks itself to let go
        if channel == CHANGE_CHANNEL:
            self._note_online(ids)
        for id_ in ids:
            try:
                handler[channel](id_)
            except Exception:
                log.exception("cluster: handling %s %s failed", channel, id_)

    def _note_online(self, tokens: list[str]) -> None:
        """Machines another process says came online: the watch's next read expects their presence
        (one that comes and goes between two reads is still missed as gone)."""
        for token in tokens:
            if token.startswith(ONLINE_TOKEN):
                machine_id = token.removeprefix(ONLINE_TOKEN)
                key = presence_key(machine_id)
                self._names[key] = machine_id
                self._announced.add(key)

    # -- presence: which process holds a machine's stream

    async def claim(self, machine_id: str) -> bool:
        """Takes the machine's presence for one local stream; asks another process holding it to let go
        and waits up to CLAIM_WAIT_S. False if it could not (the caller refuses the stream)."""
        if self._held[machine_id] > 0:
            self._held[machine_id] += 1
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CLAIM_WAIT_S
        asked = False
        while True:
            if self._held[machine_id] > 0:  # another local stream of it got it meanwhile
                self._held[machine_id] += 1
                return True
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, deadline - loop.time())):
                    await self._connected.wait()
            if await self._try_lock(machine_id):
                if self._held[machine_id] > 0:  # another local claim got it meanwhile: one lock is enough
                    self._schedule_unlock(machine_id)
                self._held[machine_id] += 1
                return True
            if not asked:
                self.publish_release(machine_id)
                asked = True
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.05)

    def release(self, machine_id: str) -> None:
        """A local stream that claimed the machine ended; the last one gives its presence back."""
        if self._held[machine_id] <= 0:
            return
        self._held[machine_id] -= 1
        if self._held[machine_id] == 0:
            del self._held[machine_id]
            self._schedule_unlock(machine_id)

    def _schedule_unlock(self, machine_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._unlock(machine_id, self._generation))
        self._unlocking.add(task)
        task.add_done_callback(self._unlocking.discard)

    def holds(self, machine_id: str) -> bool:
        return self._held[machine_id] > 0

    async def online(self, local: Iterable[str]) -> Online:
        """Machines online on any process: `local` (this one's streams) and those whose presence lock is
        held. Read on the listener connection (no pool connection, no statement in the request's
        session); requests arriving while a read is under way share it. While the connection is down,
        the last read."""
        if self._keys_read is None:
            self._keys_read = asyncio.ensure_future(self._read_keys())
        read = self._keys_read
        try:
            self._keys = await asyncio.shield(read)
        except Exception as e:
            log.warning("cluster: could not read who is online (%r); using the last answer", e)
        finally:
            if self._keys_read is read and read.done():
                self._keys_read = None
        return Online(local, self._keys)

    async def _read_keys(self) -> set[int]:
        async with self._use:
            conn = self._conn
            if conn is None:
                return self._keys
            async with asyncio.timeout(PING_S):
                rows = await conn.fetch(PRESENCE_KEYS)
        return {_signed(hi, lo) for hi, lo in rows}

    async def _try_lock(self, machine_id: str) -> bool:
        async with self._use:
            conn = self._conn
            if conn is None:
                return False
            try:
                got = await conn.fetchval("SELECT pg_try_advisory_lock($1)", presence_key(machine_id))
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
                log.warning("cluster: could not take machine %s's presence: %s", machine_id, e)
                return False
            return bool(got)

    async def _unlock(self, machine_id: str, generation: int) -> None:
        async with self._use:
            conn = self._conn
            if conn is None or generation != self._generation:
                return  # the lock died with its connection
            # Even when a local stream claimed it again meanwhile: that claim locked once more (the
            # session's count is 2), so this unlock leaves it held.
            with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
                await conn.fetchval("SELECT pg_advisory_unlock($1)", presence_key(machine_id))

    async def _retake_presence(self) -> None:
        """After a reconnect: this process's machines again; one another process took meanwhile is let go."""
        conn = self._conn
        assert conn is not None
        for machine_id in list(self._held):
            async with self._use:
                got = await conn.fetchval("SELECT pg_try_advisory_lock($1)", presence_key(machine_id))
            if not got:
                log.warning(
                    "cluster: machine %s is held by another process now; closing its stream here", machine_id
                )
                del self._held[machine_id]  # its streams' release() then unlocks nothing
                self.on_release(machine_id)
