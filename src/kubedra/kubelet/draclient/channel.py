"""The connection to one registered driver's DRA socket, shared by every protocol adapter:
one cached channel per registration (a new registration makes a new client), a readiness wait
before each call, and failed calls worded as grpc-go words them."""

from __future__ import annotations

import asyncio

import grpc

from kubedra.kubelet.plugins import Plugin, PluginError

READY_TIMEOUT = 1.0


def target(path: str) -> str:
    """A gRPC target for a unix socket path (the kubelet dials paths)."""
    return path if path.startswith("unix:") else f"unix://{path}"


class DriverCallError(Exception):
    """A failed DRA call, worded on one line as grpc-go's status error is (``rpc error: code =
    DeadlineExceeded desc = Deadline Exceeded``), which the kubelet's events and logs quote;
    Python's own text for it is a multi-line repr."""

    def __init__(self, err: grpc.aio.AioRpcError) -> None:
        code = "".join(part.capitalize() for part in err.code().name.split("_"))
        super().__init__(f"rpc error: code = {code} desc = {err.details() or ''}")


class DriverChannel:
    def __init__(self, plugin: Plugin) -> None:
        self.plugin = plugin
        self.channel = grpc.aio.insecure_channel(target(plugin.endpoint))

    async def close(self) -> None:
        await self.channel.close()

    async def ready(self) -> None:
        try:
            await asyncio.wait_for(self.channel.channel_ready(), READY_TIMEOUT)
        except TimeoutError:
            raise PluginError("timed out waiting for gRPC connection to be ready") from None
