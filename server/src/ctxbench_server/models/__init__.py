"""ORM models, all in one place so Alembic sees every table through Base.metadata."""

from ctxbench_server.models.alert import Alert
from ctxbench_server.models.auth import ApiToken, AuthSession, LoginCode
from ctxbench_server.models.base import Base
from ctxbench_server.models.join_token import JoinToken
from ctxbench_server.models.kernel import Kernel
from ctxbench_server.models.latest import LatestResult
from ctxbench_server.models.machine import Machine, MachineKernel, MachineStatus, RetiredMachine
from ctxbench_server.models.result import Result
from ctxbench_server.models.run import FINISHED_RUN, Batch, ItemState, Run, RunItem, RunStatus
from ctxbench_server.models.schedule import Schedule, ScheduleFiring
from ctxbench_server.models.share import Share
from ctxbench_server.models.webhook import Webhook, WebhookDelivery

__all__ = [
    "FINISHED_RUN",
    "Alert",
    "ApiToken",
    "AuthSession",
    "Base",
    "Batch",
    "ItemState",
    "JoinToken",
    "Kernel",
    "LatestResult",
    "LoginCode",
    "Machine",
    "MachineKernel",
    "MachineStatus",
    "Result",
    "RetiredMachine",
    "Run",
    "RunItem",
    "RunStatus",
    "Schedule",
    "ScheduleFiring",
    "Share",
    "Webhook",
    "WebhookDelivery",
]
