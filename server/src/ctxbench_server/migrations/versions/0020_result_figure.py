"""results.figure: the compared figure (stats/figure.py), the median of long samples and a low quantile of
short samples' repetitions; short-sample results' CIs become pending, so the filler writes their figure's"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"

# Copied, not imported: a migration keeps the rule of its day (stats/figure.py may change later).
FIGURE_QUANTILE = 0.05
BATCH = 1000


def _quantile(samples: list[float], q: float) -> float | None:
    a = sorted(float(x) for x in samples)
    if not a:
        return None
    pos = (len(a) - 1) * q
    i = int(pos)
    j = min(i + 1, len(a) - 1)
    return a[i] + (a[j] - a[i]) * (pos - i)


def upgrade() -> None:
    # Only ADD COLUMN (a recreated results table would lose nothing here, but costs a copy of every row).
    with op.batch_alter_table("results", recreate="never") as batch_op:
        batch_op.add_column(sa.Column("figure", sa.Float(), nullable=True))
    bind = op.get_bind()
    bind.execute(sa.text("UPDATE results SET figure = median WHERE estimator IS NULL"))
    # Short-sample results: their figure from their samples, and their CI (of the median until now)
    # pending again: ingest/ci.py's filler computes the figure's, as it does for a new result.
    last = ""
    while True:
        rows = bind.execute(
            sa.text(
                "SELECT id, samples FROM results WHERE estimator IS NOT NULL AND median IS NOT NULL"
                " AND id > :last ORDER BY id LIMIT :batch"
            ),
            {"last": last, "batch": BATCH},
        ).all()
        if not rows:
            break
        values = []
        for rid, samples in rows:
            xs = json.loads(samples) if isinstance(samples, str) else samples
            values.append({"rid": rid, "figure": _quantile(xs or [], FIGURE_QUANTILE)})
        bind.execute(
            sa.text(
                "UPDATE results SET figure = :figure, ci_low = NULL, ci_high = NULL, ci_method = NULL"
                " WHERE id = :rid"
            ),
            values,
        )
        last = rows[-1][0]


def downgrade() -> None:
    with op.batch_alter_table("results", recreate="never") as batch_op:
        batch_op.drop_column("figure")
