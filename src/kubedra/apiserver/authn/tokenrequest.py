"""``POST .../serviceaccounts/<name>/token``: a TokenRequest answered with a signed token for
the ServiceAccount, optionally bound to a pod (``pkg/registry/core/serviceaccount/storage/
token.go``)."""

from __future__ import annotations

import time
from typing import Any

from kubedra.api import codec
from kubedra.api.authentication import API_VERSION, GROUP, TokenRequest
from kubedra.api.base import Obj
from kubedra.api.meta import format_time
from kubedra.apiserver import errors, objects
from kubedra.apiserver.authn.serviceaccount import Subject, TokenKeys
from kubedra.apiserver.registry import Registry
from kubedra.apiserver.rest import Rest
from kubedra.validation import authentication
from kubedra.validation.field import Path, invalid


def _decode(body: Any) -> TokenRequest:
    if not isinstance(body, dict):
        raise errors.bad_request("TokenRequest in version \"v1\" cannot be handled as a "
                                 "TokenRequest")
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if (kind or api_version) and (kind, api_version) != ("TokenRequest", API_VERSION):
        raise errors.bad_request(f"{kind} in version \"{api_version}\" cannot be handled as "
                                 "a TokenRequest")
    try:
        return codec.decode(body, TokenRequest)
    except codec.DecodeError as err:
        raise errors.bad_request(f"TokenRequest in version \"v1\" cannot be handled as a "
                                 f"TokenRequest: {err}") from None


class TokenRequests:
    """Issues ServiceAccount tokens with the server's signing key."""

    def __init__(self, keys: TokenKeys, rest: Rest, registry: Registry) -> None:
        self.keys = keys
        self.rest = rest
        self.registry = registry

    async def _get(self, plural: str, namespace: str, name: str) -> Obj:
        res = self.registry.get("", "v1", plural)
        assert res is not None
        obj, _ = await self.rest.get(res, namespace, name)
        return obj

    async def create(self, namespace: str, name: str, body: Any) -> Obj:
        """The answered TokenRequest (status.token and status.expirationTimestamp set)."""
        req = _decode(body)
        meta = req.metadata
        for value, field, what in ((meta.name, "name", name), (meta.namespace, "namespace",
                                                               namespace)):
            if value and value != what:
                raise errors.invalid("TokenRequest", GROUP, name, [invalid(
                    Path("metadata").child(field), value,
                    f"must match the service account {field} if specified")])
        account = objects.meta(await self._get("serviceaccounts", namespace, name))
        if not req.spec.audiences:
            req.spec.audiences = list(self.keys.audiences)
        meta.name, meta.namespace = name, namespace
        authentication.default_token_request(req)
        errs = authentication.validate_token_request(req)
        if errs:
            raise errors.invalid("TokenRequest", GROUP, name, errs)
        subject = Subject(namespace, name, str(account.get("uid", "")))
        ref = req.spec.bound_object_ref
        if ref is not None:
            if (ref.api_version or "v1", ref.kind) != ("v1", "Pod"):
                group, _, version = (ref.api_version or "").rpartition("/")
                raise errors.bad_request(f"cannot bind token to object of type "
                                         f"{group}/{version}, Kind={ref.kind or ''}")
            pod = await self._get("pods", namespace, ref.name or "")
            if str((pod.get("spec") or {}).get("serviceAccountName") or "default") != name:
                raise errors.bad_request(f"cannot bind token for serviceaccount \"{name}\" to "
                                         "pod running with different serviceaccount name.")
            uid = str(objects.meta(pod).get("uid", ""))
            if ref.uid and ref.uid != uid:
                raise errors.conflict("Pod", "", ref.name or "", (
                    f"the UID in the bound object reference ({ref.uid}) does not match the "
                    "UID in record. The object might have been deleted and then recreated"))
            subject = Subject(namespace, name, subject.uid, ref.name or "", uid)
        issued = int(time.time())
        token, expires = self.keys.issue(subject, req.spec.audiences,
                                         req.spec.expiration_seconds or 0, issued)
        meta.creation_timestamp = format_time(issued)
        req.status.token = token
        req.status.expiration_timestamp = format_time(expires)
        req.api_version, req.kind = API_VERSION, "TokenRequest"
        out: Obj = objects.decode(codec.encode(req))
        return out
