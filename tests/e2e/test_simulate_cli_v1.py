"""``kubedra simulate`` / ``kubedra explain`` on ``resource.k8s.io/v1`` snapshots (the 1.34
era), as a user runs them on examples/snapshots/v1-*.yaml."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAP = REPO / "examples" / "snapshots"
CLUSTER = str(SNAP / "v1-gpu-cluster.yaml")
KUBEDRA = Path(sys.executable).parent / "kubedra"


def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(KUBEDRA), *args], capture_output=True, text=True, timeout=60,
                          cwd=REPO)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_simulate_places_pods_with_v1_claims_and_templates() -> None:
    out = run("simulate", "-f", CLUSTER, "--seed", "1").stdout
    lines = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert lines["default/train"].split()[1] == "worker-2"
    assert "default/train-gpu -> gpu.example.com/worker-2/gpu-0 (new)" in lines["default/train"]
    assert lines["default/pair"].endswith(
        "<none>    0/2 nodes are available (worker-1: cannot allocate all claims; "
        "worker-2: cannot allocate all claims)")


def test_node_template_with_v1_slices() -> None:
    data = json.loads(run("simulate", "-f", CLUSTER, "--node-template",
                          str(SNAP / "v1-node-template.yaml"), "-o", "json").stdout)
    auto = data["autoscale"]
    assert (auto["extra_nodes"], auto["never_fit"], auto["unplaced"]) == (2, [], [])
    assert auto["on_existing"] == ["default/train"]
    assert auto["on_new"] == ["default/big", "default/pair"]
    placed = {p["pod"]: p for p in auto["placements"]}
    assert placed["default/pair"]["claims"][0]["instances"] == [
        f"gpu.example.com/{placed['default/pair']['node']}/gpu-0",
        f"gpu.example.com/{placed['default/pair']['node']}/gpu-1"]  # two a100s: one model
    assert placed["default/big"]["node"] != placed["default/pair"]["node"]


def test_explain_table_names_each_reason() -> None:
    out = run("explain", "-f", CLUSTER, "pod/train").stdout.splitlines()
    assert out[0] == "pod default/train: fits on worker-2; the scheduler picks worker-2"
    assert out[1] == "claims: default/train-gpu"
    assert "node worker-1: unsuitable: cannot allocate all claims" in out
    assert ("  why: default/train-gpu#gpu: needs 1 device (ExactCount), 0 of the node's 2 "
            "usable") in out
    header = next(line for line in out if line.strip().startswith("REQUEST"))
    device, state = header.index("DEVICE"), header.index("STATE")
    states = {(line[device:].split()[0], line[state:]) for line in out
              if line.startswith("  default/")}
    assert ("gpu.example.com/worker-1/gpu-0", "in use by default/running-gpu") in states
    assert ("gpu.example.com/worker-1/gpu-1", 'request selector #0 is false: '
            'device.attributes["gpu.example.com"].model == "a100"') in states
    assert ("gpu.example.com/worker-2/gpu-0", "CHOSEN") in states
    assert ("gpu.example.com/worker-2/gpu-1", 'class gpu selector #1 is false: '
            'device.attributes["gpu.example.com"].healthy') in states
    assert header.split() == ["REQUEST", "CLASS", "WANTS", "DEVICE", "SLICE", "STATE"]


def test_explain_constraints_and_counts() -> None:
    out = run("explain", "-f", CLUSTER, "pod/pair").stdout.splitlines()
    assert ('  constraint default/pair matchAttribute gpu.example.com/model: a: "h100"; '
            'b: "h100"') in out
    assert ("  why: default/pair: its requests together need more usable devices than the "
            "node has") in out
    big = run("explain", "-f", CLUSTER, "claim/big").stdout.splitlines()
    assert big[0] == "claim default/big: fits on no node"
    assert "  why: default/big#gpus: needs 3 devices (ExactCount), 1 of the node's 2 usable" \
        in big


def test_explain_json_is_the_same_data() -> None:
    data = json.loads(run("explain", "-f", CLUSTER, "pod/train", "-o", "json").stdout)
    worker2 = next(n for n in data["nodes"] if n["node"] == "worker-2")
    assert worker2["suitable"] and worker2["reason"] == "" and worker2["why"] == ""
    request = worker2["requests"][0]
    assert {k: request[k] for k in ("claim", "request", "device_class", "mode", "usable")} == {
        "claim": "default/train-gpu", "request": "gpu", "device_class": "gpu",
        "mode": "ExactCount 1", "usable": 1}
    assert request["devices"][0] == {"device": "gpu.example.com/worker-2/gpu-0",
                                     "slice": "worker-2-gpu.example.com", "state": "CHOSEN"}


def test_snapshot_of_both_eras_is_refused() -> None:
    proc = run("simulate", "-f", CLUSTER, "-f", str(SNAP / "gpu-cluster.yaml"), ok=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "Error: the snapshot mixes resource.k8s.io/v1alpha2 objects (Kubernetes 1.30) with "
        "resource.k8s.io/v1 ones (1.34); one cluster serves one")


def test_v1beta1_objects_are_converted_and_defaulted(tmp_path: Path) -> None:
    """A v1beta1 claim (flat request, no allocationMode) is read as a 1.34 server stores it."""
    snapshot = tmp_path / "beta.yaml"
    snapshot.write_text(Path(CLUSTER).read_text() + """
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: beta, namespace: default}
spec:
  devices:
    requests:
    - {name: one, deviceClassName: gpu}
---
apiVersion: v1
kind: Pod
metadata: {name: beta, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  resourceClaims:
  - {name: one, resourceClaimName: beta}
""")
    data = json.loads(run("simulate", "-f", str(snapshot), "-o", "json").stdout)
    beta = next(p for p in data["placements"] if p["pod"] == "default/beta")
    assert beta["node"] is not None and len(beta["claims"][0]["instances"]) == 1
