"""HTTP API server with Kubernetes REST semantics over a Store.

Request path: ``app`` (auth, in-flight limit, errors, metrics, fixed paths) → ``handlers``
(HTTP only: routing by RequestInfo, one method per verb, tables) with ``params`` (every
request option) and ``watch`` (watch streams) → ``rest`` (the generic registry: get/list/
create/update/delete over the store) → ``admission`` (the write pipeline of
:mod:`kubedra.registry`, its rejections as Status answers) with ``registry`` per resource.
Around it: ``hub`` (one store watch fanned out to every watcher), ``gc`` (ownerReferences,
finalizers, namespaces), ``auth`` (tokens, Node authorizer), ``discovery``, ``openapi`` and
``patch`` (the patch engines and their dispatch).
"""
