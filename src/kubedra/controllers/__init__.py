"""Control loops of ``kubedra controller-manager``: the ResourceClaim controller
(``resourceclaim``), the Job and TTL-after-finished controllers (``job/``), the keyed work
queue they share (``workqueue``) and their Prometheus metrics (``metrics``). Garbage
collection runs inside the API server (``apiserver/gc.py``)."""
