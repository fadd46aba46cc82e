"""enrollment: machines.enroll_key_hash, so that a retried Enroll whose answer was lost gets a credential"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    # Only ADD COLUMN (a recreated machines table would cascade-delete its catalog and runs on SQLite).
    # Every machine stored before has enrolled already, or never will with a key: NULL.
    with op.batch_alter_table("machines", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("enroll_key_hash", sa.String(length=128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("machines", recreate="never") as batch_op:
        batch_op.drop_column("enroll_key_hash")
