"""results: a partial index of results whose CI of the median is not filled in yet (ingest/ci.py)"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0015"

_PENDING = sa.text("ci_method IS NULL")


def upgrade() -> None:
    op.create_index(
        "ix_results_ci_pending",
        "results",
        ["status"],
        sqlite_where=_PENDING,
        postgresql_where=_PENDING,
    )


def downgrade() -> None:
    op.drop_index("ix_results_ci_pending", table_name="results")
