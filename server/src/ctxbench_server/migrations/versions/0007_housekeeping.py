"""housekeeping: machines.display_name and agent_name, runs.name and note, batches (name and note)"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    # Only ADD COLUMN (see 0002: a recreated machines or runs table would cascade-delete on SQLite).
    with op.batch_alter_table("machines", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("display_name", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("agent_name", sa.String(length=255), nullable=True))
    with op.batch_alter_table("runs", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("name", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("note", sa.String(length=4000), nullable=True))
    op.create_table(
        "batches",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("note", sa.String(length=4000), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_batches")),
    )


def downgrade() -> None:
    op.drop_table("batches")
    with op.batch_alter_table("runs", recreate="never") as batch_op:
        batch_op.drop_column("note")
        batch_op.drop_column("name")
    with op.batch_alter_table("machines", recreate="never") as batch_op:
        batch_op.drop_column("agent_name")
        batch_op.drop_column("display_name")
