"""E2E fixtures: a real ``kubedra apiserver`` subprocess on 127.0.0.1 (SQLite in a temp dir,
HTTPS with the cluster CA, the administrator's kubeconfig written by the server), the official
Python client, and kubectl 1.30; the same for 1.34 (``apiserver_134``, ``kubectl_134``). The
servers emulate the release they name (1.30 unless a test says), not the command's default.
Raw HTTP clients use :func:`kubeconfig_session`: TLS verified against the kubeconfig's CA and
its user's credentials."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import aiohttp
import pytest
import yaml
from aiohttp import web

from kubedra.cli.kubectl import KubectlUnavailable, ensure_kubectl
from kubedra.client import kubeconfig as kubeconfig_file
from tests.e2e.official_client import ClientUnavailable, OfficialClient, ensure_client

START_TIMEOUT = 60.0


@dataclass
class Server:
    kubeconfig: Path
    data_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes]

    def log_tail(self, size: int = 4000) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-size:]
        return ""


def _kubedra_command() -> list[str]:
    script = Path(sys.executable).parent / "kubedra"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from kubedra.cli.main import main; main()"]


def _ready(kubeconfig: Path) -> bool:
    """The server answers /readyz with 200, authenticated as the kubeconfig says."""
    from kubernetes import config as kconfig

    if not kubeconfig.exists():
        return False
    try:
        api = kconfig.new_client_from_config(config_file=str(kubeconfig))
        try:
            resp = api.call_api("/readyz", "GET", auth_settings=["BearerToken"],
                                _preload_content=False, _request_timeout=2)
            return bool(resp[1] == 200)
        finally:
            api.close()
    except Exception:
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def kubeconfig_session(path: Path, **kwargs: Any) -> aiohttp.ClientSession:
    """An aiohttp session to the server of the kubeconfig at ``path``, as its user."""
    config = kubeconfig_file.load(path)
    headers = {"Authorization": f"Bearer {config.token}"} if config.token else {}
    connector = aiohttp.TCPConnector(ssl=config.ssl_context(), limit=kwargs.pop("limit", 100))
    return aiohttp.ClientSession(config.server, headers=headers, connector=connector, **kwargs)


def certificate_subject(path: Path) -> tuple[str, list[str]]:
    """CN and O values of the client certificate a kubeconfig carries."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    config = kubeconfig_file.load(path)
    assert config.client_cert_data is not None, f"{path} has no client certificate"
    subject = x509.load_pem_x509_certificate(config.client_cert_data).subject
    return (str(subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value),
            [str(a.value) for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)])


@contextlib.asynccontextmanager
async def stand_in_server(answer: Any, path: Path) -> Any:
    """A plain-HTTP server on 127.0.0.1 answering every request with ``answer(request)``
    (a stand-in for an API server gone wrong); yields the path of a kubeconfig to it,
    written at ``path``, whose user has a token."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        port = runner.addresses[0][1]
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
            "users": [{"name": "u", "user": {"token": "stand-in"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
        yield path
    finally:
        await runner.cleanup()


@contextlib.contextmanager
def apiserver_process(data: Path, *args: str, release: str | None = "1.30") -> Iterator[Path]:
    """A ``kubedra apiserver`` on 127.0.0.1 (port 0) storing in ``data``, with ``args``,
    emulating ``release`` unless ``args`` name one (``None``: the command's default);
    yields its kubeconfig once written, and checks its log stays clean."""
    kubeconfig = data / "kubeconfig"
    log_path = data / "log"
    emulated = ["--emulated-version", release] if release and "--emulated-version" not in args \
        else []
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [*_kubedra_command(), "apiserver", "--data-dir", str(data), "--port", "0",
             "--kubeconfig", str(kubeconfig), *emulated, *args],
            stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not kubeconfig.exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(log_path.read_text(errors="replace"))
                time.sleep(0.05)
            yield kubeconfig
        finally:
            _stop(proc)
    text = log_path.read_text(errors="replace")
    assert "Traceback" not in text, text[-3000:]


@pytest.fixture(scope="session")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("kubedra-apiserver")
    kubeconfig = data / "kubeconfig"
    log_path = data / "apiserver.log"
    log: IO[bytes] = log_path.open("wb")
    cmd = [*_kubedra_command(), "apiserver", "--data-dir", str(data), "--port", "0",
           "--kubeconfig", str(kubeconfig), "--emulated-version", "1.30",
           "--feature-gates", "JobManagedBy=true"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    server = Server(kubeconfig, data, log_path, proc)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _ready(kubeconfig):
            if proc.poll() is not None:
                pytest.fail(f"kubedra apiserver exited with {proc.returncode}:\n"
                            f"{server.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"kubedra apiserver not ready in {START_TIMEOUT}s:\n"
                            f"{server.log_tail()}")
            time.sleep(0.1)
        yield server
    finally:
        _stop(proc)
        log.close()


@pytest.fixture(scope="session")
def api_client(apiserver: Server) -> Iterator[Any]:
    from kubernetes import config as kconfig

    api = kconfig.new_client_from_config(config_file=str(apiserver.kubeconfig))
    yield api
    api.close()


@pytest.fixture
def namespace(api_client: Any) -> str:
    """A fresh namespace for one test."""
    from kubernetes import client

    name = "e2e-" + uuid.uuid4().hex[:8]
    client.CoreV1Api(api_client).create_namespace({"metadata": {"name": name}})
    return name


@dataclass
class Kubectl:
    binary: Path
    env: dict[str, str]

    def run(self, *args: str, stdin: str | None = None, check: bool = True,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([str(self.binary), *args], input=stdin, capture_output=True,
                              text=True, env=self.env, timeout=timeout, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n"
                                 f"{proc.stdout}\n{proc.stderr}")
        return proc

    def json(self, *args: str) -> Any:
        return yaml.safe_load(self.run(*args, "-o", "json").stdout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([str(self.binary), *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env)


def _kubectl(release: str, kubeconfig: Path, home: Path) -> Kubectl:
    """kubectl of ``release`` (skips when it cannot run here) with its own home and cache."""
    try:
        binary = ensure_kubectl(release)
    except KubectlUnavailable as err:
        pytest.skip(str(err))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(home / "cache")}
    return Kubectl(binary, env)


@pytest.fixture(scope="session")
def kubectl(apiserver: Server, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return _kubectl("1.30", apiserver.kubeconfig, tmp_path_factory.mktemp("kubectl-home"))


def wait_ready(kubeconfig: Path) -> None:
    """Until the server of ``kubeconfig`` answers /readyz (or fail after START_TIMEOUT)."""
    deadline = time.monotonic() + START_TIMEOUT
    while not _ready(kubeconfig):
        if time.monotonic() > deadline:
            pytest.fail(f"kubedra apiserver not ready in {START_TIMEOUT}s")
        time.sleep(0.1)


@pytest.fixture(scope="session")
def apiserver_134(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A ``kubedra apiserver --emulated-version 1.34``; its administrator's kubeconfig."""
    with apiserver_process(tmp_path_factory.mktemp("kubedra-134"), "--emulated-version",
                           "1.34") as kubeconfig:
        wait_ready(kubeconfig)
        yield kubeconfig


@pytest.fixture(scope="session")
def kubectl_134(apiserver_134: Path, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """kubectl 1.34 on the 1.34 server."""
    return _kubectl("1.34", apiserver_134, tmp_path_factory.mktemp("kubectl-134-home"))


@pytest.fixture(params=["1.30", "1.34"])
def kubectl_134_any_era(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                        ) -> Kubectl:
    """kubectl 1.34 on the 1.30 server and on the 1.34 server."""
    if request.param == "1.34":
        kubeconfig = request.getfixturevalue("apiserver_134")
    else:
        kubeconfig = request.getfixturevalue("apiserver").kubeconfig
    return _kubectl("1.34", kubeconfig, tmp_path_factory.mktemp("kubectl-134-any"))


def official_client_34(kubeconfig: Path) -> OfficialClient:
    """``kubernetes==34.1.0`` on the server of ``kubeconfig`` (skips when it cannot be
    installed here)."""
    try:
        return OfficialClient(ensure_client(), kubeconfig)
    except ClientUnavailable as err:
        pytest.skip(str(err))


@pytest.fixture(scope="session")
def client_134(apiserver_134: Path) -> OfficialClient:
    return official_client_34(apiserver_134)
