"""short samples: runs.sample_time_s (RunItem.sample_time_s, kernel --sample-time), results.estimator"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    # Only ADD COLUMN (see 0002: a recreated runs table would cascade-delete on SQLite). Runs stored
    # before keep null: their repetitions were one long sample each.
    with op.batch_alter_table("runs", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("sample_time_s", sa.Float(), nullable=True))
    # What a result's samples are (harness.estimator): null for every result stored before, long samples.
    with op.batch_alter_table("results", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("estimator", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results", recreate="never") as batch_op:
        batch_op.drop_column("estimator")
    with op.batch_alter_table("runs", recreate="never") as batch_op:
        batch_op.drop_column("sample_time_s")
