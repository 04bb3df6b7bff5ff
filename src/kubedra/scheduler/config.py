"""``KubeSchedulerConfiguration`` (``kubescheduler.config.k8s.io/v1``, v1.30): decoding with
strict field checks, upstream's defaults and validation, and each profile's plugins per
extension point after merging with the default plugins (upstream ``mergePlugins`` and the
framework's MultiPoint expansion). :mod:`.setup` turns the result into profiles.

Errors carry upstream's texts: ``strict decoding error: unknown field "x"``, the field
errors of ``ValidateKubeSchedulerConfiguration`` (one, or ``[a, b]``), and the framework's
``ScorePlugin "X" does not exist`` / ``plugin "X" does not extend ...`` when profiles are
built.

Plugin args are the release's: a 1.34 scheduler takes ``DynamicResourcesArgs``
(``filterTimeout``, upstream's default and validation); kubedra applies no other args, and a
1.30 scheduler none (upstream 1.30 has no ``DynamicResourcesArgs``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path as FilePath

import yaml

from kubedra.api import codec
from kubedra.api.base import Int32, Int64, Model
from kubedra.api.core import RawObject
from kubedra.api.goformat import go_duration, go_quote, parse_duration
from kubedra.api.release import R1_30, R1_34, Release
from kubedra.validation.field import (
    ROOT,
    ErrorList,
    Path,
    aggregate_message,
    duplicate,
    invalid,
    required,
)

GROUP_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter",
                    "preScore", "score", "reserve", "permit", "preBind", "bind", "postBind")
"""In upstream's order; ``multiPoint`` expands into them."""

POINT_TYPES = {"preEnqueue": "PreEnqueuePlugin", "queueSort": "QueueSortPlugin",
               "preFilter": "PreFilterPlugin", "filter": "FilterPlugin",
               "postFilter": "PostFilterPlugin", "preScore": "PreScorePlugin",
               "score": "ScorePlugin", "reserve": "ReservePlugin", "permit": "PermitPlugin",
               "preBind": "PreBindPlugin", "bind": "BindPlugin", "postBind": "PostBindPlugin"}
"""The framework's interface names, as its errors print them."""

DEFAULT_PLUGINS: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0),
    ("VolumeZone", 0), ("PodTopologySpread", 2), ("InterPodAffinity", 2),
    ("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1),
    ("DefaultBinder", 0), ("DynamicResources", 0), ("DynamicResourcesPacking", 1))
"""Upstream's v1 default MultiPoint plugins and weights (``default_plugins.go``; 0: no
weight given), DynamicResources appended as its feature gate does, and kubedra's packing
score last."""

INVALID_IN_V1 = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

DRA_FILTER_TIMEOUT = 10.0
"""Seconds: ``DynamicResourcesArgs.filterTimeout``'s default (1.34, gate
DRASchedulerFilterTimeout on by default); 0 turns the timeout off."""
DRA_ARGS_FIELDS = ("apiVersion", "kind", "filterTimeout")


class ConfigError(ValueError):
    """The configuration cannot be used; the message is upstream's text."""


# --- the v1 types (only the fields upstream's v1 has; unknown ones are rejected) ----------


class PluginRef(Model):
    name: str = ""
    weight: Int32 | None = None


class PluginSet(Model):
    enabled: list[PluginRef] | None = None
    disabled: list[PluginRef] | None = None


class Plugins(Model):
    pre_enqueue: PluginSet | None = None
    queue_sort: PluginSet | None = None
    pre_filter: PluginSet | None = None
    filter: PluginSet | None = None
    post_filter: PluginSet | None = None
    pre_score: PluginSet | None = None
    score: PluginSet | None = None
    reserve: PluginSet | None = None
    permit: PluginSet | None = None
    pre_bind: PluginSet | None = None
    bind: PluginSet | None = None
    post_bind: PluginSet | None = None
    multi_point: PluginSet | None = None


class PluginConfig(Model):
    name: str = ""
    args: RawObject | None = None


class KubeSchedulerProfile(Model):
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: Int32 | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] | None = None


class LeaderElectionConfiguration(Model):
    leader_elect: bool | None = None
    lease_duration: str | None = None
    renew_deadline: str | None = None
    retry_period: str | None = None
    resource_lock: str | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None


class ClientConnectionConfiguration(Model):
    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = ""
    qps: float | None = None
    burst: Int32 | None = None


class KubeSchedulerConfiguration(Model):
    api_version: str = ""
    kind: str = ""
    parallelism: Int32 | None = None
    leader_election: LeaderElectionConfiguration | None = None
    client_connection: ClientConnectionConfiguration | None = None
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    percentage_of_nodes_to_score: Int32 | None = None
    pod_initial_backoff_seconds: Int64 | None = None
    pod_max_backoff_seconds: Int64 | None = None
    profiles: list[KubeSchedulerProfile] | None = None
    extenders: list[RawObject] | None = None
    delay_cache_until_active: bool | None = None


# --- the result ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfileConfig:
    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    points: Mapping[str, Sequence[str]]
    """Per extension point the enabled plugins, in order (after merging and expansion)."""
    weights: Mapping[str, int]
    """Score plugins' weights."""
    dra_filter_timeout: float = DRA_FILTER_TIMEOUT
    """DynamicResources' ``filterTimeout`` in seconds (0: none; only a 1.34 scheduler
    allocates devices under it)."""


@dataclass(frozen=True)
class SchedulerConfig:
    profiles: Sequence[ProfileConfig]
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10


def load(path: str) -> KubeSchedulerConfiguration:
    """Read and decode a configuration file (YAML or JSON)."""
    try:
        text = FilePath(path).read_text()
    except OSError as e:
        raise ConfigError(f"open {path}: {e.strerror or e}") from None
    return decode(text)


def decode(text: str) -> KubeSchedulerConfiguration:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"error converting YAML to JSON: {e}") from None
    if not isinstance(raw, dict):
        raise ConfigError("couldn't get version/kind; json parse error: "
                          "json: cannot unmarshal into Go value of type struct")
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    if not kind:
        raise ConfigError(f"Object 'Kind' is missing in '{text.strip()}'")
    if api_version != GROUP_VERSION or kind != KIND:
        raise ConfigError(f"no kind {go_quote(str(kind))} is registered for version "
                          f"{go_quote(str(api_version or ''))} in scheme "
                          f"\"pkg/scheduler/apis/config/scheme/scheme.go:30\"")
    unknown = codec.unknown_fields(raw, KubeSchedulerConfiguration)
    if unknown:
        raise ConfigError("strict decoding error: " + ", ".join(
            f"unknown field {go_quote(p)}" for p in unknown))
    try:
        return codec.decode(raw, KubeSchedulerConfiguration)
    except codec.DecodeError as e:
        raise ConfigError(f"error decoding {KIND}: {e}") from None


# --- defaults and validation ----------------------------------------------------------------


def _validate(cfg: KubeSchedulerConfiguration, release: Release) -> ErrorList:
    errs: ErrorList = []
    election = cfg.leader_election or LeaderElectionConfiguration()
    if (election.leader_elect is not False
            and (election.resource_lock or "leases") != "leases"):
        errs.append(invalid(ROOT.child("leaderElection", "resourceLock"),
                            election.resource_lock, 'resourceLock value must be "leases"'))
    parallelism = 16 if cfg.parallelism is None else cfg.parallelism
    if parallelism <= 0:
        errs.append(invalid(ROOT.child("parallelism"), parallelism,
                            "should be an integer value greater than zero"))
    profiles = _defaulted_profiles(cfg)
    seen: dict[str, int] = {}
    for i, profile in enumerate(profiles):
        path = ROOT.child("profiles").index(i)
        name = profile.scheduler_name or ""
        if not name:
            errs.append(required(path.child("schedulerName")))
        errs += _percentage(path.child("percentageOfNodesToScore"),
                            profile.percentage_of_nodes_to_score)
        errs += _invalid_plugins(path, profile, release)
        if name in seen:
            errs.append(duplicate(path.child("schedulerName"),
                                  str(ROOT.child("profiles").index(seen[name])
                                      .child("schedulerName"))))
        seen[name] = i
    errs += _percentage(ROOT.child("percentageOfNodesToScore"),
                        cfg.percentage_of_nodes_to_score)
    initial = _or(cfg.pod_initial_backoff_seconds, 1)
    maximum = _or(cfg.pod_max_backoff_seconds, 10)
    if initial <= 0:
        errs.append(invalid(ROOT.child("podInitialBackoffSeconds"), initial,
                            "must be greater than 0"))
    if maximum < initial:
        errs.append(invalid(ROOT.child("podMaxBackoffSeconds"), maximum,
                            "must be greater than or equal to PodInitialBackoffSeconds"))
    for i, _ in enumerate(cfg.extenders or ()):
        errs.append(invalid(ROOT.child("extenders").index(i), "extender",
                            "kubedra calls no scheduler extenders"))
    return errs


def _defaulted_profiles(cfg: KubeSchedulerConfiguration) -> list[KubeSchedulerProfile]:
    """One unnamed profile when there are none; a lone profile without a name is
    ``default-scheduler`` (upstream's v1 defaults)."""
    profiles = list(cfg.profiles or ()) or [KubeSchedulerProfile()]
    if len(profiles) == 1 and profiles[0].scheduler_name is None:
        only = profiles[0]
        profiles[0] = KubeSchedulerProfile(
            scheduler_name=DEFAULT_SCHEDULER_NAME,
            percentage_of_nodes_to_score=only.percentage_of_nodes_to_score,
            plugins=only.plugins, plugin_config=only.plugin_config)
    return profiles


def _percentage(path: Path, value: int | None) -> ErrorList:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _invalid_plugins(path: Path, profile: KubeSchedulerProfile, release: Release
                     ) -> ErrorList:
    errs: ErrorList = []
    detail = f'was invalid in version "{GROUP_VERSION}" (KubeSchedulerConfiguration is ' \
             f'version "{GROUP_VERSION}")'
    plugins = profile.plugins or Plugins()
    for point in EXTENSION_POINTS:
        for i, ref in enumerate(_set(plugins, point).enabled or ()):
            if ref.name in INVALID_IN_V1:
                errs.append(invalid(path.child("plugins", point, "enabled").index(i),
                                    ref.name, detail))
    seen: set[str] = set()
    for i, config in enumerate(profile.plugin_config or ()):
        entry = path.child("pluginConfig").index(i)
        if config.name in seen:
            errs.append(duplicate(entry, config.name))
        seen.add(config.name)
        if config.name in INVALID_IN_V1:
            errs.append(invalid(entry, config.name, detail))
        elif config.name == "DynamicResources" and release is R1_34:
            timeout = _dra_filter_timeout(config.args)
            if timeout is not None and timeout < 0:
                errs.append(invalid(entry.child("args", "filterTimeout"), go_duration(timeout),
                                    "must be zero or positive"))
        elif config.args:
            errs.append(invalid(entry.child("args"), config.name,
                                "kubedra applies no plugin args"))
    return errs


def _dra_filter_timeout(args: RawObject | None) -> float | None:
    """``filterTimeout`` of 1.34's ``DynamicResourcesArgs`` in seconds (None: not set),
    decoded strictly (unknown fields and bad durations are decoding errors)."""
    unknown = [k for k in args or () if k not in DRA_ARGS_FIELDS]
    if unknown:
        raise ConfigError("strict decoding error: " + ", ".join(
            f"unknown field {go_quote(k)}" for k in unknown))
    value = (args or {}).get("filterTimeout")
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError("json: cannot unmarshal number into Go value of type string"
                          if isinstance(value, int | float) else
                          "json: cannot unmarshal into Go value of type string")
    try:
        return parse_duration(value)
    except ValueError as e:
        raise ConfigError(str(e)) from None


def _set(plugins: Plugins, point: str) -> PluginSet:
    attr = "".join("_" + c.lower() if c.isupper() else c for c in point)
    found: PluginSet | None = getattr(plugins, attr)
    return found or PluginSet()


# --- plugins per extension point ------------------------------------------------------------


def _merge(default: Sequence[PluginRef], custom: PluginSet) -> tuple[list[PluginRef],
                                                                      list[str]]:
    """Upstream ``mergePluginSet``: defaults not disabled (a custom entry of the same name
    replaces one in place), then the other custom entries; and the disabled names."""
    disabled = [p.name for p in custom.disabled or ()]
    enabled_custom = {p.name: (i, p) for i, p in enumerate(custom.enabled or ())}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for plugin in default:
            if plugin.name in disabled:
                continue
            if plugin.name in enabled_custom:
                index, plugin = enabled_custom[plugin.name]
                replaced.add(index)
            enabled.append(plugin)
    enabled += [p for i, p in enumerate(custom.enabled or ()) if i not in replaced]
    return enabled, disabled


def resolve(cfg: KubeSchedulerConfiguration, implements: Mapping[str, frozenset[str]],
            release: Release = R1_30) -> SchedulerConfig:
    """Validate ``cfg`` as ``release``'s scheduler does and work out each profile's plugins
    per extension point; ``implements``: the extension points of every known plugin."""
    errs = _validate(cfg, release)
    if errs:
        raise ConfigError(aggregate_message(errs))
    defaults = [PluginRef(name=n, weight=w or None) for n, w in DEFAULT_PLUGINS]
    profiles = [_profile(p, defaults, implements, release) for p in _defaulted_profiles(cfg)]
    return SchedulerConfig(profiles, cfg.percentage_of_nodes_to_score or 0,
                           _or(cfg.pod_initial_backoff_seconds, 1),
                           _or(cfg.pod_max_backoff_seconds, 10))


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _profile(profile: KubeSchedulerProfile, defaults: list[PluginRef],
             implements: Mapping[str, frozenset[str]], release: Release) -> ProfileConfig:
    plugins = profile.plugins or Plugins()
    name = profile.scheduler_name or ""
    multi, _ = _merge(defaults, _set(plugins, "multiPoint"))
    points: dict[str, list[str]] = {}
    for point in EXTENSION_POINTS:
        # defaults are all in multiPoint, so a point's own set merges with nothing
        own, disabled = _merge([], _set(plugins, point))
        points[point] = _expand(name, point, own, disabled, multi, implements)
    weights: dict[str, int] = {}
    for ref in [*_merge([], _set(plugins, "score"))[0], *multi]:
        if "score" in implements.get(ref.name, frozenset()) and ref.name not in weights:
            weights[ref.name] = ref.weight or 1  # 0 is not permitted: it means 1
    timeout = DRA_FILTER_TIMEOUT
    for config in profile.plugin_config or ():
        if config.name == "DynamicResources" and release is R1_34:
            found = _dra_filter_timeout(config.args)
            timeout = timeout if found is None else found
    return ProfileConfig(name, profile.percentage_of_nodes_to_score, points, weights, timeout)


def _expand(profile: str, point: str, own: list[PluginRef], disabled: list[str],
            multi: list[PluginRef], implements: Mapping[str, frozenset[str]]) -> list[str]:
    """Upstream's ``updatePluginList`` plus ``expandMultiPointPlugins`` for one point:
    plugins enabled at the point itself that MultiPoint also enables first (overrides),
    then MultiPoint's others, then the point's own others."""
    kind = POINT_TYPES[point]
    enabled: list[str] = []
    for ref in own:
        if ref.name not in implements:
            raise _profile_error(profile, f"{kind} {go_quote(ref.name)} does not exist")
        if point not in implements[ref.name]:
            raise _profile_error(profile, f"plugin {go_quote(ref.name)} does not extend "
                                          f"{kind} plugin")
        if ref.name in enabled:
            raise _profile_error(profile, f"plugin {go_quote(ref.name)} already registered "
                                          f"as {go_quote(kind)}")
        enabled.append(ref.name)
    if "*" in disabled:
        return enabled
    overrides: list[str] = []
    from_multi: list[str] = []
    for ref in multi:
        if ref.name not in implements:
            raise _profile_error(profile, f"{kind} {go_quote(ref.name)} does not exist")
        if point not in implements[ref.name] or ref.name in disabled:
            continue
        if ref.name in enabled:
            overrides.append(ref.name)
        elif ref.name in from_multi:
            raise _profile_error(profile, f"plugin {go_quote(ref.name)} already registered "
                                          f"as {go_quote(kind)}")
        else:
            from_multi.append(ref.name)
    ordered = overrides + from_multi
    return ordered + [n for n in enabled if n not in ordered]


def _profile_error(profile: str, message: str) -> ConfigError:
    return ConfigError(f"initializing profiles: creating profile for scheduler name "
                       f"{profile}: {message}")


def default_config(implements: Mapping[str, frozenset[str]],
                   release: Release = R1_30) -> SchedulerConfig:
    """What an empty configuration gives: the default profile."""
    return resolve(KubeSchedulerConfiguration(api_version=GROUP_VERSION, kind=KIND),
                   implements, release)

