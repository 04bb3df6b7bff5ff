"""A real ``kubedra example-driver`` process and a gRPC client generated from our .proto files.

The client modules are compiled by the test itself with grpcio-tools into a temp directory and
imported from there (top-level ``dra_v1alpha3_pb2`` etc.), so the bytes a driver process sees
come from protoc output for the .proto files, not from the SDK's classes. (Within one process
protobuf keeps one class per message, so when the SDK's modules are loaded as well, both names
lead to the same descriptors; the driver under test always runs in its own process.)
"""

from __future__ import annotations

import contextlib
import importlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import grpc
import pytest

from tests.e2e.conftest import _kubedra_command

PROTO_DIR = Path(__file__).resolve().parents[2] / "src" / "kubedra" / "proto"
START_TIMEOUT = 30.0


@dataclass
class WireModules:
    dra: ModuleType
    dra_grpc: ModuleType
    reg: ModuleType
    reg_grpc: ModuleType
    resource: ModuleType


def generate_client(out: Path) -> WireModules:
    from grpc_tools import protoc

    out.mkdir(parents=True, exist_ok=True)
    protos = sorted(p.name for p in PROTO_DIR.glob("*.proto"))
    args = ["protoc", f"-I{PROTO_DIR}", f"--python_out={out}", f"--grpc_python_out={out}"]
    assert protoc.main([*args, *protos]) == 0
    sys.path.insert(0, str(out))
    try:
        load = importlib.import_module
        return WireModules(
            load("dra_v1alpha3_pb2"),
            load("dra_v1alpha3_pb2_grpc"),
            load("pluginregistration_v1_pb2"),
            load("pluginregistration_v1_pb2_grpc"),
            load("resource_v1alpha2_pb2"),
        )
    finally:
        sys.path.remove(str(out))


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> WireModules:
    """The client modules, compiled once per test module."""
    return generate_client(tmp_path_factory.mktemp("wire"))


def get_info(registration_socket: Path) -> bytes:
    """The raw PluginInfo bytes a registration socket answers."""
    with grpc.insecure_channel(f"unix:{registration_socket}") as channel:
        answer: bytes = channel.unary_unary("/pluginregistration.Registration/GetInfo")(
            b"", timeout=10
        )
        return answer


@dataclass
class DriverProcess:
    name: str
    root: Path
    cdi_dir: Path
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def registration_socket(self) -> Path:
        return self.root / "plugins_registry" / f"{self.name}-reg.sock"

    @property
    def dra_socket(self) -> Path:
        return self.root / "plugins" / self.name / "dra.sock"

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def terminate(self, timeout: float = 15.0) -> int:
        """SIGTERM, then the exit code (SIGKILL if it does not exit within ``timeout``)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


def start_driver(
    root: Path, *args: str, name: str = "gpu.example.com", node: str = "worker", wait: bool = True
) -> DriverProcess:
    log_path = root / f"driver-{time.monotonic_ns()}.log"
    cdi_dir = root / "cdi"
    cmd = [
        *_kubedra_command(),
        "example-driver",
        "--driver-name",
        name,
        "--root-dir",
        str(root),
        "--cdi-dir",
        str(cdi_dir),
        "--node-name",
        node,
        "-v",
        *args,
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    driver = DriverProcess(name, root, cdi_dir, proc, log_path)
    if wait:
        deadline = time.monotonic() + START_TIMEOUT
        while not (_accepts(driver.registration_socket) and _accepts(driver.dra_socket)):
            if proc.poll() is not None or time.monotonic() > deadline:
                driver.terminate()
                pytest.fail(f"example driver did not start:\n{driver.log_tail()}")
            time.sleep(0.05)
    return driver


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def short_root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="drv-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def running_driver(*args: str, instances: int = 4) -> Iterator[DriverProcess]:
    with short_root() as root:
        driver = start_driver(root, "--instances", str(instances), *args)
        try:
            yield driver
        finally:
            driver.terminate()
