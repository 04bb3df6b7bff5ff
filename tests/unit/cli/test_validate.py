"""``kubedra validate``: the examples pass; bad manifests fail with kubectl-like messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kubedra.cli.validate import validate
from kubedra.validation import field
from kubedra.validation.field import Path as FieldPath
from tests.vectors import REPO

EXAMPLES = REPO / "examples"


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(validate, list(args), input=stdin, catch_exceptions=False)


def run_edited_example(name: str, old: str, new: str) -> Result:
    """Validate ``examples/<name>`` from stdin with ``old`` replaced by ``new``."""
    text = (EXAMPLES / name).read_text()
    assert old in text, f"{name} no longer contains {old!r}"
    return run("-f", "-", stdin=text.replace(old, new))


def test_every_example_is_valid() -> None:
    """Each example as the release it is written for: ``examples/v1.34/`` and the 1.34
    snapshots (their Pods in 1.34's shape) as the default release, 1.34; the others with
    ``--emulated-version 1.30``."""
    files = sorted(EXAMPLES.rglob("*.yaml"))
    newer = [f for f in files if f.parent.name == "v1.34"
             or "apiVersion: resource.k8s.io/v1\n" in f.read_text()]
    assert any(f.parent.name == "snapshots" for f in newer)  # examples/snapshots/v1-*.yaml
    later = run(*(a for f in newer for a in ("-f", str(f))))
    assert later.exit_code == 0, later.output
    assert {"DeviceClass/gpu.example.com valid", "ResourceClaimTemplate/large-gpu valid",
            "Pod/gpu-pod valid", "Job/gpu-training valid"} <= set(later.stdout.splitlines())
    result = run("--emulated-version", "1.30",
                 *(a for f in files if f not in newer for a in ("-f", str(f))))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "ResourceSlice/worker-1-gpu.example.com-x7k2p valid" in lines  # reference/
    assert "ResourceClass/gpu.example.com valid" in lines
    assert "ResourceClassParameters/gpu-class-params valid" in lines
    assert "ResourceClaimParameters/large-gpu valid" in lines
    assert "ResourceClaimTemplate/large-gpu valid" in lines
    assert "Pod/gpu-pod valid" in lines
    assert "Job/external-batch valid" in lines
    assert "Namespace/gpu-driver valid" in lines
    assert result.stderr == ""


def test_installed_command_reads_stdin() -> None:
    text = (EXAMPLES / "v1.34" / "pod-with-gpu.yaml").read_text()
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "kubedra"), "validate", "-f", "-"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, "Pod/gpu-pod valid\n"), proc.stderr


SLICE = """apiVersion: resource.k8s.io/v1alpha2
kind: ResourceSlice
metadata:
  name: {name}
nodeName: worker-1
driverName: {driver}
namedResources:
  instances:
  - name: gpu-0
    attributes:
    - name: v
      version: "{version}"
"""


def test_single_cause_is_inline() -> None:
    result = run("-f", "-", stdin=SLICE.format(name="s", driver="gpu.example.com", version="1.0"))
    assert result.exit_code == 1
    assert result.stderr == (
        'The ResourceSlice "s" is invalid: namedResources.instances[0].attributes[0].version: '
        'Invalid value: "1.0": must be a string compatible with semver.org spec 2.0.0\n'
    )


def test_several_causes_are_listed() -> None:
    result = run("-f", "-", stdin=SLICE.format(name="s", driver='""', version="1.0.0"))
    assert result.exit_code == 1
    lines = result.stderr.split("\n")
    assert lines[0] == 'The ResourceSlice "s" is invalid: '
    assert lines[1] == "* driverName: Required value"
    assert lines[2].startswith('* driverName: Invalid value: "": a lowercase RFC 1123 subdomain')
    assert lines[3:] == [""]


def test_valid_and_invalid_documents_together() -> None:
    text = (
        SLICE.format(name="good", driver="gpu.example.com", version="1.0.0")
        + "---\n"
        + (SLICE.format(name="bad", driver="gpu.example.com", version="01.0.0"))
    )
    result = run("-f", "-", stdin=text)
    assert result.exit_code == 1
    assert result.stdout == "ResourceSlice/good valid\n"
    assert result.stderr.startswith('The ResourceSlice "bad" is invalid: ')


def test_pod_claim_errors() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "resourceClaims": [{"name": "gpu", "source": {}}],
            "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "tpu"}]}}],
        },
    }
    result = run("-f", "-", "--emulated-version", "1.30", stdin=json.dumps(pod))
    assert result.exit_code == 1
    assert "* spec.resourceClaims[0].source: Invalid value:" in result.stderr
    assert (
        '* spec.containers[0].resources.claims[0]: Not found: "tpu": must be one of the '
        "names in pod.spec.resourceClaims: gpu"
    ) in result.stderr


def test_job_managed_by_follows_the_gate_as_the_server_does() -> None:
    """JobManagedBy off (1.30's default): the create strategy drops the field before
    validation, so an invalid value is no error; with the gate on it is."""
    text = (EXAMPLES / "job-managed-by.yaml").read_text()
    text = text.replace("example.com/custom-controller", "not a path")
    dropped = run("-f", "-", "--emulated-version", "1.30", stdin=text)
    assert (dropped.exit_code, dropped.stdout) == (0, "Job/external-batch valid\n")
    gated = run("-f", "-", "--emulated-version", "1.30", "--feature-gates", "JobManagedBy=true",
                stdin=text)
    assert gated.exit_code == 1
    assert gated.stderr.startswith('The Job "external-batch" is invalid: spec.managedBy: ')


def test_unknown_and_duplicate_fields(tmp_path: Path) -> None:
    manifest = tmp_path / "ns.json"
    manifest.write_text(
        '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a","name":"b"},'
        '"spec":{"colour":"red"}}'
    )
    result = run("-f", str(manifest))
    assert result.exit_code == 1
    assert result.stderr == (
        f'error: {manifest}: Namespace in version "v1" cannot be handled as a Namespace: strict '
        'decoding error: unknown field "spec.colour", duplicate field "metadata.name"\n'
    )
    warned = run("-f", str(manifest), "--validate", "warn")
    assert warned.exit_code == 0
    assert 'Warning: unknown field "spec.colour"' in warned.stderr
    assert warned.stdout == "Namespace/b valid\n"
    assert run("-f", str(manifest), "--validate", "ignore").stderr == ""


@pytest.mark.parametrize(
    "text,message",
    [
        (
            "apiVersion: v1\nkind: Pod\nspec:\n  priority: high\n",
            'error: STDIN: Pod in version "v1" cannot be handled as a Pod: spec.priority: '
            "Expected `int | null`, got `str`",
        ),
        (
            "apiVersion: v1\nkind: Widget\nmetadata: {name: w}\n",
            'error: STDIN: no matches for kind "Widget" in version "v1"',
        ),
        ("metadata: {name: w}\n", "error: STDIN: Object 'Kind' is missing"),
        ("a: [1\n", "error: error parsing STDIN: error parsing YAML"),
        ("- 1\n- 2\n", "error: STDIN: expected an object, got list"),
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n  capacity: {cpu: lots}\n",
            "cannot be handled as a Node: status.capacity[cpu]: quantities must match",
        ),
    ],
)
def test_undecodable_objects(text: str, message: str) -> None:
    result = run("-f", "-", stdin=text)
    assert result.exit_code == 1
    assert message in result.stderr
    assert result.stderr.startswith("error: ")


def test_namespace_defaulting_and_cluster_scope() -> None:
    lease = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l}\n"
    assert run("-f", "-", stdin=lease).exit_code == 0
    bad_ns = run("-f", "-", "-n", "Bad", stdin=lease)
    assert bad_ns.stderr.startswith('The Lease "l" is invalid: metadata.namespace: Invalid value')
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n, namespace: x}\n"
    assert run("-f", "-", stdin=node).stdout == "Node/n valid\n"


def test_generate_name() -> None:
    result = run("-f", "-", stdin="apiVersion: v1\nkind: Namespace\nmetadata: {generateName: t-}\n")
    assert result.exit_code == 0
    assert result.stdout.startswith("Namespace/t-") and len(result.stdout.strip()) == len(
        "Namespace/t-xxxxx valid"
    )


def test_core_kind_rules() -> None:
    node = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  taints:\n"
        "  - {key: a, effect: NoSchedule}\n  - {key: a, effect: NoSchedule}\n"
        "  - {key: b, effect: Sometimes}\n"
    )
    result = run("-f", "-", stdin=node)
    assert result.stderr == (
        'The Node "n" is invalid: \n'
        '* metadata.taints[1]: Duplicate value: core.Taint{Key:"a", Value:"", '
        'Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and '
        "effect pair\n"
        '* metadata.taints[2].effect: Unsupported value: "Sometimes": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"\n'
    )
    lease = (
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l}\n"
        "spec: {leaseDurationSeconds: 0}\n"
    )
    assert run("-f", "-", stdin=lease).stderr == (
        'The Lease "l" is invalid: spec.leaseDurationSeconds: Invalid value: 0: '
        "must be greater than 0\n"
    )
    ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\nspec: {finalizers: [custom]}\n"
    assert run("-f", "-", stdin=ns).stderr == (
        'The Namespace "a" is invalid: spec.finalizers: Invalid value: "custom": name is '
        "neither a standard finalizer name nor is it fully qualified\n"
    )
    event = (
        "apiVersion: v1\nkind: Event\nmetadata: {name: e.1, namespace: default}\n"
        "involvedObject: {kind: Pod, name: p, namespace: other}\n"
    )
    assert run("-f", "-", stdin=event).stderr == (
        'The Event "e.1" is invalid: involvedObject.namespace: Invalid value: "other": '
        "does not match event.namespace\n"
    )


def test_missing_file_and_directory_filtering(tmp_path: Path) -> None:
    result = CliRunner().invoke(validate, ["-f", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1
    assert 'the path "' in result.output
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / "sub").mkdir()
    ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"
    (tmp_path / "sub" / "ns.yml").write_text(ns)
    assert run("-f", str(tmp_path)).stdout == ""
    assert run("-f", str(tmp_path), "-R").stdout == "Namespace/x valid\n"


def test_invalid_message_deduplicates_like_kubectl() -> None:
    from kubedra.cli.validate import invalid_message

    err = field.required(FieldPath("spec.x"))
    message = invalid_message("Pod", "p", [err, err])
    assert message == 'The Pod "p" is invalid: spec.x: Required value\n'


def test_new_style_event_needs_reporting_fields() -> None:
    event = (
        "apiVersion: v1\nkind: Event\nmetadata: {name: e, namespace: default}\n"
        "eventTime: '2024-05-01T10:00:00.000000Z'\ninvolvedObject: {kind: Node, name: n}\n"
    )
    lines = run("-f", "-", stdin=event).stderr.splitlines()
    assert lines[0] == 'The Event "e" is invalid: '
    assert lines[1] == "* reportingComponent: Required value"
    assert lines[2].startswith('* reportingComponent: Invalid value: "": name part must be')
    assert lines[-3:] == [
        "* reportingInstance: Required value",
        "* action: Required value",
        "* reason: Required value",
    ]


def test_selector_that_does_not_compile() -> None:
    result = run_edited_example(
        "gpu-claim-parameters.yaml",
        'attributes.quantity["memory"]',
        'attributes.nosuchkind["memory"]',
    )
    assert result.exit_code == 1
    assert result.stderr.startswith(
        'The ResourceClaimParameters "large-gpu" is invalid: '
        "driverRequests[0].requests[0].namedResources.selector: Invalid value: "
    )
    assert "compilation failed: ERROR: <input>:1:" in result.stderr


def test_yaml_duplicates_inside_a_list() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n"
        "    name: a\n    name: b\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: c}\n"
    )
    result = run("-f", "-", stdin=text)
    assert result.exit_code == 1
    assert result.stdout == "Namespace/c valid\n"
    assert result.stderr == (
        'error: STDIN: Namespace in version "v1" cannot be handled as a Namespace: strict '
        'decoding error: duplicate field "metadata.name"\n'
    )


def test_objects_over_the_servers_size_limit_are_rejected() -> None:
    """The server refuses bodies over 3 MiB with a 413; validate says the same."""
    from kubedra.registry.pipeline import MAX_REQUEST_BYTES

    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "l", "annotations": {"a": "x" * MAX_REQUEST_BYTES}}}
    result = run("-f", "-", stdin=json.dumps(lease))
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: STDIN: Request entity too large: limit is {MAX_REQUEST_BYTES}\n"
    )
    lease["metadata"]["annotations"] = {"a": "x" * (MAX_REQUEST_BYTES - 200)}
    under = run("-f", "-", stdin=json.dumps(lease))  # invalid, but for its annotations
    assert under.stderr.startswith('The Lease "l" is invalid: metadata.annotations: Too long')


V1_SLICE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
    "spec": {"driver": "gpu.example.com", "nodeName": "worker-1",
             "pool": {"name": "p", "generation": 0, "resourceSliceCount": 1},
             "devices": [{"name": "gpu-0", "taints": [{"key": "k", "effect": "Bad"}],
                          "attributes": {"model": {"string": "x" * 65}}}]},
}


def test_v1_manifests_are_checked_as_1_34() -> None:
    """resource.k8s.io/v1 exists in 1.34 only: its texts are 1.34's (apimachinery v0.34's
    TooLong), its gates 1.34's (DRADeviceTaints off: the strategy drops the taint)."""
    result = run("-f", "-", stdin=json.dumps(V1_SLICE))
    assert result.exit_code == 1
    assert result.stderr == (
        'The ResourceSlice "s" is invalid: spec.devices[0].attributes[model].string: '
        "Too long: may not be more than 64 bytes\n")
    gated = run("-f", "-", "--feature-gates", "DRADeviceTaints=true", stdin=json.dumps(V1_SLICE))
    assert gated.exit_code == 1
    assert ('* spec.devices[0].taints[0].effect: Unsupported value: "Bad": supported values: '
            '"NoExecute", "NoSchedule"') in gated.stderr


def test_a_gate_of_one_release_only() -> None:
    """A 1.34 gate is fine for 1.34 objects; a 1.30 object cannot be checked under it."""
    old = run("-f", "-", "--feature-gates", "DRADeviceTaints=true",
              stdin=SLICE.format(name="s", driver="gpu.example.com", version="1.0.0"))
    assert old.exit_code == 2
    assert "unrecognized feature gate: DRADeviceTaints (release 1.30)" in old.stderr
    unknown = run("-f", "-", "--feature-gates", "NoSuchGate=true", stdin="")
    assert unknown.exit_code == 2 and "unrecognized feature gate: NoSuchGate" in unknown.stderr
