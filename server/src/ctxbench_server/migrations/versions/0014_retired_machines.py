"""retired machines: retired_machines (ids revoked then deleted, refused by Enroll for good)"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    op.create_table(
        "retired_machines",
        sa.Column("machine_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_by", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("machine_id", name=op.f("pk_retired_machines")),
    )


def downgrade() -> None:
    op.drop_table("retired_machines")
