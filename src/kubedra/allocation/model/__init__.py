"""What the allocator reads from one structured model's API objects: pools and devices from
slices, uses from allocation results, requests from a claim and its class, results back into
the claim. :mod:`.namedresources` (with :mod:`.parameters`) is the ``resource.k8s.io/v1alpha2``
named-resources model, :mod:`.devices` (with :mod:`.devicecel`) the ``resource.k8s.io/v1``
devices model."""
