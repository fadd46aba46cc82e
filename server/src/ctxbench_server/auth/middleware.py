"""Browser safety in front of everything, as pure ASGI (a BaseHTTPMiddleware would buffer SSE streams).

1. Host: a request whose Host header names a host this server does not serve gets 400 before it
   reaches any route: a DNS-rebinding page cannot talk to a server on someone's laptop.
2. Origin: an unsafe method (POST, DELETE, ...) without an `authorization` header, from a browser
   (a session cookie, an Origin or a Sec-Fetch-Site header), must come from this server's own origin:
   403 otherwise. Bearer-token writes need no Origin: browsers never attach that header by themselves.
3. Every response carries a Content-Security-Policy without inline script, nosniff, no referrer (sign-in
   links carry a code), and frame-ancestors 'none'; /docs too (Swagger UI, served from here:
   web/swagger.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ctxbench_server.auth.deps import SESSION_COOKIE
from ctxbench_server.config import Settings, host_name

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)
COMMON_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


class BrowserSafety:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.hosts = settings.served_hosts()
        self.public_origin = ""
        if settings.public_url:
            u = urlsplit(settings.public_url)
            self.public_origin = f"{u.scheme}://{u.netloc}".lower()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", []))
                present = {k.lower() for k, _ in raw}
                extra: Iterable[tuple[bytes, bytes]] = [(b"content-security-policy", CSP.encode())]
                raw += [(k, v) for k, v in [*extra, *COMMON_HEADERS] if k not in present]
                message = {**message, "headers": raw}
            await send(message)

        host = headers.get("host", "")
        if "*" not in self.hosts and host_name(host) not in self.hosts:
            await _refuse(send_with_headers, 400, f"unknown Host {host[:100]!r}: not one this server serves "
                          "(set CTXBENCH_ALLOWED_HOSTS or CTXBENCH_PUBLIC_URL)")  # fmt: skip
            return
        if scope["method"] not in SAFE_METHODS and not self._same_origin_or_not_browser(headers, host):
            await _refuse(send_with_headers, 403, "cross-origin write refused: Origin is not this server")
            return
        await self.app(scope, receive, send_with_headers)

    def _same_origin_or_not_browser(self, headers: Headers, host: str) -> bool:
        if "authorization" in headers:
            return True  # a Bearer token: a browser never adds one to a cross-site request by itself
        origin = headers.get("origin")
        fetch_site = headers.get("sec-fetch-site")
        has_cookie = f"{SESSION_COOKIE}=" in headers.get("cookie", "")
        if origin is None and fetch_site is None and not has_cookie:
            return True  # not a browser (curl, scripts): the route's own credential check decides
        if fetch_site == "same-origin":
            return True
        if origin is None or origin == "null":
            return False
        netloc = urlsplit(origin).netloc.lower()
        return netloc == host.lower() or (bool(self.public_origin) and origin.lower() == self.public_origin)


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
