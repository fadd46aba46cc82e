"""orchestration: batches, profiles, queue order, dynamic reruns, item attempts"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    # Only ADD COLUMN and CREATE INDEX: SQLite does both in place. A batch "recreate" would DROP the
    # runs table, and with foreign keys on that deletes every run item and result (ON DELETE CASCADE).
    with op.batch_alter_table("runs", schema=None, recreate="never") as batch_op:
        batch_op.add_column(sa.Column("batch_id", sa.String(length=36), server_default="", nullable=False))
        batch_op.add_column(
            sa.Column("profile", sa.String(length=16), server_default="default", nullable=False)
        )
        batch_op.add_column(sa.Column("rerun_cv", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("max_reruns", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column(
                "queued_at",
                sa.DateTime(timezone=True),
                server_default=sa.text("'1970-01-01 00:00:00'"),
                nullable=False,
            )
        )
    # Runs stored before batches are their own batch and joined the queue when created.
    op.execute("UPDATE runs SET batch_id = id, queued_at = created_at")
    with op.batch_alter_table("runs", schema=None, recreate="never") as batch_op:
        batch_op.create_index(batch_op.f("ix_runs_batch_id"), ["batch_id"], unique=False)
        batch_op.create_index(
            "ix_runs_machine_status_queued", ["machine_id", "status", "queued_at"], unique=False
        )

    with op.batch_alter_table("run_items", schema=None, recreate="never") as batch_op:
        batch_op.add_column(sa.Column("attempt", sa.Integer(), server_default="1", nullable=False))

    with op.batch_alter_table("results", schema=None, recreate="never") as batch_op:
        batch_op.add_column(sa.Column("attempt", sa.Integer(), server_default="1", nullable=False))
        batch_op.add_column(sa.Column("reruns", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("noisy", sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column("attempt_cvs", sa.JSON(), server_default="[]", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_column("attempt_cvs")
        batch_op.drop_column("noisy")
        batch_op.drop_column("reruns")
        batch_op.drop_column("attempt")

    with op.batch_alter_table("run_items", schema=None) as batch_op:
        batch_op.drop_column("attempt")

    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_machine_status_queued")
        batch_op.drop_index(batch_op.f("ix_runs_batch_id"))
        batch_op.drop_column("queued_at")
        batch_op.drop_column("max_reruns")
        batch_op.drop_column("rerun_cv")
        batch_op.drop_column("profile")
        batch_op.drop_column("batch_id")
