"""The allocator's feature set, as upstream's ``structured.Features``: what the era's gates
enable in allocation. The scheduler derives it from its release's gates."""

from __future__ import annotations

from dataclasses import dataclass

from kubedra.api.features import FeatureGates


@dataclass(frozen=True, slots=True)
class Features:
    admin_access: bool = False
    prioritized_list: bool = False
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding: bool = False
    device_status: bool = False
    consumable_capacity: bool = False

    @classmethod
    def from_gates(cls, gates: FeatureGates) -> Features:
        """As the 1.34 scheduler fills ``structured.Features`` from its gates."""
        return cls(
            admin_access=gates.dra_admin_access,
            prioritized_list=gates.dra_prioritized_list,
            partitionable_devices=gates.dra_partitionable_devices,
            device_taints=gates.dra_device_taints,
            device_binding=gates.dra_device_binding_conditions,
            device_status=gates.dra_resource_claim_device_status,
            consumable_capacity=gates.dra_consumable_capacity,
        )
