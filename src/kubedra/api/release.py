"""The Kubernetes release a cluster emulates (``--emulated-version``, kube-apiserver's
compatibility-version flag): one cluster is one release, as a real cluster is.

The release decides which rows of the resource table are served
(:mod:`kubedra.api.scheme`), the feature gates and their defaults
(:mod:`kubedra.api.features`) and what ``/version`` answers; nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Release:
    """One emulated release: ``name`` as the flag spells it, ``git_version`` as ``/version``
    answers it."""

    name: str
    git_version: str

    @property
    def major(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def minor(self) -> str:
        return self.name.split(".", 1)[1]


R1_30: Final = Release("1.30", "v1.30.0")
R1_34: Final = Release("1.34", "v1.34.0")
DEFAULT_RELEASE: Final = R1_34
"""What a cluster emulates, and ``validate`` and ``fetch-kubectl`` assume, unless
``--emulated-version`` (``--version``) says."""
RELEASES: Final = (R1_30, R1_34)


class ReleaseError(ValueError):
    """An ``--emulated-version`` kubedra does not emulate."""


def parse_release(text: str) -> Release:
    """The release named ``text``: ``1.30`` or ``1.34``; upstream's component form
    ``kube=1.34`` is accepted too (a bare version means ``kube`` there as well)."""
    name = text.strip().removeprefix("kube=")
    for release in RELEASES:
        if release.name == name:
            return release
    known = ", ".join(r.name for r in RELEASES)
    raise ReleaseError(f"unsupported emulated version {text!r}: kubedra emulates {known}")
