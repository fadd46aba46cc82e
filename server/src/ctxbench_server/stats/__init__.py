"""Per-result statistics: the summary, its bootstrap CI, the interference beside it, and the worker
pool that computes them."""
