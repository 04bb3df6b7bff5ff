"""HTTP API server with Kubernetes REST semantics over a Store.

Request path: ``app`` (auth, in-flight limit, errors, metrics, fixed paths) → ``handlers``
(routing by RequestInfo, query parsing, watch streams, tables) → ``rest`` (the generic
registry: get/list/create/update/delete over the store) → ``admission`` (decode, defaults,
strategy, validation) with ``registry`` + ``strategies`` per kind. Around it: ``hub`` (one store
watch fanned out to every watcher), ``gc`` (ownerReferences, finalizers, namespaces), ``auth``
(tokens, Node authorizer), ``discovery``, ``openapi``, ``patching`` (dispatch to ``patch``).
"""
