"""core/v1: Namespace, Node, Pod, Binding, Event, Service, ServiceAccount and the types
they share.

Field names, JSON keys and "always written" keys follow ``k8s.io/api/core/v1`` at v0.30.0.
Fields the scheduler, kubelet and controllers act on are typed; the rest of the Pod surface
(volumes, probes, security contexts, ...) is kept as raw JSON so that objects clients send
survive a round trip unchanged. Struct-valued keys without ``omitempty`` (``spec``,
``status``, ``resources``, ``source``) are always written, as Go writes them (``{}``).
Timestamps are RFC 3339 strings as in :mod:`kubedra.api.meta`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubedra.api.base import Int32, Int64, Model, always, required_list
from kubedra.api.meta import ListMeta, ObjectMeta, TypedObject
from kubedra.api.quantity import Quantity

ResourceList = dict[str, Quantity]
RawObject = dict[str, Any]

# --- shared -----------------------------------------------------------------------------------


class ObjectReference(Model):
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class LocalObjectReference(Model):
    name: str | None = None


# Node selector operators (NodeSelectorRequirement.operator).
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


class NodeSelectorRequirement(Model):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class NodeSelectorTerm(Model):
    """Requirements ANDed together; ``matchFields`` supports only ``metadata.name``."""

    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


class NodeSelector(Model):
    """Terms ORed together (used by pod affinity, ResourceClass.suitableNodes and
    AllocationResult.availableOnNodes)."""

    node_selector_terms: list[NodeSelectorTerm] = required_list()


# --- Namespace --------------------------------------------------------------------------------


class NamespaceSpec(Model):
    finalizers: list[str] | None = None


class NamespaceStatus(Model):
    phase: str | None = None  # Active | Terminating
    conditions: list[RawObject] | None = None


class Namespace(TypedObject):
    spec: NamespaceSpec = msgspec.field(default_factory=NamespaceSpec)
    status: NamespaceStatus = msgspec.field(default_factory=NamespaceStatus)


class NamespaceList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[Namespace] = required_list()


# --- Node -------------------------------------------------------------------------------------

LABEL_HOSTNAME = "kubernetes.io/hostname"
"""The node's name as a label (upstream ``v1.LabelHostname``): what an allocation's node
selector and topology spreading by node match."""
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


class Taint(Model):
    key: str = ""
    value: str | None = None
    effect: str = ""
    time_added: str | None = None


class NodeSpec(Model):
    pod_cidr: str | None = msgspec.field(default=None, name="podCIDR")
    pod_cidrs: list[str] | None = msgspec.field(default=None, name="podCIDRs")
    provider_id: str | None = msgspec.field(default=None, name="providerID")
    unschedulable: bool | None = None
    taints: list[Taint] | None = None
    config_source: RawObject | None = None
    external_id: str | None = msgspec.field(default=None, name="externalID")


class NodeCondition(Model):
    type: str = ""
    status: str = ""
    last_heartbeat_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


class NodeAddress(Model):
    type: str = ""
    address: str = ""


class NodeSystemInfo(Model):
    """Every key is written even when empty (the official client requires them all)."""

    machine_id: str = always("", name="machineID")
    system_uuid: str = always("", name="systemUUID")
    boot_id: str = always("", name="bootID")
    kernel_version: str = always("")
    os_image: str = always("")
    container_runtime_version: str = always("")
    kubelet_version: str = always("")
    kube_proxy_version: str = always("")
    operating_system: str = always("")
    architecture: str = always("")


class NodeStatus(Model):
    capacity: ResourceList | None = None
    allocatable: ResourceList | None = None
    phase: str | None = None
    conditions: list[NodeCondition] | None = None
    addresses: list[NodeAddress] | None = None
    daemon_endpoints: RawObject | None = None
    node_info: NodeSystemInfo | None = None
    images: list[RawObject] | None = None
    volumes_in_use: list[str] | None = None
    volumes_attached: list[RawObject] | None = None
    config: RawObject | None = None
    runtime_handlers: list[RawObject] | None = None


class Node(TypedObject):
    spec: NodeSpec = msgspec.field(default_factory=NodeSpec)
    status: NodeStatus = msgspec.field(default_factory=NodeStatus)


class NodeList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[Node] = required_list()


# --- Pod: scheduling constraints --------------------------------------------------------------


class PreferredSchedulingTerm(Model):
    weight: Int32 = always(0)
    preference: NodeSelectorTerm = msgspec.field(default_factory=NodeSelectorTerm)


class NodeAffinity(Model):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = (
        None
    )


class Affinity(Model):
    """Node affinity is typed; pod (anti-)affinity is kept as raw JSON."""

    node_affinity: NodeAffinity | None = None
    pod_affinity: RawObject | None = None
    pod_anti_affinity: RawObject | None = None


class Toleration(Model):
    key: str | None = None
    operator: str | None = None  # Exists | Equal (empty means Equal)
    value: str | None = None
    effect: str | None = None
    toleration_seconds: Int64 | None = None


class PodSchedulingGate(Model):
    name: str = ""


class ClaimSource(Model):
    """v1.30's reference: exactly one of the two names must be set (validated, not enforced
    by the type)."""

    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodResourceClaim(Model):
    """Both releases' shapes, as a GA type carries gated fields: v1.30 names the claim in
    ``source``, v1.34 at the top level. The Pod strategy keeps only the serving release's
    (``registry/strategies/podfields.py``); readers go through
    :mod:`kubedra.api.resourceclaim`."""

    name: str = ""
    source: ClaimSource | None = None  # v1.30 only
    resource_claim_name: str | None = None  # v1.34 only
    resource_claim_template_name: str | None = None  # v1.34 only


# --- Pod: containers --------------------------------------------------------------------------


class ResourceClaim(Model):
    """A container's reference to one of ``pod.spec.resourceClaims`` by name; from v1.34,
    optionally to one ``request`` of that claim."""

    name: str = ""
    request: str | None = None  # v1.34 only


class ResourceRequirements(Model):
    limits: ResourceList | None = None
    requests: ResourceList | None = None
    claims: list[ResourceClaim] | None = None


class EnvVar(Model):
    name: str = ""
    value: str | None = None
    value_from: RawObject | None = None


class ContainerPort(Model):
    name: str | None = None
    host_port: Int32 | None = None
    container_port: Int32 = always(0)
    protocol: str | None = None
    host_ip: str | None = msgspec.field(default=None, name="hostIP")


class Container(Model):
    name: str = ""
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = None
    ports: list[ContainerPort] | None = None
    env_from: list[RawObject] | None = None
    env: list[EnvVar] | None = None
    resources: ResourceRequirements = msgspec.field(default_factory=ResourceRequirements)
    resize_policy: list[RawObject] | None = None
    restart_policy: str | None = None
    volume_mounts: list[RawObject] | None = None
    volume_devices: list[RawObject] | None = None
    liveness_probe: RawObject | None = None
    readiness_probe: RawObject | None = None
    startup_probe: RawObject | None = None
    lifecycle: RawObject | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    image_pull_policy: str | None = None
    security_context: RawObject | None = None
    stdin: bool | None = None
    stdin_once: bool | None = None
    tty: bool | None = None


# --- Pod --------------------------------------------------------------------------------------


class PodSpec(Model):
    volumes: list[RawObject] | None = None
    init_containers: list[Container] | None = None
    containers: list[Container] = required_list()
    ephemeral_containers: list[RawObject] | None = None
    restart_policy: str | None = None
    termination_grace_period_seconds: Int64 | None = None
    active_deadline_seconds: Int64 | None = None
    dns_policy: str | None = None
    node_selector: dict[str, str] | None = None
    service_account_name: str | None = None
    service_account: str | None = None
    automount_service_account_token: bool | None = None
    node_name: str | None = None
    host_network: bool | None = None
    host_pid: bool | None = msgspec.field(default=None, name="hostPID")
    host_ipc: bool | None = msgspec.field(default=None, name="hostIPC")
    share_process_namespace: bool | None = None
    security_context: RawObject | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    hostname: str | None = None
    subdomain: str | None = None
    affinity: Affinity | None = None
    scheduler_name: str | None = None
    tolerations: list[Toleration] | None = None
    host_aliases: list[RawObject] | None = None
    priority_class_name: str | None = None
    priority: Int32 | None = None
    dns_config: RawObject | None = None
    readiness_gates: list[RawObject] | None = None
    runtime_class_name: str | None = None
    enable_service_links: bool | None = None
    preemption_policy: str | None = None
    overhead: ResourceList | None = None
    topology_spread_constraints: list[RawObject] | None = None
    set_hostname_as_fqdn: bool | None = msgspec.field(default=None, name="setHostnameAsFQDN")
    os: RawObject | None = None
    host_users: bool | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None
    resource_claims: list[PodResourceClaim] | None = None


class PodCondition(Model):
    type: str = ""
    status: str = ""
    last_probe_time: str | None = always(None)
    last_transition_time: str | None = always(None)
    reason: str | None = None
    message: str | None = None


class PodIP(Model):
    ip: str | None = None


def _empty_object() -> RawObject:
    return {}


class ContainerStatus(Model):
    """Keys without ``omitempty`` upstream (``ready``, ``restartCount``, ``imageID``,
    ``state``, ...) are always written; the official client rejects statuses without them."""

    name: str = always("")
    state: RawObject = msgspec.field(default_factory=_empty_object)
    last_state: RawObject = msgspec.field(default_factory=_empty_object)
    ready: bool = always(False)
    restart_count: Int32 = always(0)
    image: str = always("")
    image_id: str = always("", name="imageID")
    container_id: str | None = msgspec.field(default=None, name="containerID")
    started: bool | None = None
    allocated_resources: ResourceList | None = None
    resources: ResourceRequirements | None = None
    volume_mounts: list[RawObject] | None = None


class PodResourceClaimStatus(Model):
    name: str = ""
    resource_claim_name: str | None = None


class PodStatus(Model):
    phase: str | None = None
    conditions: list[PodCondition] | None = None
    message: str | None = None
    reason: str | None = None
    nominated_node_name: str | None = None
    host_ip: str | None = msgspec.field(default=None, name="hostIP")
    host_ips: list[PodIP] | None = msgspec.field(default=None, name="hostIPs")
    pod_ip: str | None = msgspec.field(default=None, name="podIP")
    pod_ips: list[PodIP] | None = msgspec.field(default=None, name="podIPs")
    start_time: str | None = None
    init_container_statuses: list[ContainerStatus] | None = None
    container_statuses: list[ContainerStatus] | None = None
    qos_class: str | None = msgspec.field(default=None, name="qosClass")
    ephemeral_container_statuses: list[ContainerStatus] | None = None
    resize: str | None = None
    resource_claim_statuses: list[PodResourceClaimStatus] | None = None


class Pod(TypedObject):
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)


class PodList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[Pod] = required_list()


class PodTemplateSpec(Model):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)


class Binding(TypedObject):
    """The body of ``POST pods/<name>/binding``: assigns the pod to ``target`` (a Node)."""

    target: ObjectReference = msgspec.field(default_factory=ObjectReference)


# --- Event ------------------------------------------------------------------------------------


class EventSource(Model):
    component: str | None = None
    host: str | None = None


class Event(TypedObject):
    """core/v1 Event. ``eventTime`` is a MicroTime (``2024-05-01T10:00:00.000000Z``)."""

    involved_object: ObjectReference = msgspec.field(default_factory=ObjectReference)
    reason: str | None = None
    message: str | None = None
    source: EventSource = msgspec.field(default_factory=EventSource)
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    count: Int32 | None = None
    type: str | None = None  # Normal | Warning
    event_time: str | None = None
    series: RawObject | None = None
    action: str | None = None
    related: ObjectReference | None = None
    reporting_component: str = always("")
    reporting_instance: str = always("")


class EventList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[Event] = required_list()


# --- Service ----------------------------------------------------------------------------------


class ServicePort(Model):
    name: str | None = None
    protocol: str | None = None
    app_protocol: str | None = None
    port: int = always(0)
    target_port: int | str | None = None
    node_port: int | None = None


class ServiceSpec(Model):
    ports: list[ServicePort] | None = None
    selector: dict[str, str] | None = None
    cluster_ip: str | None = msgspec.field(default=None, name="clusterIP")
    cluster_ips: list[str] | None = msgspec.field(default=None, name="clusterIPs")
    type: str | None = None
    external_ips: list[str] | None = msgspec.field(default=None, name="externalIPs")
    session_affinity: str | None = None
    external_name: str | None = None
    ip_families: list[str] | None = None
    ip_family_policy: str | None = None
    internal_traffic_policy: str | None = None


class ServiceStatus(Model):
    load_balancer: RawObject = msgspec.field(default_factory=_empty_object)


class Service(TypedObject):
    spec: ServiceSpec = msgspec.field(default_factory=ServiceSpec)
    status: ServiceStatus = msgspec.field(default_factory=ServiceStatus)


class ServiceList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[Service] = required_list()


# --- ServiceAccount ---------------------------------------------------------------------------


class ServiceAccount(TypedObject):
    secrets: list[ObjectReference] | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    automount_service_account_token: bool | None = None


class ServiceAccountList(Model):
    api_version: str = ""
    kind: str = ""
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[ServiceAccount] = required_list()
