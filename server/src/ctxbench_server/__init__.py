"""ctxbench server."""
