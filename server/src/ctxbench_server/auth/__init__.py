"""Access control. A stub on the fleet branch: the auth branch brings the real package."""
