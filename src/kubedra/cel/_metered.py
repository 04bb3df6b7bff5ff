"""String functions whose work grows with their operands, run in Python and charged to the
evaluation's meter (_cost.py) as cel-go's runtime cost model charges them
(``interpreter/runtimecost.go``; ``StringTraversalCostFactor`` 0.1,
``RegexStringLengthCostFactor`` 0.25):

* ``+`` on strings: ⌈0.1·(|a| + |b|)⌉;
* ``startsWith``, ``endsWith``: ⌈0.1·|s|⌉; ``contains``: ⌈0.1·|s|⌉·⌈0.1·|sub|⌉;
* ``matches``: ⌈0.1·(1 + |s|)⌉·⌈0.25·|pattern|⌉;
* ``size`` of a string: ⌈0.1·|s|⌉ — cel-go charges 1, but counting the runes of a large string
  is the same traversal (docs/deviations.md).

cel-cpp runs these natively and uncharged, so the checked AST is rewritten (:data:`HELPERS`,
``_ast.rename_calls``) to call the helpers below instead; their names start with ``@``, which
no expression can spell. :data:`STRING_OVERLOADS` is what the static estimate (_ast.py)
charges per call, given the largest string of the instance.
"""

from __future__ import annotations

import math
from typing import Final

from cel_expr_python import cel

from kubedra.cel import _cost
from kubedra.cel._decl import Overloads, overload
from kubedra.cel._lists import compile_regex

T = cel.Type
STRING_TRAVERSAL: Final = 0.1
_REGEX_LENGTH: Final = 0.25


def _walk(n: int) -> int:
    return math.ceil(n * STRING_TRAVERSAL)


def _add(a: str, b: str) -> str:
    _cost.charge(_walk(len(a) + len(b)))
    return a + b


def _starts_with(s: str, prefix: str) -> bool:
    _cost.charge(_walk(len(s)))
    return s.startswith(prefix)


def _ends_with(s: str, suffix: str) -> bool:
    _cost.charge(_walk(len(s)))
    return s.endswith(suffix)


def _contains(s: str, sub: str) -> bool:
    _cost.charge(_walk(len(s)) * _walk(len(sub)))
    return sub in s


def _matches(s: str, pattern: str) -> bool:
    _cost.charge(_walk(1 + len(s)) * math.ceil(len(pattern) * _REGEX_LENGTH))
    return compile_regex(pattern).search(s) is not None


def _size(s: str) -> int:
    _cost.charge(_walk(len(s)))
    return len(s)


# cel-go overload id -> (helper name, its parameters' arity as a member call, implementation)
_METERED: Final = {
    "add_string": ("add_string", False, _add),
    "starts_with_string": ("starts_with", True, _starts_with),
    "ends_with_string": ("ends_with", True, _ends_with),
    "contains_string": ("contains", True, _contains),
    "matches_string": ("matches", True, _matches),
    "matches": ("matches", False, _matches),
    "string_size": ("size", True, _size),
    "size_string": ("size", False, _size),
}
_RESULT: Final = {"add_string": T.STRING, "size": T.INT}

# overload id the checker picks -> helper function the checked AST is rewritten to call
HELPERS: Final = {oid: f"@kubedra_{name}" for oid, (name, _, _) in _METERED.items()}
STRING_OVERLOADS: Final = frozenset(_METERED)


def overloads() -> Overloads:
    out = []
    for oid, (name, member, impl) in _METERED.items():
        ret = _RESULT.get(name, T.BOOL)
        params = [T.STRING] if name == "size" else [T.STRING, T.STRING]
        out.append(overload(HELPERS[oid], f"kubedra_metered_{oid}", ret, params, impl,
                            member=member))
    return out
