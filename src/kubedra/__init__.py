"""kubedra: Kubernetes Dynamic Resource Allocation with structured parameters, in Python."""

__version__ = "0.1.0"
