"""DefaultTolerationSeconds admission: upstream's cases (admission_test.go) on typed pods."""

from __future__ import annotations

from kubedra.api.core import Container, Namespace, Pod, PodSpec, Toleration
from kubedra.apiserver.tolerationseconds import DefaultTolerationSeconds

NOT_READY, UNREACHABLE = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"


def admitted(*tolerations: Toleration, seconds: tuple[int, int] = (300, 300),
             ) -> list[tuple[str | None, str | None, str | None, int | None]]:
    pod = Pod(spec=PodSpec(containers=[Container(name="c")],
                           tolerations=list(tolerations) or None))
    DefaultTolerationSeconds(*seconds).admit(pod)
    return [(t.key, t.operator, t.effect, t.toleration_seconds)
            for t in pod.spec.tolerations or ()]


def test_both_added_to_a_pod_without_tolerations() -> None:
    assert admitted() == [(NOT_READY, "Exists", "NoExecute", 300),
                          (UNREACHABLE, "Exists", "NoExecute", 300)]
    assert admitted(seconds=(7, 9)) == [(NOT_READY, "Exists", "NoExecute", 7),
                                        (UNREACHABLE, "Exists", "NoExecute", 9)]


def test_an_existing_toleration_is_kept_and_counts() -> None:
    own = Toleration(key=UNREACHABLE, operator="Exists", effect="NoExecute",
                     toleration_seconds=3)
    assert admitted(own) == [(UNREACHABLE, "Exists", "NoExecute", 3),
                             (NOT_READY, "Exists", "NoExecute", 300)]
    # an empty effect covers NoExecute; another effect does not
    assert admitted(Toleration(key=NOT_READY, operator="Exists"),
                    Toleration(key=UNREACHABLE, operator="Exists", effect="NoSchedule")) == [
        (NOT_READY, "Exists", None, None), (UNREACHABLE, "Exists", "NoSchedule", None),
        (UNREACHABLE, "Exists", "NoExecute", 300)]


def test_an_empty_key_tolerates_both() -> None:
    assert admitted(Toleration(operator="Exists")) == [(None, "Exists", None, None)]
    assert admitted(Toleration(operator="Exists", effect="NoExecute")) == [
        (None, "Exists", "NoExecute", None)]


def test_other_kinds_are_left_alone() -> None:
    namespace = Namespace()
    DefaultTolerationSeconds().admit(namespace)
    assert namespace == Namespace()
