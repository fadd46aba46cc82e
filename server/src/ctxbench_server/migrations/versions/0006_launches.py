"""launches: per-sample launch index, per-launch disturbance, the measuring agent's version; runs.launches"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


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
