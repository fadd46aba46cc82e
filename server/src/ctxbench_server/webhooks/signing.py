"""How a delivery is signed, and how a receiver checks it (the same function: tests and receivers
written in Python can import it).

    X-Ctxbench-Timestamp: <unix seconds when this attempt was sent>
    X-Ctxbench-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + body)>

The timestamp is inside the signed string, so a receiver that refuses timestamps older than a few
minutes also refuses a replayed delivery; X-Ctxbench-Delivery (the delivery's id, the same on every
attempt) lets it drop the duplicates a retry after a lost answer makes."""

from __future__ import annotations

import hashlib
import hmac
import secrets

SIGNATURE = "X-Ctxbench-Signature"
TIMESTAMP = "X-Ctxbench-Timestamp"
EVENT = "X-Ctxbench-Event"
DELIVERY = "X-Ctxbench-Delivery"
TOLERANCE_S = 300


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(
    secret: str, timestamp: str, body: bytes, signature: str, now: float, tolerance_s: int = TOLERANCE_S
) -> bool:
    """A receiver's check: the signature matches and the timestamp is recent."""
    try:
        ts = int(timestamp)
    except ValueError:
        return False
    if abs(now - ts) > tolerance_s:
        return False
    return hmac.compare_digest(sign(secret, ts, body), signature)
