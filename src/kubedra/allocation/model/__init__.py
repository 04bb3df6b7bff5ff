"""What the allocator reads from one structured model's API objects: pools and devices from
slices, requests from a claim and its class, results back into an AllocationResult.
:mod:`.devices` is the ``resource.k8s.io/v1`` devices model."""
