"""initial tables"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:

    op.create_table(
        "kernels",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_kernels")),
    )
    op.create_table(
        "machines",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("hostname", sa.String(length=255), nullable=False),
        sa.Column("agent_version", sa.String(length=64), nullable=False),
        sa.Column("token_hash", sa.String(length=128), nullable=True),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("facts", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_machines")),
    )
    with op.batch_alter_table("machines", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_machines_last_seen"), ["last_seen"], unique=False)

    op.create_table(
        "shares",
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("view", sa.JSON(), nullable=False),
        sa.Column("result_ids", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("slug", name=op.f("pk_shares")),
    )
    op.create_table(
        "machine_kernels",
        sa.Column("machine_id", sa.String(length=64), nullable=False),
        sa.Column("kernel_id", sa.String(length=200), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["kernel_id"],
            ["kernels.id"],
            name=op.f("fk_machine_kernels_kernel_id_kernels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["machine_id"],
            ["machines.id"],
            name=op.f("fk_machine_kernels_machine_id_machines"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("machine_id", "kernel_id", name=op.f("pk_machine_kernels")),
    )
    with op.batch_alter_table("machine_kernels", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_machine_kernels_kernel_id"), ["kernel_id"], unique=False)

    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("machine_id", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("facts", sa.JSON(), nullable=True),
        sa.Column("repetitions", sa.Integer(), nullable=True),
        sa.Column("min_time_s", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name=op.f("fk_runs_machine_id_machines"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_runs_created_at"), ["created_at"], unique=False)
        batch_op.create_index(
            "ix_runs_machine_status_created", ["machine_id", "status", "created_at"], unique=False
        )

    op.create_table(
        "run_items",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("run_id", sa.String(length=36), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("kernel_id", sa.String(length=200), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("result_id", sa.String(length=36), nullable=True),
        sa.Column("timeout_s", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_items_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_items")),
        sa.UniqueConstraint("run_id", "index", name=op.f("uq_run_items_run_id")),
    )
    op.create_table(
        "results",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("run_id", sa.String(length=36), nullable=False),
        sa.Column("item_id", sa.String(length=36), nullable=False),
        sa.Column("machine_id", sa.String(length=64), nullable=False),
        sa.Column("kernel_id", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("params_key", sa.String(length=1024), nullable=False),
        sa.Column("unit", sa.String(length=32), nullable=False),
        sa.Column("samples", sa.JSON(), nullable=False),
        sa.Column("iterations", sa.JSON(), nullable=False),
        sa.Column("counters", sa.JSON(), nullable=False),
        sa.Column("harness", sa.JSON(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("median", sa.Float(), nullable=True),
        sa.Column("mean", sa.Float(), nullable=True),
        sa.Column("stddev", sa.Float(), nullable=True),
        sa.Column("cv", sa.Float(), nullable=True),
        sa.Column("min", sa.Float(), nullable=True),
        sa.Column("max", sa.Float(), nullable=True),
        sa.Column("ci_low", sa.Float(), nullable=True),
        sa.Column("ci_high", sa.Float(), nullable=True),
        sa.Column("ci_method", sa.String(length=128), nullable=True),
        sa.Column("exit_code", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("stderr_tail", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"], ["run_items.id"], name=op.f("fk_results_item_id_run_items"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["machine_id"], ["machines.id"], name=op.f("fk_results_machine_id_machines"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_results_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_results")),
    )
    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_results_item_id"), ["item_id"], unique=False)
        batch_op.create_index(
            "ix_results_kernel_machine_params",
            ["kernel_id", "machine_id", "params_key", "created_at"],
            unique=False,
        )
        batch_op.create_index(batch_op.f("ix_results_run_id"), ["run_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("results", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_results_run_id"))
        batch_op.drop_index("ix_results_kernel_machine_params")
        batch_op.drop_index(batch_op.f("ix_results_item_id"))

    op.drop_table("results")
    op.drop_table("run_items")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_machine_status_created")
        batch_op.drop_index(batch_op.f("ix_runs_created_at"))

    op.drop_table("runs")
    with op.batch_alter_table("machine_kernels", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_machine_kernels_kernel_id"))

    op.drop_table("machine_kernels")
    op.drop_table("shares")
    with op.batch_alter_table("machines", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_machines_last_seen"))

    op.drop_table("machines")
    op.drop_table("kernels")
