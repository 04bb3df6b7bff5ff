"""A local cluster as separate processes: API server (embedded SQLite store), scheduler and
controller manager. Used by ``kubedra up``, the end-to-end tests and the benchmarks.

It serves HTTPS with the cluster CA in ``DATA/pki``; each component has its own identity
(:mod:`kubedra.cli.credentials`): ``DATA/kubeconfig`` is the administrator's,
``DATA/scheduler.kubeconfig`` and ``DATA/controller-manager.kubeconfig`` the components',
``DATA/nodes/<name>.kubeconfig`` each node's.

On etcd (an external cluster, or local members it runs itself) it can run several API server
replicas behind a front (:mod:`kubedra.cli.front`) on the cluster's port: every client, the
administrator's kubeconfig included, dials the front, which passes each connection to a ready
replica, so the cluster keeps working while any one replica is down. Each replica's own
kubeconfig is ``DATA/kubeconfig-<i>``. A replica keeps the port it first bound when it is
started again, so the front (and anyone dialing it directly) finds it where it was.

Before anything is touched the cluster takes its data dir (an exclusive lock on
``<data dir>/lock`` that names the holder's pid) and, for a fixed port, checks that the port
is free, so a second cluster fails with one clear line instead of breaking the first. Every
component follows its supervisor: if the supervisor dies, even by SIGKILL, the component is
sent SIGTERM (see :func:`kubedra.cli.runtime.follow_supervisor`) and stops, so no orphan
keeps the port or the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from kubedra.apiserver.pki import ClusterPki
from kubedra.cli.contenttype import DEFAULT, content_type_args
from kubedra.cli.credentials import (
    ADMIN,
    CONTROLLER_MANAGER,
    FRONT,
    KUBELET_CLIENT,
    KUBELET_CLIENT_FILES,
    SCHEDULER,
    certificate,
    node_identity,
    node_kubeconfig_path,
    write_kubeconfig,
    write_node_serving,
)
from kubedra.cli.datadir import private_directory
from kubedra.cli.front import Front
from kubedra.client import kubeconfig
from kubedra.storage.etcd.server import LoopbackCluster
from kubedra.storage.factory import StoreKindError, claim_data_dir

# Every component, etcd too, arms the parent-death signal first (it survives execv).
_ENTRY = "from kubedra.cli.runtime import follow_supervisor; follow_supervisor({pid}); {run}"
_KUBEDRA = "from kubedra.cli.main import main; main()"
_EXEC = "import os, sys; os.execv(sys.argv[1], sys.argv[1:])"


class ClusterError(Exception):
    pass


def lock_data_dir(data_dir: Path) -> int:
    """Hold ``<data dir>/lock`` (released when this process exits, however it exits) and
    write our pid in it; the returned descriptor must stay open."""
    private_directory(data_dir)
    fd = os.open(data_dir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise ClusterError(f"data dir {data_dir} is in use by pid {holder}") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def check_port_free(port: int) -> None:
    """Fail if 127.0.0.1:``port`` cannot be bound (port 0 always can)."""
    if port == 0:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise ClusterError(f"port {port} is in use") from None
            raise ClusterError(f"port {port} cannot be used: {err.strerror}") from None


@dataclass
class Component:
    name: str
    args: list[str]
    log_path: Path
    process: asyncio.subprocess.Process | None = None
    restarts: int = 0
    started_at: float = field(default=0.0)
    binary: str | None = None
    """What runs ``args``: a kubedra command by default, else this binary (etcd)."""

    async def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                *self.argv(),
                stdout=log, stderr=log, stdin=asyncio.subprocess.DEVNULL,
                start_new_session=True)
        self.started_at = time.monotonic()

    def argv(self) -> list[str]:
        run = _KUBEDRA if self.binary is None else _EXEC
        program = [] if self.binary is None else [self.binary]
        return [sys.executable, "-c", _ENTRY.format(pid=os.getpid(), run=run), *program,
                *self.args]

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def stop(self, grace: float = 10.0) -> None:
        proc = self.process
        if proc is None or proc.returncode is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace)
        except TimeoutError:
            proc.kill()
            await proc.wait()

    async def kill(self) -> None:
        proc = self.process
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()


def etcd_components(plan: LoopbackCluster, logs: Path) -> list[Component]:
    """One component per member of ``plan``, logging to ``logs/<member>.log``."""
    components = []
    for member in plan.members:
        binary, *args = plan.argv(member)
        components.append(Component(member.name, args, logs / f"{member.name}.log",
                                    binary=binary))
    return components


def _keep_port(replica: Component, url: str) -> None:
    """Start ``replica`` on the port it bound (``url``'s) from now on."""
    at = replica.args.index("--port") + 1
    replica.args[at] = url.rsplit(":", 1)[1]


@contextlib.asynccontextmanager
async def local_etcd(data_dir: Path, members: int = 1) -> AsyncIterator[str]:
    """Run a loopback etcd under ``data_dir``; yields its ``--etcd-servers`` value."""
    plan = LoopbackCluster.plan(data_dir, members)
    components = etcd_components(plan, data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        for c in components:
            await c.start()
        yield plan.client_urls
    finally:
        for c in components:
            await c.stop()


class LocalCluster:
    """Start with :meth:`start`, stop with :meth:`stop` (or use ``async with``)."""

    def __init__(self, data_dir: Path, *, port: int = 0, verbose: int = 0,
                 feature_gates: str = "", schedulers: int = 1,
                 controller_manager: bool = True,
                 scheduler_args: Sequence[str] = (),
                 controller_manager_args: Sequence[str] = (), etcd_servers: str | None = None,
                 etcd_members: int = 0, apiservers: int = 1, audit_log: bool = True,
                 emulated_version: str = "", runtime_config: str = "",
                 content_type: str = DEFAULT) -> None:
        """``audit_log``: each API server writes ``audit.log`` in its data dir (benchmarks
        of the scheduling path turn it off, as upstream's scheduler_perf runs without one).
        ``emulated_version`` and ``runtime_config`` go to the API servers (empty: their
        default); the other components learn the release from discovery. ``content_type``:
        the scheduler's and the controller manager's ``--kube-api-content-type``."""
        self.data_dir = data_dir
        self.port = port
        self._lock: int | None = None
        self.kubeconfig_path = data_dir / "kubeconfig"
        self.pki = ClusterPki(data_dir / "pki")
        self.nodes_dir = data_dir / "nodes"
        #: Nodes that get their own kubeconfig (``DATA/nodes/<name>.kubeconfig``) at start.
        self.node_names: list[str] = []
        logs = data_dir / "logs"
        vflag = ["-" + "v" * verbose] if verbose else []
        self.etcd: list[Component] = []
        if etcd_members:
            plan = LoopbackCluster.plan(data_dir / "etcd", etcd_members)
            etcd_servers = plan.client_urls
            self.etcd = etcd_components(plan, logs)
        self.store_kind = "sqlite" if etcd_servers is None else "etcd"
        if apiservers > 1 and etcd_servers is None:
            raise ClusterError("several API servers need etcd (the SQLite file has one owner)")
        self.front: Front | None = None
        #: Each replica's own kubeconfig; with one replica, the administrator's.
        self.kubeconfigs = ([self.kubeconfig_path] if apiservers == 1 else
                            [data_dir / f"kubeconfig-{i}" for i in range(apiservers)])
        self.apiservers: list[Component] = []
        for i, kc in enumerate(self.kubeconfigs):
            replica_dir = data_dir if i == 0 else data_dir / f"apiserver-{i}"
            args = ["apiserver", "--data-dir", str(replica_dir), "--cert-dir",
                    str(self.pki.directory), "--port", str(port if apiservers == 1 else 0),
                    "--kubeconfig", str(kc), *vflag]
            if audit_log:
                args += ["--audit-log-path", str(replica_dir / "audit.log")]
            if feature_gates:
                args += ["--feature-gates", feature_gates]
            if emulated_version:
                args += ["--emulated-version", emulated_version]
            if runtime_config:
                args += ["--runtime-config", runtime_config]
            if etcd_servers is not None:
                args += ["--etcd-servers", etcd_servers]
            name = "apiserver" if i == 0 else f"apiserver-{i}"
            self.apiservers.append(Component(name, args, logs / f"{name}.log"))
        self.apiserver = self.apiservers[0]
        self.component_kubeconfigs = {
            SCHEDULER: data_dir / "scheduler.kubeconfig",
            CONTROLLER_MANAGER: data_dir / "controller-manager.kubeconfig",
        }
        client_args = ["--kubeconfig", str(self.component_kubeconfigs[SCHEDULER]), *vflag,
                       *content_type_args(content_type)]
        self.schedulers = [
            Component(f"scheduler-{i}", ["scheduler", *client_args, "--identity",
                                         f"scheduler-{i}", *scheduler_args],
                      logs / f"scheduler-{i}.log")
            for i in range(schedulers)]
        self.others: list[Component] = list(self.schedulers)
        if controller_manager:
            gates = ["--feature-gates", feature_gates] if feature_gates else []
            self.controller_manager: Component | None = Component(
                "controller-manager",
                ["controller-manager", "--kubeconfig",
                 str(self.component_kubeconfigs[CONTROLLER_MANAGER]), *vflag, *gates,
                 *content_type_args(content_type),
                 *controller_manager_args],
                logs / "controller-manager.log")
            self.others.append(self.controller_manager)
        else:
            self.controller_manager = None
        #: The replicas' URLs (once started).
        self.servers: list[str] = []

    @property
    def server(self) -> str:
        """The URL clients dial (once started): the front's, or the one replica's."""
        if self.front is not None:
            return self.front.url
        return self.servers[0] if self.servers else ""

    @property
    def components(self) -> list[Component]:
        return [*self.etcd, *self.apiservers, *self.others]

    async def start(self, timeout: float = 60.0) -> None:
        """Raises :class:`ClusterError` (having changed nothing) if the data dir or the port
        is taken, or the data dir's cluster lives in the other store."""
        self._lock = lock_data_dir(self.data_dir)
        try:
            check_port_free(self.port)
            claim_data_dir(self.data_dir, self.store_kind)
        except StoreKindError as err:
            self._release()
            raise ClusterError(str(err)) from None
        except ClusterError:
            self._release()
            raise
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        # made once here, so replicas starting together find the same CA and certificate
        self.pki.ensure_serving("127.0.0.1")
        self.pki.ensure_client(KUBELET_CLIENT_FILES, KUBELET_CLIENT.user)
        for c in self.etcd:
            await c.start()
        self.kubeconfig_path.unlink(missing_ok=True)  # a previous run's names an old port
        for c, kc in zip(self.apiservers, self.kubeconfigs, strict=True):
            kc.unlink(missing_ok=True)
            await c.start()
        self.servers = [await self._wait_ready(c, kc, timeout)
                        for c, kc in zip(self.apiservers, self.kubeconfigs, strict=True)]
        for c, url in zip(self.apiservers, self.servers, strict=True):
            _keep_port(c, url)
        if len(self.servers) > 1:
            credentials, ca_pem = certificate(self.pki, FRONT)
            probe = kubeconfig.client_config(self.servers[0], credentials, ca_pem)
            self.front = Front(self.servers, probe.ssl_context(), port=self.port)
            await self.front.start()
            write_kubeconfig(self.pki, self.kubeconfig_path, self.server, ADMIN)
        self._write_credentials()
        for c in self.others:
            await c.start()

    def _write_credentials(self) -> None:
        """A kubeconfig per component and per node, each with its own client certificate,
        all dialing :attr:`server`."""
        for who, path in self.component_kubeconfigs.items():
            write_kubeconfig(self.pki, path, self.server, who)
        for name in self.node_names:
            self.node_kubeconfig(name)

    def node_kubeconfig(self, node: str) -> Path:
        """Write (once started) the kubeconfig of node ``node``, ``system:node:<node>`` in
        ``system:nodes``, and its serving certificate (``<node>.kubelet.crt``); return the
        kubeconfig's path."""
        path = node_kubeconfig_path(self.nodes_dir, node)
        write_kubeconfig(self.pki, path, self.server, node_identity(node))
        write_node_serving(self.pki, self.nodes_dir, node)
        return path

    async def _wait_ready(self, apiserver: Component, kubeconfig_path: Path,
                          timeout: float) -> str:
        """The URL of ``apiserver`` once it answers ``/readyz``."""
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession() as session:
            while True:
                if not apiserver.running:
                    raise ClusterError(f"{apiserver.name} exited; see {apiserver.log_path}")
                if kubeconfig_path.exists():
                    with contextlib.suppress(kubeconfig.KubeconfigError, aiohttp.ClientError,
                                             OSError):
                        config = kubeconfig.load(kubeconfig_path)
                        async with session.get(config.server + "/readyz",
                                               ssl=config.ssl_context()) as resp:
                            if resp.status == 200:
                                return config.server
                if time.monotonic() > deadline:
                    raise ClusterError(f"{apiserver.name} did not become ready")
                await asyncio.sleep(0.05)

    async def stop(self) -> None:
        for c in reversed(self.components):
            await c.stop()
        if self.front is not None:
            await self.front.stop()
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    async def __aenter__(self) -> LocalCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
