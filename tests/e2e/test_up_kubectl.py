"""kubectl 1.30's everyday read-only commands against ``kubedra up --emulated-version 1.30``:
``kubectl version`` (client and server), ``kubectl explain`` of the DRA kinds, ``kubectl auth
whoami`` and impersonation by the administrator ``up``'s kubeconfig names; ``kubedra
fetch-kubectl`` prints the path of the default release's kubectl (1.34), ``--version``
another's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from tests.e2e.conftest import _stop as stop

BANNER = "Press Ctrl-C to stop."


@pytest.fixture(scope="module")
def up_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    try:
        binary = ensure_kubectl("1.30")
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    data = tmp_path_factory.mktemp("up-kubectl")
    log = (data / "up.out").open("w+b")
    proc = subprocess.Popen(
        [sys.executable, "-c", "from kubedra.cli.main import main; main()", "up",
         "--data-dir", str(data / "data"), "--port", "0", "--fake-nodes", "1",
         "--emulated-version", "1.30"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while BANNER not in (data / "up.out").read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail((data / "up.out").read_text(errors="replace"))
            time.sleep(0.1)
        yield {"PATH": f"{binary.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
               "HOME": str(data), "KUBECONFIG": str(data / "data" / "kubeconfig")}
    finally:
        stop(proc)
        log.close()


def _kubectl(env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    assert proc.returncode == 0, f"kubectl {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_kubectl_version_prints_client_and_server(up_env: dict[str, str]) -> None:
    out = _kubectl(up_env, "version")
    assert "Client Version: v1.30.0" in out
    assert "Server Version: v1.30.0" in out


def test_the_administrator_may_impersonate(up_env: dict[str, str]) -> None:
    assert _kubectl(up_env, "auth", "whoami").split() == [
        "ATTRIBUTE", "VALUE", "Username", "kubernetes-admin",
        "Groups", "[system:masters", "system:authenticated]"]
    assert _kubectl(up_env, "auth", "whoami", "--as=jane").split()[2:] == [
        "Username", "jane", "Groups", "[system:authenticated]"]
    proc = subprocess.run(["kubectl", "auth", "can-i", "delete", "nodes", "--as=nobody"],
                          capture_output=True, text=True, env=up_env, timeout=60, check=False)
    assert (proc.returncode, proc.stdout) == (1, "no\n"), proc.stderr


def test_kubectl_explain_resourceclaim_recursive(up_env: dict[str, str]) -> None:
    out = _kubectl(up_env, "explain", "resourceclaim", "--recursive")
    assert "KIND:       ResourceClaim" in out
    assert "vendorClaimParameters\t<Object>" in out


def test_kubectl_explain_claim_parameters_requests(up_env: dict[str, str]) -> None:
    out = _kubectl(up_env, "explain", "resourceclaimparameters.driverRequests.requests")
    assert "FIELD: requests <[]ResourceRequest>" in out
    assert "Selector is a CEL expression" not in out  # one level only
    assert "namedResources\t<NamedResourcesRequest>" in out


@pytest.mark.parametrize(("args", "release", "version"), [
    ((), "1.34", "v1.34.5"), (("--version", "1.30"), "1.30", "v1.30.0"),
    (("--version", "1.34"), "1.34", "v1.34.5")], ids=["default", "1.30", "1.34"])
def test_fetch_kubectl_prints_the_path_of_the_release_s_kubectl(
        args: tuple[str, ...], release: str, version: str) -> None:
    """``kubedra fetch-kubectl`` (``make kubectl``): the cached kubectl of the default
    release, 1.34; ``--version`` names another; each release's beside the other's."""
    try:
        binary = ensure_kubectl(release)
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    proc = subprocess.run(
        [sys.executable, "-c", "from kubedra.cli.main import main; main()", "fetch-kubectl",
         *args], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{binary}\n"
    assert binary.parent.name == version
    done = subprocess.run([proc.stdout.strip(), "version", "--client"], capture_output=True,
                          text=True, timeout=60, check=True)
    assert version in done.stdout
