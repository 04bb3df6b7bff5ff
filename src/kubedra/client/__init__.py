"""Async REST client, kubeconfig loading, informers and the keyed work queue: the only way
components reach the API server."""
