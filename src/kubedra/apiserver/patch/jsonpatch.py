"""RFC 6902 JSON Patch over JSON-like values (dicts, lists, scalars).

Pointers follow RFC 6901 (``~1`` is ``/``, ``~0`` is ``~``). The input document is never
mutated: the patch runs on a deep copy, so a failing operation leaves nothing half-applied.
"""

from __future__ import annotations

from typing import Any

from kubedra.apiserver.patch.errors import bad_request, too_large, unprocessable
from kubedra.apiserver.patch.values import copy_json, json_equal

MAX_OPERATIONS = 10000  # upstream maxJSONPatchOperations


def parse_pointer(pointer: str) -> list[str]:
    """Split a JSON pointer into unescaped reference tokens ("" is the whole document)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise unprocessable(f'invalid JSON pointer "{pointer}": must be empty or start with "/"')
    return [tok.replace("~1", "/").replace("~0", "~") for tok in pointer[1:].split("/")]


def _index(token: str, size: int, pointer: str, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return size
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise unprocessable(f'invalid array index "{token}" in path "{pointer}"')
    idx = int(token)
    limit = size if allow_end else size - 1
    if idx > limit:
        raise unprocessable(f'array index {idx} out of bounds in path "{pointer}"')
    return idx


def _resolve(doc: Any, tokens: list[str], pointer: str) -> Any:
    cur = doc
    for tok in tokens:
        if isinstance(cur, dict):
            if tok not in cur:
                raise unprocessable(f'path "{pointer}" does not exist')
            cur = cur[tok]
        elif isinstance(cur, list):
            cur = cur[_index(tok, len(cur), pointer, allow_end=False)]
        else:
            raise unprocessable(f'path "{pointer}" does not exist')
    return cur


def _add(doc: Any, pointer: str, value: Any) -> Any:
    tokens = parse_pointer(pointer)
    if not tokens:
        return value
    parent = _resolve(doc, tokens[:-1], pointer)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(last, len(parent), pointer, allow_end=True), value)
    else:
        raise unprocessable(f'path "{pointer}" does not exist: its parent is not a container')
    return doc


def _remove(doc: Any, pointer: str) -> tuple[Any, Any]:
    """Remove the value at ``pointer``; returns (document, removed value)."""
    tokens = parse_pointer(pointer)
    if not tokens:
        raise unprocessable("cannot remove the whole document")
    parent = _resolve(doc, tokens[:-1], pointer)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise unprocessable(f'path "{pointer}" does not exist')
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(last, len(parent), pointer, allow_end=False))
    raise unprocessable(f'path "{pointer}" does not exist')


def _replace(doc: Any, pointer: str, value: Any) -> Any:
    tokens = parse_pointer(pointer)
    if not tokens:
        return value
    parent = _resolve(doc, tokens[:-1], pointer)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise unprocessable(f'path "{pointer}" does not exist')
        parent[last] = value
    elif isinstance(parent, list):
        parent[_index(last, len(parent), pointer, allow_end=False)] = value
    else:
        raise unprocessable(f'path "{pointer}" does not exist')
    return doc


def _field(op: dict[str, Any], name: str, index: int) -> Any:
    if name not in op:
        raise unprocessable(f'operation {index} ("{op.get("op")}") is missing "{name}"')
    return op[name]


def _string(op: dict[str, Any], name: str, index: int) -> str:
    value = _field(op, name, index)
    if not isinstance(value, str):
        raise unprocessable(f'operation {index}: "{name}" must be a string')
    return value


def _apply_one(doc: Any, op: dict[str, Any], i: int) -> Any:
    kind = op.get("op")
    if kind == "add":
        return _add(doc, _string(op, "path", i), copy_json(_field(op, "value", i)))
    if kind == "remove":
        return _remove(doc, _string(op, "path", i))[0]
    if kind == "replace":
        return _replace(doc, _string(op, "path", i), copy_json(_field(op, "value", i)))
    if kind == "move":
        src, dst = _string(op, "from", i), _string(op, "path", i)
        if src == dst:
            _resolve(doc, parse_pointer(src), src)
            return doc
        if dst.startswith(src + "/"):
            raise unprocessable(f'cannot move "{src}" into its own child "{dst}"')
        doc, value = _remove(doc, src)
        return _add(doc, dst, value)
    if kind == "copy":
        src = _string(op, "from", i)
        value = copy_json(_resolve(doc, parse_pointer(src), src))
        return _add(doc, _string(op, "path", i), value)
    if kind == "test":
        path = _string(op, "path", i)
        if not json_equal(_resolve(doc, parse_pointer(path), path), _field(op, "value", i)):
            raise unprocessable(f'test operation failed: value at "{path}" differs')
        return doc
    raise unprocessable(f'operation {i}: unknown op "{kind}"')


def apply_json_patch(doc: Any, ops: Any) -> Any:
    """Apply the RFC 6902 operations ``ops`` to a copy of ``doc`` and return the result.

    A body that is not a list of objects is a 400 (upstream ``DecodePatch``); an operation
    that does not apply is a 422.
    """
    if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
        raise bad_request("json patch must be a list of operation objects")
    if len(ops) > MAX_OPERATIONS:
        raise too_large(
            f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {len(ops)}"
        )
    result = copy_json(doc)
    for i, op in enumerate(ops):
        result = _apply_one(result, op, i)
    return result

