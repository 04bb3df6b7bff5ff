"""HTTP API server with Kubernetes REST semantics over a Store."""
