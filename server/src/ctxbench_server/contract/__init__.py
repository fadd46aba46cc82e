"""The kernel contract as the server reads it: the CLI schema, typed parameters, and renamed kernel ids."""
