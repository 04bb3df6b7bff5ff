"""Benchmarks: each prints a one-line summary and can write JSON (``--json FILE``)."""
