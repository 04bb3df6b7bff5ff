"""The serving certificate of ``kubedra apiserver --tls``: a self-signed one for the bind
address plus localhost/127.0.0.1 (what kube-apiserver makes when given no certificate,
``--cert-dir``), and the server's TLS context over it."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class ServingCert:
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx


def self_signed(cert_dir: Path, host: str) -> ServingCert:
    """Write a new self-signed certificate and key (0600) for ``host`` into ``cert_dir``."""
    from cryptography import x509  # only --tls pays for the import
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubedra-apiserver")])
    now = dt.datetime.now(dt.UTC)
    alt: list[x509.GeneralName] = [x509.DNSName("localhost"),
                                   x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    try:
        ip = ipaddress.ip_address(host)
        if str(ip) != "127.0.0.1":
            alt.append(x509.IPAddress(ip))
    except ValueError:
        alt.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    out = ServingCert(cert_dir / "apiserver.crt", cert_dir / "apiserver.key")
    out.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    out.key.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ))
    out.key.chmod(0o600)
    return out
