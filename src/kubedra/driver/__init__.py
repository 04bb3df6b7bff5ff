"""SDK for writing DRA drivers in Python."""
