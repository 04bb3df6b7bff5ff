"""The etcd v3 backend: kube-apiserver's storage on a real etcd cluster."""

from kubedra.storage.etcd.client import EtcdConfig, EtcdConfigError
from kubedra.storage.etcd.store import EtcdStore

__all__ = ["EtcdConfig", "EtcdConfigError", "EtcdStore"]
