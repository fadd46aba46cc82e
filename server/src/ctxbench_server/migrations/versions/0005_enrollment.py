"""enrollment: join tokens, per-machine credential hash and status"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "join_tokens",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("uses_left", sa.Integer(), nullable=False),
        sa.Column("uses", sa.Integer(), nullable=False),
        sa.Column("revoked", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_join_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_join_tokens_token_hash")),
    )
    # Only ADD COLUMN (see 0002: a recreated machines table would cascade-delete on SQLite).
    with op.batch_alter_table("machines", schema=None, recreate="never") as batch_op:
        batch_op.add_column(
            sa.Column("status", sa.String(length=16), server_default="active", nullable=False)
        )
        batch_op.create_index(batch_op.f("ix_machines_token_hash"), ["token_hash"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("machines", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_machines_token_hash"))
        batch_op.drop_column("status")
    op.drop_table("join_tokens")
