"""Authorization: the ``--authorization-mode`` chain (Node, RBAC, AlwaysAllow), NodeRestriction
admission, RBAC escalation prevention, the bootstrap policy, ClusterRole aggregation and the
access reviews behind ``kubectl auth can-i``."""
