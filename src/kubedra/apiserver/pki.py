"""The cluster's PKI, kept in one directory (``--cert-dir``, by default ``DATA/pki``): a
cluster CA, the API server's serving certificate, the ServiceAccount token signing key, and
client certificates the CA signs (CN = user, O = groups, as kube-apiserver's x509
authenticator reads them).

Everything is made on first start and reused afterwards; private keys are written 0600.
Files are created with an exclusive link, so replicas that start at once over one directory
all end up with the same CA. Keys are ECDSA P-256: cheap to make and to handshake with.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
LEAF_DAYS = 365
#: A certificate this close to its end is made again on start.
RENEW_BEFORE = dt.timedelta(days=30)


@dataclass(frozen=True, slots=True)
class Pair:
    """A PEM certificate and its PEM private key."""

    cert: bytes
    key: bytes


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _write(path: Path, data: bytes, private: bool, *, replace: bool = False) -> None:
    """Write ``path`` whole (readers never see half of it); unless ``replace``, keep what
    is there (another process may make it at the same time)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o600 if private else 0o644)
        if replace:
            os.replace(tmp, path)
        else:
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def write_pair(pair: Pair, cert: Path, key: Path) -> None:
    """A certificate and its key, each replaced whole (the key 0600)."""
    _write(key, pair.key, private=True, replace=True)
    _write(cert, pair.cert, private=False, replace=True)


def client_context(cert: Path, key: Path, ca: Path) -> ssl.SSLContext:
    """TLS to a server whose certificate ``ca`` signed, authenticated by ``cert``."""
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(ca))
    ctx.load_cert_chain(cert, key)
    return ctx


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name([*attrs, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _subject_alt_names(hosts: tuple[str, ...]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for host in hosts:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            out.append(x509.DNSName(host))
    return out


class Authority:
    """The cluster CA: signs serving and client certificates."""

    def __init__(self, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> None:
        self.cert = cert
        self.key = key

    @property
    def pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    @classmethod
    def create(cls, common_name: str = "kubedra-ca") -> Authority:
        key = new_key()
        name = _name(common_name)
        now = _now()
        cert = (
            x509.CertificateBuilder()
            .subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256())
        )
        return cls(cert, key)

    def issue(self, common_name: str, organizations: tuple[str, ...] = (), *,
              hosts: tuple[str, ...] = (), days: int = LEAF_DAYS,
              not_before: dt.datetime | None = None) -> Pair:
        """A leaf certificate: a server one when ``hosts`` are given, a client one else."""
        key = new_key()
        start = not_before or _now() - dt.timedelta(minutes=5)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if hosts else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name, organizations))
            .issuer_name(self.cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + dt.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(
                digital_signature=True, key_encipherment=False, key_cert_sign=False,
                crl_sign=False, content_commitment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                self.key.public_key()), critical=False)
        )
        if hosts:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(_subject_alt_names(hosts)), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return Pair(cert.public_bytes(serialization.Encoding.PEM), key_pem(key))


def _covers(cert: x509.Certificate, hosts: tuple[str, ...]) -> bool:
    """``cert`` names every host and is not near its end."""
    if cert.not_valid_after_utc - RENEW_BEFORE < _now():
        return False
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    return set(_subject_alt_names(hosts)) <= set(sans)


@dataclass(frozen=True, slots=True)
class ClusterPki:
    """The files of one cert dir."""

    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    @property
    def serving_cert(self) -> Path:
        return self.directory / "apiserver.crt"

    @property
    def serving_key(self) -> Path:
        return self.directory / "apiserver.key"

    @property
    def service_account_key(self) -> Path:
        """The ServiceAccount token signing key (its public half verifies)."""
        return self.directory / "sa.key"

    def authority(self) -> Authority:
        """The CA, made on first use."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self.ca_cert.exists():
            ca = Authority.create()
            # the key first: whoever sees the certificate can count on its key
            _write(self.ca_key, key_pem(ca.key), private=True)
            _write(self.ca_cert, ca.pem, private=False)
        cert = x509.load_pem_x509_certificate(self.ca_cert.read_bytes())
        key = serialization.load_pem_private_key(self.ca_key.read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{self.ca_key} is not an ECDSA key")
        return Authority(cert, key)

    def ensure_serving(self, bind_address: str) -> Authority:
        """The CA and a serving certificate for 127.0.0.1, localhost and ``bind_address``
        (made again when it lacks one of them or nears its end)."""
        ca = self.authority()
        hosts = tuple(dict.fromkeys(("127.0.0.1", "localhost", bind_address)))
        current = (x509.load_pem_x509_certificate(self.serving_cert.read_bytes())
                   if self.serving_cert.exists() and self.serving_key.exists() else None)
        if current is None or not _covers(current, hosts):
            pair = ca.issue("kube-apiserver", hosts=hosts)
            _write(self.serving_key, pair.key, private=True, replace=True)
            _write(self.serving_cert, pair.cert, private=False, replace=True)
        self.ensure_service_account_key()
        return ca

    def ensure_client(self, name: str, user: str) -> tuple[Path, Path]:
        """``<name>.crt`` and ``<name>.key``: a client certificate for ``user`` (made again
        when missing or near its end)."""
        ca = self.authority()
        cert, key = self.directory / f"{name}.crt", self.directory / f"{name}.key"
        if not (cert.exists() and key.exists()) or x509.load_pem_x509_certificate(
                cert.read_bytes()).not_valid_after_utc - RENEW_BEFORE < _now():
            write_pair(ca.issue(user), cert, key)
        return cert, key

    def ensure_service_account_key(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        if not self.service_account_key.exists():
            _write(self.service_account_key, key_pem(new_key()), private=True)
        return self.service_account_key

    def server_context(self, client_ca: Path | None) -> ssl.SSLContext:
        """TLS over the serving certificate; client certificates signed by ``client_ca`` are
        asked for but not required, so token users connect too."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.serving_cert, self.serving_key)
        # no TLS 1.3 session tickets: clients (ours, kubectl, the official client) do not
        # resume sessions, and making tickets costs a fifth of a handshake's CPU
        ctx.num_tickets = 0
        if client_ca is not None:
            ctx.load_verify_locations(cafile=str(client_ca))
            ctx.verify_mode = ssl.CERT_OPTIONAL
        return ctx
