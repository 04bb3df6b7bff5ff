"""DefaultTolerationSeconds admission (upstream ``plugin/pkg/admission/defaulttolerationseconds``
at v1.30, on by default): a pod created or updated without a NoExecute toleration of the
not-ready or the unreachable node taint gets one for ``--default-not-ready-toleration-seconds``
or ``--default-unreachable-toleration-seconds`` (300 s each), so that taint-based eviction
leaves it that long on a node that stopped answering."""

from __future__ import annotations

from kubedra.api.core import Pod, Toleration
from kubedra.api.meta import TypedObject
from kubedra.api.taints import NO_EXECUTE, NOT_READY, UNREACHABLE

DEFAULT_SECONDS = 300


class DefaultTolerationSeconds:
    def __init__(self, not_ready: int = DEFAULT_SECONDS,
                 unreachable: int = DEFAULT_SECONDS) -> None:
        self.not_ready = not_ready
        self.unreachable = unreachable

    def admit(self, obj: TypedObject) -> None:
        """Add the missing tolerations to a pod (any other object is left alone). A
        toleration counts when its key is the taint's or empty and its effect NoExecute or
        empty, whatever its operator, as upstream."""
        if not isinstance(obj, Pod):
            return
        tolerations = list(obj.spec.tolerations or ())
        added = [Toleration(key=key, operator="Exists", effect=NO_EXECUTE,
                            toleration_seconds=seconds)
                 for key, seconds in ((NOT_READY, self.not_ready),
                                      (UNREACHABLE, self.unreachable))
                 if not any(t.key in (key, None, "") and t.effect in (NO_EXECUTE, None, "")
                            for t in tolerations)]
        if added:
            obj.spec.tolerations = tolerations + added
