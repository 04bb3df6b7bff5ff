"""Pod templates in workload objects: the core/v1 defaults and a subset of validation.

Defaults are ``SetDefaults_PodSpec`` / ``SetDefaults_Container`` (v1.30) for the typed fields.
Validation covers what controllers rely on (containers, names, images, pull and restart
policies, DNS policy, labels, deadlines), with upstream paths and texts; the rest of
``ValidatePodSpec`` (volumes' sources, probes, security contexts, ...) is not checked.
"""

from __future__ import annotations

from kubedra.api.core import Container, PodSpec, PodTemplateSpec
from kubedra.validation.field import (
    ErrorList,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kubedra.validation.meta import validate_labels, validate_template_object_meta
from kubedra.validation.names import is_dns1123_label

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_MAX_INT32 = 2**31 - 1


# --- defaults -----------------------------------------------------------------------------------


def _image_tag(image: str) -> str:
    """The tag ``ParseImageName`` finds: ``latest`` when there is neither tag nor digest."""
    name, at, _digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        return last.rsplit(":", 1)[1]
    return "" if at else "latest"


def default_container(c: Container) -> None:
    if not c.image_pull_policy:
        c.image_pull_policy = "Always" if _image_tag(c.image or "") == "latest" else "IfNotPresent"
    if not c.termination_message_path:
        c.termination_message_path = "/dev/termination-log"
    if not c.termination_message_policy:
        c.termination_message_policy = "File"
    for port in c.ports or ():
        if not port.protocol:
            port.protocol = "TCP"


def default_pod_spec(spec: PodSpec) -> None:
    if not spec.dns_policy:
        spec.dns_policy = "ClusterFirst"
    if not spec.restart_policy:
        spec.restart_policy = "Always"
    if spec.termination_grace_period_seconds is None:
        spec.termination_grace_period_seconds = 30
    if spec.security_context is None:
        spec.security_context = {}
    if not spec.scheduler_name:
        spec.scheduler_name = "default-scheduler"
    for c in (*(spec.init_containers or ()), *spec.containers):
        default_container(c)


# --- validation ---------------------------------------------------------------------------------


def _validate_container(c: Container, path: Path, names: set[str], errs: ErrorList) -> None:
    if not c.name:
        errs.append(required(path.child("name")))
    else:
        errs.extend(invalid(path.child("name"), c.name, m) for m in is_dns1123_label(c.name))
        if c.name in names:
            errs.append(duplicate(path.child("name"), c.name))
        names.add(c.name)
    if not c.image:
        errs.append(required(path.child("image")))
    policy = c.termination_message_policy or ""
    if not policy:
        errs.append(
            required(
                path.child("terminationMessagePolicy"), "must be 'File' or 'FallbackToLogsOnError'"
            )
        )
    elif policy not in TERMINATION_MESSAGE_POLICIES:
        errs.append(
            invalid(
                path.child("terminationMessagePolicy"),
                policy,
                "must be 'File' or 'FallbackToLogsOnError'",
            )
        )
    pull = c.image_pull_policy or ""
    if not pull:
        errs.append(required(path.child("imagePullPolicy")))
    elif pull not in PULL_POLICIES:
        errs.append(not_supported(path.child("imagePullPolicy"), pull, PULL_POLICIES))


def _validate_choice(value: str | None, path: Path, choices: tuple[str, ...]) -> ErrorList:
    if not value:
        return [required(path)]
    if value not in choices:
        return [not_supported(path, value, choices)]
    return []


def validate_pod_spec(spec: PodSpec, path: Path) -> ErrorList:
    errs: ErrorList = []
    volumes: set[str] = set()
    for i, volume in enumerate(spec.volumes or ()):
        name = str(volume.get("name") or "")
        p = path.child("volumes").index(i).child("name")
        if not name:
            errs.append(required(p))
        else:
            errs.extend(invalid(p, name, m) for m in is_dns1123_label(name))
            if name in volumes:
                errs.append(duplicate(p, name))
            volumes.add(name)
    names: set[str] = set()
    for i, c in enumerate(spec.init_containers or ()):
        _validate_container(c, path.child("initContainers").index(i), names, errs)
    if not spec.containers:
        errs.append(required(path.child("containers")))
    for i, c in enumerate(spec.containers):
        _validate_container(c, path.child("containers").index(i), names, errs)
    errs += _validate_choice(spec.restart_policy, path.child("restartPolicy"), RESTART_POLICIES)
    errs += _validate_choice(spec.dns_policy, path.child("dnsPolicy"), DNS_POLICIES)
    errs += validate_labels(spec.node_selector, path.child("nodeSelector"))
    deadline = spec.active_deadline_seconds
    if deadline is not None and not 1 <= deadline <= _MAX_INT32:
        errs.append(
            invalid(
                path.child("activeDeadlineSeconds"),
                deadline,
                f"must be between 1 and {_MAX_INT32}, inclusive",
            )
        )
    return errs


def validate_pod_template_spec(template: PodTemplateSpec, path: Path) -> ErrorList:
    """``ValidatePodTemplateSpec`` (subset): template labels/annotations and the pod spec."""
    errs = validate_template_object_meta(template.metadata, path.child("metadata"))
    errs += validate_pod_spec(template.spec, path.child("spec"))
    if template.spec.ephemeral_containers:
        errs.append(
            forbidden(
                path.child("spec", "ephemeralContainers"),
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs
