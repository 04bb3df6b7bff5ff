"""kubelet-plugin-registration.json, the driver side: what a plugin answers in the
plugin-watcher registration steps, how it takes the kubelet's failure notices, and the
ListAndWatch end-of-stream. (Version negotiation and the handler's validation are the
kubelet's; the node agent checks those cases.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import grpc
import pytest

from kubedra.driver import Driver, RegistrationStatus
from kubedra.driver.testing import FakeKubelet
from kubedra.proto.generated import pluginregistration_v1_pb2 as reg_pb2
from kubedra.proto.generated import pluginregistration_v1_pb2_grpc as reg_grpc
from tests.unit.driver.helpers import short_dir
from tests.vectors import load, vector_cases

VECTORS = load("kubelet-plugin-registration.json")
WATCHER = VECTORS["PluginWatcherRegistration"]
FILE = "kubelet-plugin-registration.json"
pytestmark = pytest.mark.timeout(60)
__all__ = ["short_dir"]


async def _noop_prepare(claim: Any) -> list[str]:
    return []


async def _noop_unprepare(claim: Any) -> None:
    return None


def _driver(root: Path) -> Driver:
    return Driver("dummy-plugin", prepare=_noop_prepare, unprepare=_noop_unprepare, root_dir=root)


@vector_cases(
    FILE,
    [
        {
            "name": "plugin-info",
            "type": WATCHER["pluginInfoType"],
            "versions": WATCHER["driverLibrarySupportedVersions"],
        }
    ],
)
async def test_get_info(case: dict[str, Any], short_dir: Path) -> None:
    async with _driver(short_dir) as driver:
        async with grpc.aio.insecure_channel(f"unix:{driver.registration_socket}") as channel:
            info = await reg_grpc.RegistrationStub(channel).GetInfo(
                reg_pb2.InfoRequest(), timeout=1
            )  # the kubelet's 1 s GetInfo timeout
        assert info.type == case["type"]
        assert list(info.supported_versions) == case["versions"]
        assert info.endpoint == str(driver.dra_socket)


@vector_cases(FILE, [{"name": "steps", "steps": WATCHER["steps"]}])
async def test_registration_steps_succeed(case: dict[str, Any], short_dir: Path) -> None:
    assert any("NotifyRegistrationStatus(true, '')" in s for s in case["steps"])
    async with _driver(short_dir) as driver, FakeKubelet(driver.registration_socket):
        assert await driver.wait_registered(timeout=5) == RegistrationStatus(True, "")


def _failure_notices() -> list[dict[str, Any]]:
    """The steps' NotifyRegistrationStatus(false, '<text>') messages, filled in."""
    out = []
    for step in WATCHER["steps"]:
        found = re.search(r"NotifyRegistrationStatus\(false, '([^']*)'\)", step)
        if found:
            text = found.group(1).replace("<type>", "DRAPlugin").replace("<path>", "/x.sock")
            out.append({"name": text[:40], "error": text.replace("<err>", "boom")})
    return out


@vector_cases(FILE, _failure_notices())
async def test_failure_notice_is_recorded_and_answered(
    case: dict[str, Any], short_dir: Path
) -> None:
    async with _driver(short_dir) as driver:
        async with grpc.aio.insecure_channel(f"unix:{driver.registration_socket}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await reg_grpc.RegistrationStub(channel).NotifyRegistrationStatus(
                    reg_pb2.RegistrationStatus(plugin_registered=False, error=case["error"]),
                    timeout=5,
                )
        assert err.value.details() == f"failed registration process: {case['error']}"
        assert driver.registration_status == RegistrationStatus(False, case["error"])
        assert not driver.registered.is_set()


@vector_cases(FILE, VECTORS["ListAndWatchResources"])
async def test_stream_ends_with_eof(case: dict[str, Any], short_dir: Path) -> None:
    driver = _driver(short_dir)
    async with driver, FakeKubelet(driver.registration_socket) as kubelet:
        assert await kubelet.resources() == []
        driver.publish([])
        assert await kubelet.resources() == []
        assert case["expectedFinalError"] == "EOF"
        await driver.stop()
        with pytest.raises(EOFError):
            await kubelet.resources()
