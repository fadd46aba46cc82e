"""REST for enrollment: join tokens (admin), revoke and approve of machines (admin)."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from ctxbench_server.auth.deps import AdminDep
from ctxbench_server.config import Settings
from ctxbench_server.db import SessionDep
from ctxbench_server.dispatch.deps import HubDep
from ctxbench_server.fleet import service
from ctxbench_server.fleet.installer import installer_sha256
from ctxbench_server.fleet.offer import read_offer
from ctxbench_server.fleet.schemas import JoinTokenCreate, JoinTokenCreated, JoinTokenOut
from ctxbench_server.machines import service as machines
from ctxbench_server.machines.schemas import MachineOut
from ctxbench_server.push.deps import ChangesDep
from ctxbench_server.web.openapi import errors

router = APIRouter(tags=["fleet"])


@dataclass
class FleetInfo:
    """What install commands need from the running server (set by CtxbenchServer.start)."""

    grpc_addresses: list[str] = field(default_factory=list)
    ca_fingerprint: str = ""
    tls: bool = True


def get_fleet(request: Request) -> FleetInfo:
    info: FleetInfo | None = getattr(request.app.state, "fleet", None)
    return info or FleetInfo()


FleetDep = Annotated[FleetInfo, Depends(get_fleet)]


def install_command(public_url: str, info: FleetInfo, token: str, installer_sha256: str | None) -> str:
    """One line for a POSIX shell: download install-agent.sh to a temp file, check it against the
    sha256 of what this server serves (the installer then checks the bundle against the sums written
    in it), and run it with the join token on stdin (printf is a shell builtin: the token is in no
    process's argv). No sudo here: the installer runs as root, or runs itself again through sudo with
    the same stdin, so the line works where root has no sudo."""
    server = info.grpc_addresses[0] if info.grpc_addresses else "<grpc address>"
    sha = installer_sha256 or "<run make dist on the server>"
    cmd = (
        f'f=$(mktemp) && curl -fsSL {public_url}/install-agent.sh -o "$f" '
        f'&& echo "{sha}  $f" | sha256sum -c - '
        f"&& printf '%s\\n' {token} | sh \"$f\" --server {server} --join-token-file -"
    )
    if info.tls and info.ca_fingerprint:
        cmd += f" --ca-fingerprint {info.ca_fingerprint}"
    elif not info.tls:
        cmd += " --insecure"
    return cmd


def public_url(request: Request) -> str:
    """The base URL people reach this server by: CTXBENCH_PUBLIC_URL, else the one this request used."""
    s: Settings = request.app.state.settings
    if s.public_url:
        return s.public_url.rstrip("/")
    return str(request.base_url).rstrip("/")


@router.post("/join-tokens", status_code=201, response_model=JoinTokenCreated)
async def create_join_token(
    body: JoinTokenCreate, session: SessionDep, request: Request, fleet: FleetDep, _admin: AdminDep
) -> JoinTokenCreated:
    principal = getattr(request.state, "principal", None)
    url = public_url(request)
    jt, token = await service.create_join_token(
        session, body.uses, body.ttl_s, str(getattr(principal, "name", "") or "")
    )
    return JoinTokenCreated(
        id=jt.id,
        token=token,
        expires_at=jt.expires_at,
        uses_left=jt.uses_left,
        ca_fingerprint=fleet.ca_fingerprint,
        install_command=install_command(
            url, fleet, token, installer_sha256(request.app.state.settings.dist_dir, url)
        ),
    )


@router.get("/join-tokens", response_model=list[JoinTokenOut])
async def list_join_tokens(session: SessionDep, _admin: AdminDep) -> list[JoinTokenOut]:
    return [JoinTokenOut.model_validate(jt) for jt in await service.list_join_tokens(session)]


@router.delete("/join-tokens/{token_id}", status_code=204, responses={404: {"description": "unknown"}})
async def delete_join_token(token_id: str, session: SessionDep, _admin: AdminDep) -> Response:
    await service.revoke_join_token(session, token_id)
    return Response(status_code=204)


@router.post("/machines/{machine_id}/revoke", response_model=MachineOut, responses=errors({404: "unknown"}))
async def revoke_machine(
    machine_id: str, request: Request, session: SessionDep, hub: HubDep, changes: ChangesDep, _admin: AdminDep
) -> MachineOut:
    await service.set_status(session, machine_id, service.REVOKED)
    # Closes the open stream now; a stream authenticated just before the commit cannot register after.
    hub.revoke(machine_id)
    changes.machine(machine_id, "changed")
    return await _machine(request, session, machine_id, await hub.online())


@router.post(
    "/machines/{machine_id}/approve",
    response_model=MachineOut,
    responses=errors({404: "unknown", 409: "revoked"}),
)
async def approve_machine(
    machine_id: str, request: Request, session: SessionDep, hub: HubDep, changes: ChangesDep, _admin: AdminDep
) -> MachineOut:
    await service.set_status(session, machine_id, service.ACTIVE)
    changes.machine(machine_id, "changed")
    return await _machine(request, session, machine_id, await hub.online())


async def _machine(
    request: Request, session: SessionDep, machine_id: str, online: Container[str]
) -> MachineOut:
    """The machine as GET /machines/{id} shows it, its agent's upgrade included."""
    out = await machines.get_machine(session, machine_id, online)
    read_offer(request.app.state.settings.dist_dir, public_url(request)).apply([out])
    return out
