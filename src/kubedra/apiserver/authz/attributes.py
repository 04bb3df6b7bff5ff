"""What an authorizer is asked (upstream ``authorizer.Attributes``), its answer, and the 403
``Status`` a refusal becomes (``responsewriters.Forbidden``)."""

from __future__ import annotations

from typing import Final, final

from kubedra.apiserver import errors
from kubedra.apiserver.auth import User
from kubedra.apiserver.selectors import SelectorError, parse_field_selector
from kubedra.validation.nodeauthz import Decision, RequestAttributes, Verdict

__all__ = ["ALLOW", "NO_OPINION", "Attributes", "Decision", "Verdict", "forbidden"]

ALLOW = Verdict(Decision.ALLOW)
NO_OPINION = Verdict(Decision.NO_OPINION)


@final
class Attributes:
    """One request as authorizers see it: a resource request (group, resource, ...) or a
    non-resource one (``path``). A plain class: one is built per request, and compiled, a
    frozen dataclass's constructor runs as Python."""

    def __init__(self, user: User, verb: str, resource_request: bool = True,
                 api_group: str = "", resource: str = "", subresource: str = "",
                 namespace: str = "", name: str = "", path: str = "",
                 field_selector: str = "") -> None:
        self.user: Final = user
        self.verb: Final = verb
        self.resource_request: Final = resource_request
        self.api_group: Final = api_group
        self.resource: Final = resource
        self.subresource: Final = subresource
        self.namespace: Final = namespace
        self.name: Final = name
        self.path: Final = path
        self.field_selector: Final = field_selector
        """The ``fieldSelector`` of a list, watch or deletecollection, as sent."""

    @property
    def combined_resource(self) -> str:
        """``pods/status``: how RBAC rules name a subresource."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    def node_request(self) -> RequestAttributes:
        """The parts the Node authorizer's pure rules (``validation.nodeauthz``) read."""
        return RequestAttributes(verb=self.verb, api_group=self.api_group,
                                 resource=self.resource, subresource=self.subresource,
                                 name=self.name, namespace=self.namespace,
                                 resource_request=self.resource_request,
                                 field_equals=_field_equals(self.field_selector))


def _field_equals(text: str) -> tuple[tuple[str, str], ...]:
    """The equality terms of a field selector; none when it does not parse (upstream's
    ``GetFieldSelector`` answers an error and no requirements then)."""
    try:
        terms = parse_field_selector(text).terms
    except SelectorError:
        return ()
    return tuple((t.field, t.value) for t in terms if t.equal)


def forbidden_message(a: Attributes, reason: str = "") -> str:
    """``forbiddenMessage`` plus ``NewForbidden``'s head, as kube-apiserver words them."""
    user = a.user.name
    if not a.resource_request:
        msg = f'forbidden: User "{user}" cannot {a.verb} path "{a.path}"'
    else:
        qualified = f"{a.resource}.{a.api_group}" if a.api_group else a.resource
        head = f'{qualified} "{a.name}"' if a.name else qualified
        scope = (f'in the namespace "{a.namespace}"' if a.namespace
                 else "at the cluster scope")
        msg = (f'{head} is forbidden: User "{user}" cannot {a.verb} resource '
               f'"{a.combined_resource}" in API group "{a.api_group}" {scope}')
    return f"{msg}: {reason}" if reason else msg


def forbidden(a: Attributes, reason: str = "") -> errors.ApiError:
    details: dict[str, str] = {}
    if a.resource_request:
        if a.name:
            details["name"] = a.name
        if a.api_group:
            details["group"] = a.api_group
        details["kind"] = a.resource
    return errors.ApiError(errors.status_body(403, "Forbidden", forbidden_message(a, reason),
                                              details))
