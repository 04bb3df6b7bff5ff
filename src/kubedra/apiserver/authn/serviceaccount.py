"""ServiceAccount tokens: JWTs signed with the key of ``--service-account-signing-key-file``
(RS256 for RSA keys, ES256 for P-256 keys) and verified with the keys of
``--service-account-key-file``, in upstream's claim layout (``pkg/serviceaccount/claims.go``).

A token stands for its ServiceAccount (and the pod it is bound to) only while that object
exists with the uid the token names: deleting the ServiceAccount ends its tokens.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from kubedra.apiserver.auth import User
from kubedra.validation.names import name_is_dns_label, name_is_dns_subdomain

PREFIX = "system:serviceaccount:"
GROUP = "system:serviceaccounts"
DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
CLAIMS = "kubernetes.io"
#: ``User.extra`` keys of a pod-bound token, as upstream.
POD_NAME = "authentication.kubernetes.io/pod-name"
POD_UID = "authentication.kubernetes.io/pod-uid"
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey

#: ``(resource, namespace, name) -> uid``, None when no such object is stored.
UidLookup = Callable[[str, str, str], Awaitable[str | None]]


def username(namespace: str, name: str) -> str:
    """``serviceaccount.MakeUsername``: ``system:serviceaccount:<namespace>:<name>``."""
    return f"{PREFIX}{namespace}:{name}"


def groups(namespace: str) -> tuple[str, str]:
    """``serviceaccount.MakeGroupNames``: the groups every ServiceAccount is in."""
    return (GROUP, f"{GROUP}:{namespace}")


def split_username(user: str) -> tuple[str, str] | None:
    """``serviceaccount.SplitUsername``: the namespace and name a ServiceAccount user name
    holds, or None for any other name (a malformed one included)."""
    if not user.startswith(PREFIX):
        return None
    parts = user[len(PREFIX):].split(":")
    if len(parts) != 2 or name_is_dns_label(parts[0], False) or name_is_dns_subdomain(
            parts[1], False):
        return None
    return parts[0], parts[1]


class KeyFileError(ValueError):
    """A key file that holds no usable RSA or P-256 key."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _algorithm(key: PrivateKey | PublicKey) -> str:
    if isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey):
        return "RS256"
    if key.curve.name != "secp256r1":
        raise KeyFileError(f"ECDSA keys must use P-256, not {key.curve.name}")
    return "ES256"


def key_id(key: PublicKey) -> str:
    """Upstream's ``kid``: the unpadded URL-safe base64 SHA-256 of the DER public key."""
    der = key.public_bytes(serialization.Encoding.DER,
                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return _b64(hashlib.sha256(der).digest())


def load_private_key(path: Path) -> PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as err:
        raise KeyFileError(f"{path}: {err}") from None
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise KeyFileError(f"{path}: not an RSA or ECDSA private key")
    _algorithm(key)
    return key


def load_public_keys(path: Path) -> list[PublicKey]:
    """The public keys of a PEM file (public keys, or private keys whose public half is used)."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise KeyFileError(f"{path}: {err}") from None
    keys: list[PublicKey] = []
    for match in _PEM_BLOCK.finditer(data):
        try:
            if b"PRIVATE" in match.group(1):
                key: object = serialization.load_pem_private_key(match.group(0),
                                                                 password=None).public_key()
            else:
                key = serialization.load_pem_public_key(match.group(0))
        except (ValueError, TypeError) as bad:
            raise KeyFileError(f"{path}: {bad}") from None
        if isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
            _algorithm(key)
            keys.append(key)
    if not keys:
        raise KeyFileError(f"{path}: no RSA or ECDSA key found")
    return keys


_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z ]+)-----.+?-----END \1-----", re.DOTALL)


def _sign(key: PrivateKey, data: bytes) -> bytes:
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def _verify(key: PublicKey, alg: str, data: bytes, signature: bytes) -> bool:
    try:
        if alg == "RS256" and isinstance(key, rsa.RSAPublicKey):
            key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
            return True
        if alg == "ES256" and isinstance(key, ec.EllipticCurvePublicKey) and len(signature) == 64:
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"),
                                       int.from_bytes(signature[32:], "big"))
            key.verify(der, data, ec.ECDSA(hashes.SHA256()))
            return True
    except InvalidSignature:
        pass
    return False


@dataclass(frozen=True, slots=True)
class Subject:
    """What a token is about: the ServiceAccount and, if bound, its pod."""

    namespace: str
    name: str
    uid: str
    pod_name: str = ""
    pod_uid: str = ""


class TokenKeys:
    """Signs tokens (TokenRequest) and verifies them (the authenticator)."""

    def __init__(self, signing_key: PrivateKey, issuer: str = DEFAULT_ISSUER,
                 verify_keys: list[PublicKey] | None = None,
                 audiences: tuple[str, ...] = ()) -> None:
        self.signing_key = signing_key
        self.algorithm = _algorithm(signing_key)
        self.issuer = issuer
        self.audiences = audiences or (issuer,)
        self.verify_keys = verify_keys or [signing_key.public_key()]
        self._kid = key_id(signing_key.public_key())

    def issue(self, subject: Subject, audiences: list[str], expiration_seconds: int,
              now: float | None = None) -> tuple[str, int]:
        """A signed token and its expiry (unix seconds)."""
        issued = int(time.time() if now is None else now)
        exp = issued + expiration_seconds
        private: dict[str, Any] = {"namespace": subject.namespace,
                                   "serviceaccount": {"name": subject.name, "uid": subject.uid}}
        if subject.pod_name:
            private["pod"] = {"name": subject.pod_name, "uid": subject.pod_uid}
        claims = {"aud": audiences, "exp": exp, "iat": issued, "iss": self.issuer,
                  "jti": str(uuid.uuid4()), CLAIMS: private, "nbf": issued,
                  "sub": username(subject.namespace, subject.name)}
        header = {"alg": self.algorithm, "kid": self._kid}
        signed = (_b64(json.dumps(header, separators=(",", ":")).encode()) + "."
                  + _b64(json.dumps(claims, separators=(",", ":")).encode()))
        return signed + "." + _b64(_sign(self.signing_key, signed.encode())), exp

    def verified_claims(self, token: str, now: float | None = None) -> dict[str, Any] | None:
        """The claims of a token these keys signed, for our issuer and audiences, within its
        validity; None for anything else (not a JWT at all included)."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            header = json.loads(_unb64(parts[0]))
            claims = json.loads(_unb64(parts[1]))
            signature = _unb64(parts[2])
            signed = f"{parts[0]}.{parts[1]}".encode("ascii")
        except (ValueError, binascii.Error, UnicodeError):
            return None
        if not isinstance(header, dict) or not isinstance(claims, dict):
            return None
        alg = header.get("alg")
        if not isinstance(alg, str) or not any(
                _verify(k, alg, signed, signature) for k in self.verify_keys):
            return None
        if claims.get("iss") != self.issuer:
            return None
        aud = claims.get("aud")
        auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if not set(auds) & set(self.audiences):
            return None
        at = time.time() if now is None else now
        exp, nbf = claims.get("exp"), claims.get("nbf", 0)
        if not isinstance(exp, int | float) or not isinstance(nbf, int | float):
            return None
        if at >= exp or at < nbf:
            return None
        return claims


def _subject(claims: dict[str, Any]) -> Subject | None:
    private = claims.get(CLAIMS)
    if not isinstance(private, dict):
        return None
    sa = private.get("serviceaccount")
    pod = private.get("pod") or {}
    ns = private.get("namespace")
    if not isinstance(sa, dict) or not isinstance(pod, dict) or not isinstance(ns, str):
        return None
    fields = [sa.get("name"), sa.get("uid"), pod.get("name", ""), pod.get("uid", "")]
    strings = [f for f in fields if isinstance(f, str)]
    if len(strings) != len(fields) or not strings[0]:
        return None
    if claims.get("sub") != username(ns, strings[0]):
        return None
    return Subject(ns, *strings)


async def service_account_user(keys: TokenKeys, token: str, current_uid: UidLookup) -> User | None:
    """The ServiceAccount a token authenticates, if its ServiceAccount (and pod) still
    exist with the uids it names."""
    claims = keys.verified_claims(token)
    subject = _subject(claims) if claims is not None else None
    if claims is None or subject is None:
        return None
    if await current_uid("serviceaccounts", subject.namespace, subject.name) != subject.uid:
        return None
    extra: dict[str, tuple[str, ...]] = {}
    if subject.pod_name:
        if await current_uid("pods", subject.namespace, subject.pod_name) != subject.pod_uid:
            return None
        extra = {POD_NAME: (subject.pod_name,), POD_UID: (subject.pod_uid,)}
    if isinstance(claims.get("jti"), str):
        extra[CREDENTIAL_ID] = (f"JTI={claims['jti']}",)
    return User(username(subject.namespace, subject.name), groups(subject.namespace),
                subject.uid, extra)
