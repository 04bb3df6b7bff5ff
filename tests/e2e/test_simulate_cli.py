"""``kubedra simulate`` / ``kubedra explain`` as a user runs them, on examples/snapshots/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
SNAP = REPO / "examples" / "snapshots"
KUBEDRA = Path(sys.executable).parent / "kubedra"


def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(KUBEDRA), *args], capture_output=True, text=True, timeout=60,
                          cwd=REPO)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def placements(data: dict[str, Any]) -> dict[str, Any]:
    return {p["pod"]: p for p in data["placements"]}


def test_simulate_places_pending_pods_and_reports_reasons() -> None:
    out = run("simulate", "-f", str(SNAP / "gpu-cluster.yaml")).stdout
    lines = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert "worker-2" in lines["default/train"]
    assert "default/train-gpu -> gpu.example.com/gpu-0 (new)" in lines["default/train"]
    assert "<none>" in lines["default/pair"]
    assert "worker-1: resourceclaim cannot be allocated for the node (unsuitable)" in \
        lines["default/big"]


def test_simulate_with_pending_file_and_node_template_json() -> None:
    proc = run("simulate", "-f", str(SNAP / "gpu-cluster.yaml"), "-f", str(SNAP / "pending.yaml"),
               "--node-template", str(SNAP / "node-template.yaml"), "-o", "json")
    data = json.loads(proc.stdout)
    got = placements(data)
    assert got["default/train"]["node"] == "worker-2"
    assert got["default/pair"]["node"] is None and got["default/big"]["node"] is None
    # the shared claim is allocated once and used by both pods
    assert got["default/infer-1"]["node"] == got["default/infer-2"]["node"] == "worker-1"
    assert got["default/infer-1"]["claims"][0]["newly_allocated"] is True
    assert got["default/infer-2"]["claims"][0]["newly_allocated"] is False
    assert got["default/infer-2"]["claims"][0]["instances"] == ["gpu.example.com/gpu-1"]
    auto = data["autoscale"]
    assert auto["extra_nodes"] == 2 and auto["never_fit"] == [] and auto["unplaced"] == []
    assert auto["on_new"] == ["default/big", "default/pair"]
    scaled = placements(auto)
    assert all(p["node"] is not None for p in scaled.values())
    assert scaled["default/big"]["node"].startswith("gpu-node-")
    assert scaled["default/pair"]["node"] != scaled["default/big"]["node"]


def simulate_with_template(instances: int, output: str) -> str:
    """``simulate`` of gpu-cluster.yaml with a node template cut to ``instances`` GPUs."""
    docs = list(yaml.safe_load_all((SNAP / "node-template.yaml").read_text()))
    docs[1]["namedResources"]["instances"] = docs[1]["namedResources"]["instances"][:instances]
    path = Path(subprocess.check_output(["mktemp", "--suffix=.yaml"], text=True).strip())
    try:
        path.write_text(yaml.safe_dump_all(docs))
        return run("simulate", "-f", str(SNAP / "gpu-cluster.yaml"),
                   "--node-template", str(path), "-o", output).stdout
    finally:
        path.unlink()


def test_node_template_that_is_too_small() -> None:
    data = json.loads(simulate_with_template(2, "json"))
    assert data["autoscale"]["never_fit"] == ["default/big"]
    assert data["autoscale"]["extra_nodes"] == 1  # pair fits on one two-GPU node
    assert data["autoscale"]["on_existing"] == ["default/train"]
    assert data["autoscale"]["on_new"] == ["default/pair"]
    table = simulate_with_template(2, "table")
    assert ("node template gpu-node: 1 extra node(s) needed by the pods that can fit; "
            "1 never fit on this template") in table


def test_no_extra_node_helps_says_which_pods_fit_and_which_never_do() -> None:
    # one GPU per template node: train fits on worker-2, pair and big fit nowhere
    lines = simulate_with_template(1, "table").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("node template"))
    assert lines[start:start + 3] == [
        "node template gpu-node: 0 extra node(s) needed by the pods that can fit; "
        "2 never fit on this template",
        "  fit on the existing nodes: default/train",
        "  never fit on this template: default/big, default/pair",
    ]
    assert not any("every pending pod fits" in line for line in lines)


def test_complete_search_where_upstream_first_fit_fails() -> None:
    data = yaml.safe_load(run("simulate", "-f", str(SNAP / "greedy.yaml"), "-o", "yaml").stdout)
    (p,) = data["placements"]
    assert p["node"] == "worker"
    assert p["claims"][0]["instances"] == ["gpu.example.com/gpu-1", "gpu.example.com/gpu-0"]
    table = run("explain", "-f", str(SNAP / "greedy.yaml"), "pod/mixed").stdout
    assert "chosen for default/mixed#1" in table


def test_explain_pod_table_and_json() -> None:
    table = run("explain", "-f", str(SNAP / "gpu-cluster.yaml"), "pod/pair").stdout
    assert table.startswith("pod default/pair: fits on no node")
    assert "held by default/running-gpu" in table
    assert ('  why: default/pair-gpus: too few free instances of driver "gpu.example.com" '
            "match its 2 requests") in table.splitlines()
    data = json.loads(run("explain", "-f", str(SNAP / "gpu-cluster.yaml"), "pod/train",
                          "-o", "json").stdout)
    assert data["result"] == "fits on worker-2; the scheduler picks worker-2"
    nodes = {n["node"]: n for n in data["nodes"]}
    w1 = nodes["worker-1"]
    assert not w1["suitable"]
    rows = {i["instance"]: i for i in w1["requests"][0]["instances"]}
    assert rows["gpu-0"]["held_by"] == "default/running-gpu"
    assert rows["gpu-1"]["selector"] == "fail"
    w2 = nodes["worker-2"]
    assert w2["suitable"] and w2["requests"][0]["assigned"] == "gpu-0"
    unhealthy = {i["instance"]: i for i in w2["requests"][0]["instances"]}["gpu-1"]
    assert (unhealthy["filter"], unhealthy["selector"]) == ("fail", "-")


def test_explain_claim_and_errors() -> None:
    out = run("explain", "-f", str(SNAP / "gpu-cluster.yaml"), "-f", str(SNAP / "pending.yaml"),
              "claim/shared-gpu").stdout
    assert out.splitlines()[0].startswith(
        "claim default/shared-gpu: fits on worker-1, worker-2; the scheduler picks worker-")
    missing = run("explain", "-f", str(SNAP / "gpu-cluster.yaml"), "pod/nope", ok=False)
    assert missing.returncode != 0 and 'pod "default/nope" not found' in missing.stderr
    bad = run("simulate", "-f", str(SNAP / "does-not-exist.yaml"), ok=False)
    assert bad.returncode != 0 and "cannot read" in bad.stderr


def test_only_the_sizing_says_what_it_does_not_model() -> None:
    """Placement runs the scheduler's profile; the node-template sizing packs claims only."""
    out = run("simulate", "-f", str(SNAP / "gpu-cluster.yaml"),
              "--node-template", str(SNAP / "node-template.yaml")).stdout
    assert out.splitlines()[-1].startswith(
        "not modelled in the sizing (checked by the scheduler, ignored here): CPU, memory and "
        "pod-count requests, taints and tolerations")
    data = json.loads(run("simulate", "-f", str(SNAP / "gpu-cluster.yaml"), "-o", "json").stdout)
    assert "not_modelled" not in data


def test_explain_scores_table() -> None:
    out = run("explain", "-f", str(SNAP / "gpu-cluster.yaml"), "-f", str(SNAP / "pending.yaml"),
              "claim/shared-gpu", "--scores", "--seed", "1").stdout
    header, *rows = out.strip().split("\n\n")[-1].splitlines()
    assert header.split()[0] == "NODE" and header.split()[-1] == "TOTAL"
    assert "DynamicResourcesPacking" in header.split()
    assert {r.split()[0] for r in rows} == {"worker-1", "worker-2"}
    totals = [int(r.split()[-1]) for r in rows]
    assert totals == sorted(totals, reverse=True)
