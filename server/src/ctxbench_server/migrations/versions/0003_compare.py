"""compare and share: latest result per machine and point, the frozen compare of a share"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "latest_results",
        sa.Column("machine_id", sa.String(length=64), nullable=False),
        sa.Column("kernel_id", sa.String(length=200), nullable=False),
        sa.Column("params_key", sa.String(length=1024), nullable=False),
        sa.Column("result_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["machine_id"],
            ["machines.id"],
            name=op.f("fk_latest_results_machine_id_machines"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name=op.f("fk_latest_results_result_id_results"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("machine_id", "kernel_id", "params_key", name=op.f("pk_latest_results")),
    )
    with op.batch_alter_table("latest_results", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_latest_results_result_id"), ["result_id"], unique=False)
    # Results stored before 0003: the newest successful one per machine and point.
    op.execute(
        "INSERT INTO latest_results (machine_id, kernel_id, params_key, result_id, created_at)"
        " SELECT machine_id, kernel_id, params_key, id, created_at FROM ("
        "  SELECT machine_id, kernel_id, params_key, id, created_at, ROW_NUMBER() OVER ("
        "   PARTITION BY machine_id, kernel_id, params_key ORDER BY created_at DESC, id DESC) AS rn"
        "  FROM results WHERE status = 'ok' AND median IS NOT NULL) AS ranked"
        " WHERE rn = 1"
    )
    # Only ADD COLUMN (see 0002: a recreated table would cascade-delete on SQLite).
    with op.batch_alter_table("shares", schema=None, recreate="never") as batch_op:
        batch_op.add_column(sa.Column("compare", sa.JSON(), nullable=True))
        batch_op.create_index(batch_op.f("ix_shares_created_at"), ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("shares", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_shares_created_at"))
        batch_op.drop_column("compare")
    with op.batch_alter_table("latest_results", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_latest_results_result_id"))
    op.drop_table("latest_results")
