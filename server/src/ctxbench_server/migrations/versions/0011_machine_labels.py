"""machine labels: machines.labels (set by an admin), machines.agent_labels (the agent's --label)"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"


def upgrade() -> None:
    # Only ADD COLUMN (a recreated machines table would cascade-delete its catalog and runs on SQLite).
    # Every machine stored before has no labels.
    with op.batch_alter_table("machines", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("labels", sa.JSON(), nullable=False, server_default="{}"))
        batch_op.add_column(sa.Column("agent_labels", sa.JSON(), nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("machines", recreate="never") as batch_op:
        batch_op.drop_column("agent_labels")
        batch_op.drop_column("labels")
