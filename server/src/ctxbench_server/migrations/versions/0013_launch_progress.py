"""launch progress: run_items.launches_done, launches_planned, launches_wall_s, launch_at"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    # Only ADD COLUMN. Items stored before count no launch: a finished one counts as done by its result.
    with op.batch_alter_table("run_items", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("launches_done", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("launches_planned", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("launches_wall_s", sa.Float(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("launch_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("run_items", recreate="never") as batch_op:
        batch_op.drop_column("launch_at")
        batch_op.drop_column("launches_wall_s")
        batch_op.drop_column("launches_planned")
        batch_op.drop_column("launches_done")
