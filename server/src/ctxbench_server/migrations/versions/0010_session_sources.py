"""session sources: auth_sessions.id, source, admin_fp, last_used_at; login_codes.admin_fp"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"


def _create_sessions(new_columns: list[sa.Column[object]]) -> None:
    """auth_sessions as 0004 made it, plus `new_columns` (and the unique public id when among them)."""
    op.create_table(
        "auth_sessions",
        sa.Column("id_hash", sa.String(length=64), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("token_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        *new_columns,
        sa.ForeignKeyConstraint(
            ["token_id"],
            ["api_tokens.id"],
            name=op.f("fk_auth_sessions_token_id_api_tokens"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id_hash", name=op.f("pk_auth_sessions")),
        *([sa.UniqueConstraint("id", name=op.f("uq_auth_sessions_id"))] if new_columns else []),
    )
    with op.batch_alter_table("auth_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_auth_sessions_expires_at"), ["expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_auth_sessions_token_id"), ["token_id"], unique=False)


def upgrade() -> None:
    # A session stored before says nothing of the admin token it was made from, so none can be checked
    # against the server's: all end (browsers sign in again), and the table is made anew in its new shape
    # (nothing refers to it; SQLite cannot add a NOT NULL column to a table in place).
    op.drop_table("auth_sessions")
    _create_sessions(
        [
            sa.Column("id", sa.String(length=36), nullable=False),
            sa.Column("source", sa.String(length=16), nullable=False),
            sa.Column("admin_fp", sa.String(length=32), nullable=True),
            sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        ]
    )
    # Only ADD COLUMN: codes made before keep null (good with any admin token, for their last hours).
    with op.batch_alter_table("login_codes", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("admin_fp", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("login_codes", recreate="never") as batch_op:
        batch_op.drop_column("admin_fp")
    op.drop_table("auth_sessions")
    _create_sessions([])
