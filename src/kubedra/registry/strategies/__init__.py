"""Registry strategies: per-kind create/update/status hooks (see :mod:`.base`)."""
