"""schedules: schedules, schedule_firings, runs.schedule_id"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("machine_ids", sa.JSON(), nullable=True),
        sa.Column("selector", sa.String(length=1024), nullable=True),
        sa.Column("interval_s", sa.Integer(), nullable=True),
        sa.Column("cron", sa.String(length=200), nullable=True),
        sa.Column("jitter_s", sa.Integer(), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("next_due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_fire_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedules")),
    )
    op.create_index("ix_schedules_paused_next_fire_at", "schedules", ["paused", "next_fire_at"])
    op.create_table(
        "schedule_firings",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("schedule_id", sa.String(length=36), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("fired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("run_ids", sa.JSON(), nullable=False),
        sa.Column("skipped", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["schedule_id"],
            ["schedules.id"],
            name=op.f("fk_schedule_firings_schedule_id_schedules"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedule_firings")),
        sa.UniqueConstraint("schedule_id", "due_at", name=op.f("uq_schedule_firings_schedule_id")),
    )
    op.create_index("ix_schedule_firings_schedule_fired", "schedule_firings", ["schedule_id", "fired_at"])
    # Only ADD COLUMN (see 0009: a recreated runs table would cascade-delete on SQLite), and no foreign
    # key: a deleted schedule's runs keep its id. Runs stored before were posted by hand.
    with op.batch_alter_table("runs", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("schedule_id", sa.String(length=36), nullable=True))
    op.create_index(op.f("ix_runs_schedule_id"), "runs", ["schedule_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_runs_schedule_id"), table_name="runs")
    with op.batch_alter_table("runs", recreate="never") as batch_op:
        batch_op.drop_column("schedule_id")
    op.drop_index("ix_schedule_firings_schedule_fired", table_name="schedule_firings")
    op.drop_table("schedule_firings")
    op.drop_index("ix_schedules_paused_next_fire_at", table_name="schedules")
    op.drop_table("schedules")
