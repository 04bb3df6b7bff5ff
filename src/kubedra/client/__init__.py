"""Async REST client, kubeconfig loading and informers: the only way components reach the
API server."""
