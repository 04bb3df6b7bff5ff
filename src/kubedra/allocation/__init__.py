"""Structured allocation, both models: free-instance index, joint allocation, explanations.

Pure and synchronous (no I/O). Modules, one job each:

* :mod:`.index` — :class:`~.index.AllocationIndex`, fed with slice and claim events (informer,
  assumed and in-flight copies: :mod:`.claimcopies`, shared with the devices model); free
  instances per node+driver, free counts for scoring, nodes with free matching instances for
  pre-selection.
* :mod:`.model.namedresources` — what the engine reads from the named-resources objects:
  instances from a slice, the instances an allocation holds, :func:`plan_claim` (one claim's
  requests per driver, selectors compiled once) and the AllocationResult written back;
  :mod:`.model.parameters` — :class:`~.model.parameters.ParameterStore`: class/claim
  parameters by reference or ``generatedFrom``, upstream defaults and error texts.
* :mod:`.engine` — :class:`~.engine.PodAllocator`: per pod ``filter(node)``, ``allocate``,
  ``reserve``, ``commit``/``release``; all the pod's claims are matched together, and only it
  moves claims through in flight and assumed. :mod:`.verdicts` shares its per-node verdicts
  between pods that ask for the same thing, in :mod:`.verdictcache` (both models' cache).
* :mod:`.podclaims` — a pod's claims as the scheduler checks them: the per-pod checks
  (``prepare``) and per-node reason shared by the scheduler and the simulator (names,
  ownership, reservations and claims from templates are :mod:`kubedra.api.resourceclaim`).
* :mod:`.matching` (first-fit, then complete matching), :mod:`.pool`, :mod:`.selectors`
  (compiled selectors; the compiler is given), :mod:`.instance` (the bottom: one instance and
  its verdict cache), :mod:`.celadapter` (CEL as the compiler).
* :mod:`.explain`, :mod:`.simulate`, :mod:`.autoscale` — offline answers for the CLI.

The devices model (``resource.k8s.io/v1``): :mod:`.deviceallocator` (upstream's
``Allocate(node, claims)``: checks, texts, results) over :mod:`.search` (the complete search:
prioritized choices, ``matchAttribute`` value groups, matching), :mod:`.model.devices` (pools,
devices, verdicts, nodeSelector, configuration), :mod:`.model.devicecel` (CEL's ``device``
environment) and :mod:`.features` (upstream's ``structured.Features``); a pod's cycle over it
in :mod:`.devicepod`, whose per-node verdicts :mod:`.deviceverdicts` shares between pods that
ask for the same thing while the node's pools stay as they were.

The modules are layered (import-linter contract in ``pyproject.toml``): autoscale > simulate >
explain, podclaims, verdicts > devicepod > engine, deviceallocator, deviceverdicts > index,
deviceclaims > celadapter, model, verdictcache, claimcopies > pool, search, features >
selectors, matching > instance.
"""
