"""Command-line wiring of every component."""
