"""launches: per-sample launch index, per-launch disturbance, the measuring agent's version; runs.launches

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 04:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("results", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("sample_launches", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("launches", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("disturbance", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("agent_version", sa.String(length=64), nullable=True))
    with op.batch_alter_table("runs", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("launches", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs", recreate="never") as batch_op:
        batch_op.drop_column("launches")
    with op.batch_alter_table("results", recreate="never") as batch_op:
        batch_op.drop_column("agent_version")
        batch_op.drop_column("disturbance")
        batch_op.drop_column("launches")
        batch_op.drop_column("sample_launches")
