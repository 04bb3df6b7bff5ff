"""``kubedra simulate`` and ``kubedra explain``: offline structured allocation on a snapshot.

A snapshot is multi-document YAML (or JSON) with Nodes, ResourceSlices, ResourceClasses,
parameter objects, claims (some allocated), claim templates and pods; without ``-f`` both
commands read those objects from the cluster ``--kubeconfig`` names. ``simulate`` places the
pending pods (no ``spec.nodeName``) one after another and, with ``--node-template`` (a Node and
its ResourceSlices), answers how many such nodes must be added for every pending pod to fit.
``explain`` shows, per node, which instances each request of a pod (or claim) could use, and
with ``--scores`` each score plugin's score per node.

Nodes are chosen as the scheduler chooses them: the same profile (the default one, or
``--config``'s as ``kubedra scheduler --config`` reads it) filters and scores the nodes the
claims fit on, and ``--seed`` draws among equally scored nodes as the scheduler's ``--seed``
does (no seed: at random, as the scheduler). Only the ``--node-template`` sizing packs claims
without the other plugins (:data:`NOT_MODELLED`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
import uvloop
import yaml

from kubedra.allocation.autoscale import AnySlice, Autoscale, extra_nodes_needed
from kubedra.allocation.deviceexplain import DeviceNodeExplanation
from kubedra.allocation.devicesimulate import DeviceSimulator, MixedSnapshot, simulator_for
from kubedra.allocation.explain import NodeExplanation, PodExplanation, to_data
from kubedra.allocation.simulate import (
    NOT_MODELLED,
    SNAPSHOT_KINDS,
    Placement,
    Simulator,
    Snapshot,
    pending_pods,
)
from kubedra.api import codec
from kubedra.api.core import Namespace, Node, Pod
from kubedra.api.features import FeatureGates
from kubedra.api.meta import TypedObject
from kubedra.api.release import R1_30, R1_34
from kubedra.api.resource import v1
from kubedra.api.resource.v1alpha2 import ResourceSlice
from kubedra.api.scheme import GVR
from kubedra.client import kubeconfig
from kubedra.client.errors import ApiError, is_not_found
from kubedra.client.rest import Client
from kubedra.registry import pipeline, resources
from kubedra.registry.strategies.base import AnyStrategy
from kubedra.scheduler.config import ConfigError, default_config, load, resolve
from kubedra.scheduler.offline import ProfileChooser
from kubedra.scheduler.setup import IMPLEMENTS

OUTPUTS = click.Choice(["table", "json", "yaml"])


def load_objects(paths: tuple[str, ...]) -> list[TypedObject]:
    """Every object of the files, namespaced kinds defaulted to namespace ``default``; an
    object of a 1.34-only version (``resource.k8s.io/v1``, ``v1beta2``, ``v1beta1``)
    defaulted and converted as a 1.34 server stores it."""
    out: list[TypedObject] = []
    strategies: dict[GVR, AnyStrategy] = {}
    for p in paths:
        try:
            text = Path(p).read_bytes()
        except OSError as err:
            raise click.ClickException(f"cannot read {p}: {err.strerror}") from None
        try:
            for raw in codec.expand_lists(codec.load_documents(text)):
                kind = codec.kind_of(raw)
                if R1_30 in kind.row.releases:
                    obj = codec.decode_object(raw)
                else:
                    strategies = strategies or resources.strategies(
                        FeatureGates.for_release(R1_34))
                    obj = pipeline.decode(kind, raw, "Ignore",
                                          strategy=strategies[kind.resource.storage_gvr]).obj
                if kind.namespaced and not obj.metadata.namespace:
                    obj.metadata.namespace = "default"
                out.append(obj)
        except (codec.DecodeError, pipeline.Rejected) as err:
            raise click.ClickException(f"{p}: {err}") from None
    return out


def profile_options(f: Any) -> Any:
    f = click.option("--seed", type=int, default=None,
                     help="draw among equally scored nodes as `kubedra scheduler --seed N`")(f)
    return click.option("--config", "config_path", type=click.Path(dir_okay=False),
                        default=None, help="the scheduler's KubeSchedulerConfiguration file "
                                           "(default: the default profile)")(f)


def chooser(objects: list[TypedObject], snapshot: Snapshot, config_path: str | None,
            seed: int | None) -> ProfileChooser:
    """The scheduler's choice of node for the snapshot, with its profiles."""
    try:
        config = (resolve(load(config_path), IMPLEMENTS) if config_path is not None
                  else default_config(IMPLEMENTS))
    except ConfigError as e:
        raise click.ClickException(str(e)) from None
    labels = {o.metadata.name or "": o.metadata.labels or {}
              for o in objects if isinstance(o, Namespace)}
    bound = [p for p in snapshot.pods if p.spec.node_name
             and p.status.phase not in ("Succeeded", "Failed")]
    return ProfileChooser(config, snapshot.nodes, bound, seed=seed,
                          namespace_labels=lambda ns: labels.get(ns, {}))


DEFAULT_KUBECONFIG = Path("kubedra-data") / "kubeconfig"
"""Where ``kubedra up`` (and ``make up``) write the administrator's kubeconfig."""


DRA_KINDS = frozenset(k for k in SNAPSHOT_KINDS if k not in (Node, Pod))

CLUSTER_KINDS: tuple[type, ...] = (*SNAPSHOT_KINDS, Namespace)
"""What is read from a cluster: the snapshot's kinds, and the Namespaces whose labels the
profile's InterPodAffinity matches namespace selectors against."""


def kubeconfig_option(f: Any) -> Any:
    return click.option(
        "--kubeconfig", "kubeconfig_path", type=click.Path(dir_okay=False),
        help="without -f, read the cluster this kubeconfig names "
             f"(default: $KUBECONFIG, else {DEFAULT_KUBECONFIG})")(f)


def read_cluster(path: str | None) -> list[TypedObject]:
    """Every object of :data:`CLUSTER_KINDS`, read from the cluster's API server."""
    if path is None:
        path = str(kubeconfig.default_path() if os.environ.get("KUBECONFIG")
                   else DEFAULT_KUBECONFIG)

    async def read() -> list[TypedObject]:
        out: list[TypedObject] = []
        async with Client(kubeconfig.load(path), user_agent="kubedra-explain") as client:
            for kind in CLUSTER_KINDS:
                try:
                    out += (await client.list_all(kind)).items
                except ApiError as err:
                    # A cluster serves one era's DRA kinds: the other's are not found.
                    if not (is_not_found(err) and kind in DRA_KINDS):
                        raise
        return out

    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(read())
    except kubeconfig.KubeconfigError as err:
        raise click.ClickException(f"{err} (give -f SNAPSHOT, or the --kubeconfig of a "
                                   "running cluster)") from None
    except (ApiError, OSError) as err:
        raise click.ClickException(f"cannot read the cluster of {path}: {err}") from None


def objects_of(files: tuple[str, ...], kubeconfig_path: str | None) -> list[TypedObject]:
    """The objects of the files, or of the cluster when no file is given."""
    return load_objects(files) if files else read_cluster(kubeconfig_path)


def _emit(data: Any, output: str) -> None:
    if output == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(yaml.safe_dump(data, sort_keys=False), nl=False)


def _placement_rows(placements: list[Placement]) -> list[list[str]]:
    rows = []
    for p in placements:
        if p.node is not None:
            detail = "; ".join(
                f"{c.claim} -> {', '.join(c.instances) or '(no instances)'}"
                + (" (new)" if c.newly_allocated else "")
                for c in p.claims
            ) or "(no claims)"
            rows.append([p.pod, p.node, detail])
        else:
            reasons = "; ".join(f"{n}: {r}" for n, r in p.reasons.items())
            rows.append([p.pod, "<none>", f"{p.message}" + (f" ({reasons})" if reasons else "")])
    return rows


def _table(rows: list[list[str]], headers: list[str]) -> str:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    lines = [headers, *rows]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in lines
    )


def _autoscale_text(a: Autoscale, template: str) -> str:
    """The answer, then each pending pod in exactly one group: fits on the existing nodes,
    needs an added node, never fits on this template, or still finds no room."""
    if a.extra_nodes is None:
        head = f"no number of extra nodes up to {a.tried} lets every pending pod fit"
    elif a.never_fit:
        head = (f"{a.extra_nodes} extra node(s) needed by the pods that can fit; "
                f"{len(a.never_fit)} never fit on this template")
    elif a.extra_nodes == 0:
        head = "0 extra nodes needed: every pending pod fits on the existing nodes"
    else:
        head = f"{a.extra_nodes} extra node(s) let every pending pod fit"
    lines = [f"node template {template}: {head}"]
    for label, pods in (("fit on the existing nodes", a.on_existing),
                        ("need an added node", a.on_new),
                        ("never fit on this template", a.never_fit),
                        (f"no room even with {a.tried} added", a.unplaced)):
        if pods:
            lines.append(f"  {label}: {', '.join(pods)}")
    return "\n".join(lines)


def _template(path: str) -> tuple[Node, list[AnySlice]]:
    objs = load_objects((path,))
    nodes = [o for o in objs if isinstance(o, Node)]
    if len(nodes) != 1:
        raise click.ClickException(f"{path}: a node template needs exactly one Node")
    name = nodes[0].metadata.name or ""
    slices: list[AnySlice] = []
    for o in objs:
        if isinstance(o, v1.ResourceSlice):
            o.spec.node_name, o.spec.all_nodes, o.spec.node_selector = name, None, None
            slices.append(o)
        elif isinstance(o, ResourceSlice):
            o.node_name = name
            slices.append(o)
    return nodes[0], slices


def simulation(snapshot: Snapshot, chooser: ProfileChooser) -> Simulator | DeviceSimulator:
    """The simulation of the snapshot's era (its DRA objects' ``apiVersion``)."""
    try:
        return simulator_for(snapshot, chooser=chooser)
    except MixedSnapshot as err:
        raise click.ClickException(str(err)) from None


@click.command()
@click.option("-f", "--filename", "files", multiple=True,
              help="snapshot file(s): multi-document YAML or JSON (default: the cluster)")
@kubeconfig_option
@click.option("--node-template", help="a Node plus its ResourceSlices: how many to add?")
@click.option("-o", "--output", type=OUTPUTS, default="table", show_default=True)
@profile_options
def simulate(files: tuple[str, ...], kubeconfig_path: str | None, node_template: str | None,
             output: str, config_path: str | None, seed: int | None) -> None:
    """Place pending pods on the snapshot's nodes as the scheduler would; optionally size a
    node template."""
    objects = objects_of(files, kubeconfig_path)
    snapshot = Snapshot.from_objects(objects)
    pending = pending_pods(snapshot)
    placements = simulation(snapshot, chooser(objects, snapshot, config_path, seed)
                            ).run(copy.deepcopy(pending))
    autoscale: Autoscale | None = None
    if node_template is not None:
        node, slices = _template(node_template)
        autoscale = extra_nodes_needed(snapshot, node, slices)
    if output == "table":
        click.echo(_table(_placement_rows(placements), ["POD", "NODE", "CLAIMS / REASONS"]))
        if autoscale is not None:
            click.echo("")
            click.echo(_autoscale_text(autoscale, node.metadata.name or ""))
            if autoscale.extra_nodes:
                click.echo(_table(_placement_rows(autoscale.placements),
                                  ["POD", "NODE", "CLAIMS / REASONS"]))
            click.echo(f"\nnot modelled in the sizing (checked by the scheduler, ignored "
                       f"here): {', '.join(NOT_MODELLED)}")
        return
    data: dict[str, Any] = {"placements": [asdict(p) for p in placements]}
    if autoscale is not None:
        data["autoscale"] = {
            "template": node.metadata.name,
            "extra_nodes": autoscale.extra_nodes,
            "tried": autoscale.tried,
            "never_fit": autoscale.never_fit,
            "on_existing": autoscale.on_existing,
            "on_new": autoscale.on_new,
            "unplaced": autoscale.unplaced,
            "placements": [asdict(p) for p in autoscale.placements],
            "not_modelled": list(NOT_MODELLED),
        }
    _emit(data, output)


@click.command()
@click.option("-f", "--filename", "files", multiple=True,
              help="snapshot file(s): multi-document YAML or JSON (default: the cluster)")
@kubeconfig_option
@click.option("-n", "--namespace", default="default", show_default=True)
@click.option("-o", "--output", type=OUTPUTS, default="table", show_default=True)
@click.option("--scores", "show_scores", is_flag=True,
              help="also show each score plugin's score per node")
@profile_options
@click.argument("target")
def explain(files: tuple[str, ...], kubeconfig_path: str | None, namespace: str, output: str,
            show_scores: bool, config_path: str | None, seed: int | None, target: str) -> None:
    """Explain per node why pod/NAME (or claim/NAME) fits or not, and where the scheduler
    would put it."""
    kind, _, name = target.partition("/")
    if not name or kind not in ("pod", "pods", "claim", "resourceclaim", "resourceclaims"):
        raise click.UsageError("TARGET must be pod/NAME or claim/NAME")
    objects = objects_of(files, kubeconfig_path)
    snapshot = Snapshot.from_objects(objects)
    sim = simulation(snapshot, chooser(objects, snapshot, config_path, seed))
    if kind.startswith("pod"):
        pod = next((p for p in snapshot.pods
                    if p.metadata.name == name and p.metadata.namespace == namespace), None)
        if pod is None:
            where = "in the snapshot" if files else "in the cluster"
            raise click.ClickException(f'pod "{namespace}/{name}" not found {where}')
        result = sim.explain(pod)
    else:
        result = sim.explain_claim(namespace, name)
    if output == "table":
        click.echo(render(result), nl=False)
        if show_scores:
            click.echo("\n" + render_scores(result.scores))
    else:
        _emit(to_data(result), output)


def render_scores(scores: dict[str, dict[str, int]]) -> str:
    """One row per scored node: each plugin's weighted score and the total, best first."""
    if not scores:
        return "scores: none (fewer than two nodes to choose from)\n"
    plugins = list(next(iter(scores.values())))
    rows = sorted(([node, *(str(s[p]) for p in plugins), str(sum(s.values()))]
                   for node, s in scores.items()), key=lambda r: (-int(r[-1]), r[0]))
    return _table(rows, ["NODE", *plugins, "TOTAL"]) + "\n"


def render(explanation: PodExplanation) -> str:
    """``kubedra explain``'s table: one block per node, one row per (request, instance) or,
    for ``resource.k8s.io/v1`` claims, per (request, device)."""
    lines = [f"{explanation.subject} {explanation.pod}: {explanation.result}"]
    if explanation.claims:
        lines.append("claims: " + ", ".join(explanation.claims))
    for n in explanation.nodes:
        lines.append("")
        verdict = "suitable" if n.suitable else f"unsuitable: {n.reason}"
        lines.append(f"node {n.node}: {verdict}")
        if n.why:
            lines.append(f"  why: {n.why}")
        if isinstance(n, NodeExplanation):
            lines += _instance_rows(n)
        elif isinstance(n, DeviceNodeExplanation):
            lines += _device_rows(n)
    return "\n".join(lines) + "\n"


def _instance_rows(n: NodeExplanation) -> list[str]:
    lines = [f"  note: {note}" for note in n.notes]
    rows: list[list[str]] = []
    for r in n.requests:
        req = f"{r.claim}#{r.request} ({r.driver})"
        if not r.instances:
            rows.append([req, "(no instances)", "", "", "", ""])
        for i in r.instances:
            state = "CHOSEN" if i.chosen else "free"
            if i.chosen_for:
                state = f"chosen for {i.chosen_for}"
            if i.held_by:
                users = f" (pods: {', '.join(i.reserved_for)})" if i.reserved_for else ""
                state = f"held by {i.held_by}{users}"
            rows.append([req, i.instance, i.slice, i.filter, i.selector, state])
    if rows:
        table = _table(rows, ["REQUEST", "INSTANCE", "SLICE", "FILTER", "SELECTOR", "STATE"])
        lines += ["  " + t for t in table.split("\n")]
    return lines


def _device_rows(n: DeviceNodeExplanation) -> list[str]:
    lines = [f"  note: {note}" for note in n.notes]
    lines += [f"  constraint {c.claim} matchAttribute {c.attribute}: {c.seen()}"
              for c in n.constraints]
    rows: list[list[str]] = []
    for r in n.requests:
        req = f"{r.claim}#{r.request}"
        want = f"{r.mode}, {r.usable} usable"
        if not r.devices:
            rows.append([req, r.device_class, want, "(no devices)", "", ""])
        for d in r.devices:
            rows.append([req, r.device_class, want, d.device, d.slice, d.state])
    if rows:
        table = _table(rows, ["REQUEST", "CLASS", "WANTS", "DEVICE", "SLICE", "STATE"])
        lines += ["  " + t for t in table.split("\n")]
    return lines
