"""Database helpers below the domains: SQLite's one writer, bulk inserts, JSON encoded once,
text the database can hold."""
