"""Typed API objects, Quantity, semver and the kinds table. Imports nothing of ours."""
