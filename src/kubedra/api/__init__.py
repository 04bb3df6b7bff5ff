"""Typed API objects, Quantity, semver and the resource table. Imports nothing of ours."""
