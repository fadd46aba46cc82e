"""A webhook receiver for end-to-end tests: an HTTP server on a free loopback port, in a thread, that
keeps every POST and answers the first attempt of each delivery (its x-ctxbench-delivery id) 500, a
receiver down for a moment, and every later one 204."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Got:
    at: float  # time.time() when it came
    headers: dict[str, str]  # names lower-cased
    body: bytes
    answered: int


class Receiver:
    def __init__(self) -> None:
        self.got: list[Got] = []
        lock = threading.Lock()
        got = self.got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                headers = {k.lower(): v for k, v in self.headers.items()}
                delivery = headers.get("x-ctxbench-delivery")
                with lock:
                    seen = any(g.headers.get("x-ctxbench-delivery") == delivery for g in got)
                    status = 204 if seen else 500
                    got.append(Got(time.time(), headers, body, status))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/hook"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
