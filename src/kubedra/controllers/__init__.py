"""Control loops of ``kubedra controller-manager``: the ResourceClaim controller
(``resourceclaim``), the Job and TTL-after-finished controllers (``job/``) and their
Prometheus metrics (``metrics``), over the client's keyed work queue
(:mod:`kubedra.client.workqueue`). Garbage collection runs inside the API server
(``apiserver/gc.py``)."""
