"""Control loops: ResourceClaim, Job and garbage collection."""
