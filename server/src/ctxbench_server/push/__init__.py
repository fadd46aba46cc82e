"""The explorer's push channel (GET /api/v1/events): change events for machines, runs and batches."""
