"""The built-in Job controller and the TTL-after-finished controller.

``controller`` (informers, queues, the managedBy skip) drives ``sync`` (one reconciliation:
counting, failure detection, pod creation/deletion), which hands finished pods to
``tracking`` (finalizer-based counting, terminal conditions); both judge pods through
``rules`` and use ``podcontrol`` (pod writes), ``pods`` (pod predicates), ``indexed`` (index
sets and strings), ``failure_policy``, ``backoff``, ``expectations`` and ``conditions``;
``ttl`` deletes finished Jobs whose ``ttlSecondsAfterFinished`` has passed.
"""
