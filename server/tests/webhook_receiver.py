"""A real HTTP receiver on a loopback socket (http.server in a thread) for the webhook tests: it records
every POST and answers with the statuses it is told, in order (then 200)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    statuses: list[int] = field(default_factory=list)
    got: list[Received] = field(default_factory=list)


@contextmanager
def receiver(statuses: list[int] | None = None) -> Iterator[Receiver]:
    state = Receiver(url="", statuses=list(statuses or []))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            with lock:
                state.got.append(Received(self.path, dict(self.headers.items()), body))
                status = state.statuses.pop(0) if state.statuses else 200
            self.send_response(status)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:  # quiet
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{srv.server_address[1]}/hook"
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield state
    finally:
        srv.shutdown()
        srv.server_close()
