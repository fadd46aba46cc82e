"""Request budgets checked before any work: the body size, as pure ASGI (SSE streams pass untouched).

A body over `max_body_bytes` gets 413 before a route parses it: by its Content-Length when it declares
one, else as soon as the bytes read so far pass the limit (chunked uploads); the app then sees the client
gone and reads no more.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max = max_body_bytes

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            {"detail": f"request body over {self.max} bytes (CTXBENCH_MAX_BODY_BYTES)"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.max:
                    await self._refuse(send)
                    return
        seen = 0
        started = refused = False

        async def counted_receive() -> Message:
            # Past the limit: answer 413 now and tell the app the client left (it stops reading; whatever
            # it answers to that is dropped below).
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max:
                    refused = True
                    if not started:
                        await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if refused:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counted_receive, tracked_send)
