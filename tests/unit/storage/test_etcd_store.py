"""The etcd backend beyond the shared contract: flags, TLS, fail-over, replicas sharing one
etcd, and writes whose outcome a failing member left unknown (all on a real etcd)."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from kubedra.storage.contract import CompactedError, KeyValue, StoreError
from kubedra.storage.etcd import EtcdConfig, EtcdConfigError, EtcdStore
from kubedra.storage.etcd.client import Connection
from kubedra.storage.etcd.server import free_ports
from tests.etcd_processes import EtcdProcesses, etcd_single, etcd_three, require_etcd
from tests.storage_conformance.helpers import take

__all__ = ["etcd_single", "etcd_three"]


def _root() -> str:
    return f"/unit-{uuid.uuid4().hex}"


@pytest.fixture
async def pair(etcd_single: EtcdProcesses) -> AsyncIterator[tuple[EtcdStore, EtcdStore]]:
    """Two stores (two API server replicas) over the same keys of one etcd."""
    root, config = _root(), EtcdConfig.parse(etcd_single.urls)
    one = await EtcdStore.open(config, root=root, compact_interval=0)
    two = await EtcdStore.open(config, root=root, compact_interval=0)
    try:
        yield one, two
    finally:
        await one.close()
        await two.close()


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ("", "no etcd servers"),
        ("127.0.0.1:2379", r"want http\(s\)://host:port"),
        ("http://127.0.0.1", r"want http\(s\)://host:port"),
        ("http://127.0.0.1:99999", r"want http\(s\)://host:port"),
        ("http://127.0.0.1:2379/x", "no path"),
        ("http://a:1,https://b:2", "mix http and https"),
    ],
)
def test_bad_servers_are_refused(servers: str, message: str) -> None:
    with pytest.raises(EtcdConfigError, match=message):
        EtcdConfig.parse(servers)


def test_tls_files_are_checked(tmp_path: Path) -> None:
    cert = tmp_path / "c.pem"
    cert.write_text("x")
    with pytest.raises(EtcdConfigError, match="go together"):
        EtcdConfig.parse("https://a:1", certfile=cert)
    with pytest.raises(EtcdConfigError, match="use https"):
        EtcdConfig.parse("http://a:1", cafile=cert)
    with pytest.raises(EtcdConfigError, match="no such file"):
        EtcdConfig.parse("https://a:1", cafile=tmp_path / "missing.pem")
    config = EtcdConfig.parse(" https://a:1 , https://[::1]:2 ", cafile=cert)
    assert config.endpoints == ("a:1", "[::1]:2") and config.tls
    assert config.urls == "https://a:1,https://[::1]:2"


async def test_watch_on_one_replica_sees_writes_through_the_other(
    pair: tuple[EtcdStore, EtcdStore],
) -> None:
    one, two = pair
    events = two.watch("/p/", await two.current_revision())
    try:
        pending = asyncio.ensure_future(take(events, 2))
        await asyncio.sleep(0.05)
        a = await one.create("/p/a", b"1")
        await one.update("/p/a", b"2", a.mod_revision)
        got = await pending
    finally:
        await events.aclose()
    assert [(e.kv.value, e.revision) for e in got] == [(b"1", a.mod_revision),
                                                       (b"2", a.mod_revision + 1)]


async def test_compare_and_swap_holds_across_replicas(pair: tuple[EtcdStore, EtcdStore]) -> None:
    one, two = pair
    kv = await one.create("/c", b"0")
    results = await asyncio.gather(
        one.update("/c", b"one", kv.mod_revision), two.update("/c", b"two", kv.mod_revision),
        return_exceptions=True,
    )
    assert sum(isinstance(r, KeyValue) for r in results) == 1


async def test_compaction_by_one_replica_is_seen_by_the_other(
    pair: tuple[EtcdStore, EtcdStore],
) -> None:
    one, two = pair
    kv = await one.create("/k", b"0")
    for i in range(5):
        kv = await one.update("/k", str(i).encode(), kv.mod_revision)
    target = kv.mod_revision - 1
    await one.compact(target)
    assert await two.compacted_revision() == target
    with pytest.raises(CompactedError) as info:
        await two.get("/k", revision=target - 1)
    assert info.value.compacted == target
    assert (await two.get("/k", revision=target)) is not None


async def test_fails_over_past_a_dead_endpoint(etcd_single: EtcdProcesses) -> None:
    dead = f"http://127.0.0.1:{free_ports(1)[0]}"
    store = await EtcdStore.open(EtcdConfig.parse(f"{dead},{etcd_single.urls}"), root=_root(),
                                 compact_interval=0)
    try:
        kv = await store.create("/a", b"1")
        assert await store.get("/a") == kv
    finally:
        await store.close()


async def test_no_member_answers_is_a_clear_error() -> None:
    config = EtcdConfig.parse(f"http://127.0.0.1:{free_ports(1)[0]}")
    with pytest.raises(StoreError, match="UNAVAILABLE"):
        await EtcdStore.open(config, failover_timeout=0.5)


class _LosesResponses(Connection):
    """A real connection whose next ``lose`` writes reach etcd but whose answers are lost,
    as when the member goes away between committing and replying."""

    lose = 0

    async def kv(self, method: str, request: Any, *, mutating: bool = False) -> Any:
        response = await super().kv(method, request, mutating=mutating)
        if mutating and self.lose:
            self.lose -= 1
            raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(),
                                       grpc.aio.Metadata(), details="Socket closed")
        return response


@pytest.fixture
async def lossy(etcd_single: EtcdProcesses) -> AsyncIterator[tuple[EtcdStore, _LosesResponses]]:
    conn = _LosesResponses(EtcdConfig.parse(etcd_single.urls))
    store = EtcdStore(conn, _root())
    try:
        yield store, conn
    finally:
        await store.close()


async def test_create_that_landed_is_acknowledged(
    lossy: tuple[EtcdStore, _LosesResponses],
) -> None:
    store, conn = lossy
    before = await store.current_revision()
    conn.lose = 1
    kv = await store.create("/a", b"v")
    assert kv == KeyValue("/a", b"v", before + 1, before + 1)
    assert await store.current_revision() == before + 1  # written once


async def test_update_that_landed_is_acknowledged(
    lossy: tuple[EtcdStore, _LosesResponses],
) -> None:
    store, conn = lossy
    kv = await store.create("/a", b"v1")
    conn.lose = 1
    new = await store.update("/a", b"v2", kv.mod_revision)
    assert (new.value, new.mod_revision) == (b"v2", kv.mod_revision + 1)
    assert await store.get("/a") == new


async def test_delete_that_may_have_landed_says_so(
    lossy: tuple[EtcdStore, _LosesResponses],
) -> None:
    store, conn = lossy
    kv = await store.create("/a", b"v1")
    conn.lose = 1
    with pytest.raises(StoreError, match="may have been applied"):
        await store.delete("/a", kv.mod_revision)
    assert await store.get("/a") is None


async def test_watch_resumes_on_another_member(tmp_path: Path) -> None:
    require_etcd()
    etcd = EtcdProcesses(tmp_path, 3)
    try:
        store = await EtcdStore.open(EtcdConfig.parse(etcd.urls), compact_interval=0)
        try:
            base = await store.current_revision()
            events = store.watch("/w/", base)
            first = await store.create("/w/0", b"")
            assert [e.revision for e in await take(events, 1)] == [first.mod_revision]
            etcd.kill(etcd.cluster.members[0])  # the endpoint the watch streams from
            written = [first.mod_revision]
            for i in range(1, 20):
                written.append((await store.create(f"/w/{i}", b"")).mod_revision)
            assert [e.revision for e in await take(events, 19)] == written[1:]
            await events.aclose()
        finally:
            await store.close()
    finally:
        etcd.stop()


def _certificates(tmp: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate plus key for 127.0.0.1 signed by it (server and client)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)

    def build(subject: str, issuer: x509.Name, key: Any, signer: Any, ca: bool) -> Any:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    ca = build("test-ca", ca_name, ca_key, ca_key, True)
    cert = build("127.0.0.1", ca_name, key, ca_key, False)
    paths = tmp / "ca.pem", tmp / "cert.pem", tmp / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


async def test_tls_with_client_certificates(tmp_path: Path) -> None:
    require_etcd()
    ca, cert, key = _certificates(tmp_path)
    port = free_ports(1)[0]
    url = f"https://127.0.0.1:{port}"
    etcd = EtcdProcesses(tmp_path, 1, extra_args=(
        "--listen-client-urls", url, "--advertise-client-urls", url,
        "--cert-file", str(cert), "--key-file", str(key), "--trusted-ca-file", str(ca),
        "--client-cert-auth"))
    try:
        config = EtcdConfig.parse(url, cafile=ca, certfile=cert, keyfile=key)
        store = await EtcdStore.open(config, compact_interval=0)
        try:
            kv = await store.create("/tls", b"ok")
            assert await store.get("/tls") == kv
        finally:
            await store.close()
        # Without a client certificate the server refuses the connection.
        with pytest.raises(StoreError):
            await EtcdStore.open(EtcdConfig.parse(url, cafile=ca), failover_timeout=1)
    finally:
        etcd.stop()


async def test_large_lists_are_read_in_pages_at_one_revision(
    pair: tuple[EtcdStore, EtcdStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = pair
    monkeypatch.setattr("kubedra.storage.etcd.store._PAGE", 7)
    await asyncio.gather(*(one.create(f"/l/{i:02d}", b"0") for i in range(30)))
    then = await one.current_revision()
    await one.create("/l/99", b"later")
    everything = await two.list("/l/", revision=then)
    assert [kv.key for kv in everything.items] == [f"/l/{i:02d}" for i in range(30)]
    assert not everything.more and everything.revision == then
    page = await two.list("/l/", revision=then, limit=17, start_after="/l/04")
    assert [kv.key for kv in page.items] == [f"/l/{i:02d}" for i in range(5, 22)]
    assert page.more and page.remaining == 8
    now = await two.list("/l/")
    assert len(now.items) == 31 and now.revision == then + 1
