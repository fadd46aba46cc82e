"""GET /metrics: the fleet and its newest figures in the OpenMetrics text format (Prometheus scrapes it)."""
