"""Async REST client, kubeconfig loading and informers."""
