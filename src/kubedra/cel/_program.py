"""Compile, cache and evaluate selectors; map cel-cpp messages to cel-go's texts."""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Protocol

from cel_expr_python import cel

from kubedra.api.goformat import go_quote
from kubedra.api.quantity import Quantity
from kubedra.api.resource import v1
from kubedra.api.semver import SemverError
from kubedra.cel import _cost, _device, _env, _k8s, _metered, _numeric
from kubedra.cel._ast import CheckedAst, default_empty_domains, rename_calls, size_bucket
from kubedra.cel._device import DEVICE_MAX_ENTRIES, DEVICE_MAX_STRING, PreparedDevice
from kubedra.cel._env import AnyEnv, DeviceEnv, EnvType
from kubedra.cel._validators import literal_issues

MAX_EXPRESSION_LENGTH: Final = 10_000
STATIC_COST_LIMIT: Final = 1_000_000
# v1 device selectors: upstream's validation limit (CELSelectorExpressionMaxLength, bytes)
DEVICE_MAX_EXPRESSION_LENGTH: Final = v1.CEL_SELECTOR_EXPRESSION_MAX_LENGTH
UNCAPPED: Final = 1 << 62
COMPILE_CACHE_SIZE: Final = 1024
# overload id the checker picked -> the helper the checked AST is rewritten to call
_REWRITES: Final = {**_numeric.HELPERS, **_metered.HELPERS}

_STATUS_PREFIX: Final = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX: Final = re.compile(r" \[[A-Z_]+\]$")
_MISSING_KEY: Final = re.compile(r'^Key not found in map : "(.*)"$', re.S)
_NO_OVERLOAD: Final = re.compile(r"^No matching overloads found")
_INDEX: Final = re.compile(r"^Index error: index=(-?\d+) size=(\d+)$")
_RUNTIME_TEXT: Final = {
    "divide by zero": "division by zero",
    "Iteration budget exceeded": _cost.COST_LIMIT_EXCEEDED,
}


class CompileError(Exception):
    """A selector that does not compile; ``detail`` is upstream's ``Error.Detail``.

    ``kind`` follows apiserver ``cel.Error``: ``"Invalid"`` for anything wrong with the
    expression, including our static limits (docs/deviations.md); ``"Internal"`` is reserved
    for environment failures and is not produced today.
    """

    def __init__(self, detail: str, kind: str = "Invalid") -> None:
        super().__init__(detail)
        self.detail = detail
        self.kind = kind


class EvalError(Exception):
    """A runtime error; ``str(e)`` is the text cel-go's ``Evaluate`` would return."""


def _strip_status(text: str) -> str:
    return _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", text, count=1))


def runtime_error_text(raw: str) -> str:
    """cel-go's text for a cel-cpp evaluation error (``NOT_FOUND: Key not found in map : "k"``
    becomes ``no such key: k``); texts raised by our own library functions pass through."""
    text = _strip_status(raw)
    m = _MISSING_KEY.match(text)
    if m:
        return f"no such key: {m.group(1)}"
    if _NO_OVERLOAD.match(text):
        return "no such overload"
    m = _INDEX.match(text)
    if m:
        return f"index '{m.group(1)}' out of range in list size '{m.group(2)}'"
    return _RUNTIME_TEXT.get(text, text)


# ----------------------------------------------------------------------------- activation


class AttributeLike(Protocol):
    """The fields of ``NamedResourcesAttribute`` (kubedra.api.resource.v1alpha2) that CEL reads."""

    name: str
    quantity: Quantity | None
    bool_: bool | None
    int_: int | None
    int_slice: Any
    string: str | None
    string_slice: Any
    version: str | None


class Prepared:
    """An instance's attributes converted once for repeated evaluation.

    Holds the seven ``attributes.<kind>`` maps and one cel-cpp Activation per environment
    (built on first use). If a version attribute cannot be parsed, every evaluation fails
    with upstream's ``extract attributes with type version: ...`` error, as in upstream.
    """

    __slots__ = ("_activations", "_data", "_error", "cost_key", "size_bucket")

    def __init__(self, data: dict[str, Any], error: str | None) -> None:
        self._data = data
        self._error = error
        self._activations: dict[AnyEnv, Any] = {}
        # the largest list/map a selector can iterate, rounded up to a power of two
        largest = max(len(m) for m in data.values())
        for kind in ("attributes.intslice", "attributes.stringslice"):
            for lst in data[kind].values():
                largest = max(largest, len(lst))
        self.size_bucket = size_bucket(largest)
        longest = max(map(len, data["attributes.string"].values()), default=0)
        for lst in data["attributes.stringslice"].values():
            longest = max(longest, max(map(len, lst), default=0))
        # what the static estimate of a program depends on for this instance
        self.cost_key = (self.size_bucket, size_bucket(longest))

    def activation(self, env_type: AnyEnv) -> Any:
        if self._error is not None:
            raise EvalError(self._error)
        act = self._activations.get(env_type)
        if act is None:
            act = self._activations[env_type] = _environment(env_type).Activation(self._data)
        return act


def prepare(attributes: Iterable[AttributeLike] | None) -> Prepared:
    """Convert ``NamedResourcesAttribute`` objects (a later duplicate name wins)."""
    q: dict[str, Any] = {}
    b: dict[str, bool] = {}
    i: dict[str, int] = {}
    il: dict[str, list[int]] = {}
    s: dict[str, str] = {}
    sl: dict[str, list[str]] = {}
    v: dict[str, Any] = {}
    error = None
    for index, a in enumerate(attributes or ()):
        if a.quantity is not None:
            q[a.name] = _k8s.quantity_msg(a.quantity)
        if a.bool_ is not None:
            b[a.name] = a.bool_
        if a.int_ is not None:
            i[a.name] = a.int_
        if a.int_slice is not None:
            il[a.name] = list(a.int_slice.ints or ())
        if a.string is not None:
            s[a.name] = a.string
        if a.string_slice is not None:
            sl[a.name] = list(a.string_slice.strings or ())
        if a.version is not None and error is None:
            try:
                v[a.name] = _k8s.version_msg(a.version)
            except SemverError as e:
                # upstream formats the slice index with %q: a quoted rune
                error = (
                    f"extract attributes with type version: attribute {_go_rune(index)}: "
                    f"parse semantic version: {e}"
                )
    data = {
        "attributes.quantity": q,
        "attributes.bool": b,
        "attributes.int": i,
        "attributes.intslice": il,
        "attributes.string": s,
        "attributes.stringslice": sl,
        "attributes.version": v,
    }
    return Prepared(data, error)


def _go_rune(n: int) -> str:
    """Go ``%q`` of an int: the quoted rune, e.g. 0 -> ``'\\x00'``, 65 -> ``'A'``."""
    q = go_quote(chr(n)) if 0 <= n <= 0x10FFFF else '"\\ufffd"'
    inner = q[1:-1].replace('\\"', '"')
    return "'" + ("\\'" if inner == "'" else inner) + "'"


_EMPTY: Final = prepare(())


# ----------------------------------------------------------------------------- programs


Input = Prepared | PreparedDevice | Iterable[AttributeLike] | None


def _as_prepared(attributes: Input) -> Prepared:
    if attributes is None:
        return _EMPTY
    if isinstance(attributes, PreparedDevice):
        raise TypeError("a v1alpha2 selector evaluates named-resources attributes, not a device")
    return attributes if isinstance(attributes, Prepared) else prepare(attributes)


@dataclass(frozen=True, slots=True)
class Program:
    """A compiled selector (``CompilationResult``).

    ``returns_bool`` is True for selectors (the compile step enforced ``bool``); then an
    evaluation result that is a string can only be an error, which keeps the hot path cheap.
    ``max_cost`` is the worst-case estimate (``MaxCost``) with literal sizes, and for a v1
    device selector with the declared maxima of its maps and strings.
    """

    expression: str
    env_type: AnyEnv
    returns_bool: bool
    _expr: Any
    _ast: CheckedAst
    _too_costly: dict[tuple[int, int], bool]
    max_cost: int = 0

    def estimated_cost(self, size_bucket: int, string_bucket: int = 0) -> int:
        """Static work estimate when non-literal lists/maps hold up to ``size_bucket`` items
        and strings up to ``string_bucket`` characters."""
        return self._ast.analyze(size_bucket, string_bucket).estimated_cost

    def _check_cost(self, key: tuple[int, int]) -> None:
        over = self._too_costly.get(key)
        if over is None:
            over = self._too_costly[key] = self.estimated_cost(*key) > STATIC_COST_LIMIT
        if over:
            raise EvalError(_cost.COST_LIMIT_EXCEEDED)

    def evaluate(self, attributes: Input = None) -> bool:
        """``CompilationResult.Evaluate``: True/False, or EvalError with cel-go's text."""
        prepared = attributes if attributes.__class__ is Prepared else _as_prepared(attributes)
        assert isinstance(prepared, Prepared)
        act = prepared._activations.get(self.env_type) or prepared.activation(self.env_type)
        if self._too_costly.get(prepared.cost_key) is not False:
            self._check_cost(prepared.cost_key)
        _cost.reset()
        try:
            value = self._expr.eval(act).value()
        except RuntimeError as e:
            raise EvalError(runtime_error_text(str(e))) from None
        if value is True or value is False:
            return value
        if self.returns_bool and isinstance(value, str):
            raise EvalError(runtime_error_text(value))
        raise EvalError(f"CEL result of type {type(value).__name__} could not be converted to bool")

    def evaluate_value(self, attributes: Input = None) -> Any:
        """The result as a Python value (Quantity / Version for those object types)."""
        prepared = _as_prepared(attributes)
        act = prepared.activation(self.env_type)
        self._check_cost(prepared.cost_key)
        _cost.reset()
        try:
            result = self._expr.eval(act)
        except RuntimeError as e:
            raise EvalError(runtime_error_text(str(e))) from None
        if result.type() == cel.Type.ERROR:
            raise EvalError(runtime_error_text(str(result)))
        return _plain(result.plain_value())


@dataclass(frozen=True, slots=True)
class DeviceProgram(Program):
    """A resource.k8s.io/v1 ``device`` selector; it evaluates a :class:`PreparedDevice`.

    What runs is its checked AST rewritten so that an unknown domain reads as an empty map
    (_ast.default_empty_domains), in the evaluation env (_device.py); it is built on the first
    evaluation, so validation, which only compiles, does not pay for it. ``bounded``:
    ``max_cost`` is within the limit, so no device within the declared maxima needs the
    per-device estimate.
    """

    bounded: bool = False
    _serialized: bytes = b""
    _runnable: Any = None

    def _load(self) -> Any:
        runnable = _device.deserialize(default_empty_domains(self._serialized) or self._serialized)
        object.__setattr__(self, "_runnable", runnable)
        return runnable

    def evaluate(self, attributes: Input = None) -> bool:
        """``DeviceMatches``: True/False, or EvalError with upstream's text."""
        device = attributes
        if not isinstance(device, PreparedDevice):
            raise TypeError("a device selector evaluates a PreparedDevice (prepare_device)")
        act = device.activation
        if act is None:
            raise EvalError(device.error)
        if not (self.bounded and device.within_maxima):
            key = device.cost_key
            if self._too_costly.get(key) is not False:
                self._check_cost(key)
        runnable = self._runnable or self._load()
        _cost.reset()
        try:
            result = runnable.eval(act)
        except RuntimeError as e:
            raise EvalError(runtime_error_text(str(e))) from None
        value = result.value()
        if value is True or value is False:
            return value
        kind = result.type()
        if kind == cel.Type.ERROR:
            raise EvalError(runtime_error_text(str(value)))
        raise EvalError(_not_bool(kind))


# cel-cpp's name of a result type -> cel-go's TypeName and its ConvertToNative(bool) error
_NOT_BOOL: Final = {
    "INT": ("int", "unsupported type conversion from 'int' to bool"),
    "UINT": ("uint", "unsupported type conversion from 'uint' to bool"),
    "DOUBLE": ("double", "type conversion error from Double to 'bool'"),
    "STRING": ("string", "unsupported native conversion from string to 'bool'"),
    "BYTES": ("bytes", "type conversion error from Bytes to 'bool'"),
    "LIST": ("list", "type conversion error from list to 'bool'"),
    "MAP": ("map", "type conversion error from map to 'bool'"),
    "NULL": ("null_type", "type conversion error from 'null_type' to 'bool'"),
    "DURATION": ("google.protobuf.Duration", "type conversion error from 'Duration' to 'bool'"),
    "TIMESTAMP": ("google.protobuf.Timestamp",
                  "type conversion error from 'Timestamp' to 'bool'"),
    "TYPE": ("type", "type conversion not supported for 'type'"),
    "kubernetes.Semver": ("kubernetes.Semver", "type conversion error from 'Semver' to 'bool'"),
    "kubernetes.Quantity": ("kubernetes.Quantity",
                            "type conversion error from 'Quantity' to 'bool'"),
}


def _not_bool(kind: Any) -> str:
    """``DeviceMatches``' text for a result that is not a bool."""
    name = str(kind.name()).split("<", 1)[0]  # LIST<DYN> -> LIST
    go_name, detail = _NOT_BOOL.get(name, (name, f"type conversion error from '{name}' to 'bool'"))
    return f"CEL result of type {go_name} could not be converted to bool: {detail}"


def _plain(v: Any) -> Any:
    """Lists/maps of plain values, our object types as Quantity / Version / str."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {_plain(k): _plain(x) for k, x in v.items()}
    return _k8s.from_cel(v)


_ENVS: dict[AnyEnv, Any] = {}
_ENV_LOCK: Final = threading.Lock()


def _environment(env_type: AnyEnv) -> Any:
    env = _ENVS.get(env_type)
    if env is None:
        with _ENV_LOCK:
            env = _ENVS.get(env_type)
            if env is None:
                env = _ENVS[env_type] = _env.build(env_type)
    return env


class _LRU:
    """A small thread-safe LRU of compile results (programs and compile errors)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[tuple[str, AnyEnv, bool], Program | CompileError] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[str, AnyEnv, bool]) -> Program | CompileError | None:
        # lock-free hit: OrderedDict operations are atomic under the GIL; a concurrent
        # eviction between get and move_to_end only costs the recency update
        data = self.data
        v = data.get(key)
        if v is not None:
            try:  # noqa: SIM105 - contextlib.suppress costs a microsecond on this hot path
                data.move_to_end(key)
            except KeyError:
                pass
        return v

    def put(self, key: tuple[str, AnyEnv, bool], value: Program | CompileError) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.data.clear()


_CACHE: Final = _LRU(COMPILE_CACHE_SIZE)


class _Budget(threading.local):
    deadline: float | None = None  # thread CPU time after which compiles are refused
    cached_only: bool = False  # a cache miss raises CompileDeferred


class CompileDeferred(Exception):
    """A compile was needed inside :func:`cached_only`."""


_BUDGET: Final = _Budget()
BUDGET_EXCEEDED: Final = (
    "validation failed due to running out of cost budget, no further validation rules will "
    "be run"
)


@contextmanager
def compile_budget(cpu_seconds: float) -> Iterator[None]:
    """Bound the CPU time this thread spends compiling (cache misses) inside the block;
    past it every further compile fails with :data:`BUDGET_EXCEEDED`, which is not cached."""
    _BUDGET.deadline = time.thread_time() + cpu_seconds
    try:
        yield
    finally:
        _BUDGET.deadline = None


@contextmanager
def cached_only() -> Iterator[None]:
    """Inside the block this thread only takes compiled expressions from the cache; one that
    is not there raises :class:`CompileDeferred` instead of compiling. A server tries a
    request's validation so on its event loop first (the common case: every selector seen
    before) and moves it to a thread only when something must be compiled."""
    _BUDGET.cached_only = True
    try:
        yield
    finally:
        _BUDGET.cached_only = False


def compile_expression(
    expression: str, env_type: AnyEnv = EnvType.STORED_EXPRESSIONS, *, require_bool: bool = True
) -> Program:
    """``CompileCELExpression``: a Program, or CompileError with upstream's detail text.

    ``env_type`` is a v1alpha2 EnvType or a v1 :class:`DeviceEnv`. In the latter the result
    may also be ``dyn``, and the cost estimate is not checked here: validation compares
    ``Program.max_cost`` with its limit, as upstream does. Results (including failures) are
    cached in a bounded LRU keyed by (expression, env); ``require_bool=False`` skips the
    output type check (used to test library functions).
    """
    key = (expression, env_type, require_bool)
    hit = _CACHE.get(key)
    if hit is None:
        if _BUDGET.cached_only:
            raise CompileDeferred(expression)
        deadline = _BUDGET.deadline
        if deadline is not None and time.thread_time() > deadline:
            raise CompileError(BUDGET_EXCEEDED)
        hit = _compile_uncached(expression, env_type, require_bool)
        _CACHE.put(key, hit)
    if hit.__class__ is Program or hit.__class__ is DeviceProgram:
        return hit
    assert isinstance(hit, CompileError)
    raise hit


_FOLLOW_ON: Final = "expression of type '*error*' cannot be the operand"
_NOT_IN_STRUCT: Final = re.compile(r" not found in struct '[\w.]+'")
# our Struct-typed maps print as dyn; upstream declares attribute values as any
_DEVICE_TYPE_NAMES: Final = {"map(string, map(string, dyn))": "map(string, map(string, any))"}


def _device_issues(text: str) -> str:
    """cel-go's wording of cel-cpp's issues in the device env: no follow-on errors on an
    erroneous operand, ``undefined field 'f'`` without the struct, upstream's type names."""
    issues = [i for i in text.split("\nERROR: ") if _FOLLOW_ON not in i]
    out = "\nERROR: ".join(issues)
    for ours, theirs in _DEVICE_TYPE_NAMES.items():
        out = out.replace(ours, theirs)
    return _NOT_IN_STRUCT.sub("", out)


def _output_issue(expr: Any, env_type: AnyEnv) -> str | None:
    """The output type rule: bool (v1alpha2), bool or dyn (v1 device selectors)."""
    returned = expr.return_type()
    if returned == cel.Type.BOOL:
        return None
    if not isinstance(env_type, DeviceEnv):
        return "must evaluate to bool"
    if returned == cel.Type.DYN:
        return None
    name = str(returned).rsplit(".", 1)[-1].lower()
    return f"must evaluate to bool or the unknown type, not {name}"


def _compile_uncached(
    expression: str, env_type: AnyEnv, require_bool: bool
) -> Program | CompileError:
    device = isinstance(env_type, DeviceEnv)
    if device and len(expression.encode()) > DEVICE_MAX_EXPRESSION_LENGTH:
        return CompileError(
            f"compilation failed: expression is {len(expression.encode())} bytes long, "
            f"the limit is {DEVICE_MAX_EXPRESSION_LENGTH}"
        )
    if not device and len(expression) > MAX_EXPRESSION_LENGTH:
        return CompileError(
            f"compilation failed: expression is {len(expression)} characters long, "
            f"the limit is {MAX_EXPRESSION_LENGTH}"
        )
    env = _environment(env_type)
    try:
        expr = env.compile(expression)
    except RuntimeError as e:
        text = _strip_status(str(e))
        return CompileError("compilation failed: " + (_device_issues(text) if device else text))
    serialized = expr.serialize()
    try:
        issues = literal_issues(serialized, expression)
        if issues:
            return CompileError("compilation failed: " + "\n".join(issues))
        output_issue = _output_issue(expr, env_type) if require_bool else None
        if output_issue is not None:
            return CompileError(output_issue)
        ast = CheckedAst(serialized)
        found = ast.analyze(0)  # literal sizes only; data-dependent work is checked per instance
        max_cost = (ast.analyze(DEVICE_MAX_ENTRIES, DEVICE_MAX_STRING, UNCAPPED).estimated_cost
                    if device else found.estimated_cost)
    except RecursionError:  # cel-cpp bounds nesting at 32; this is only a safety net
        return CompileError("compilation failed: expression nesting is too deep")
    if found.selects_internal_field:
        return CompileError(
            "compilation failed: ERROR: <input>:1:1: selecting internal fields of "
            "Kubernetes object types is not supported"
        )
    if not device and found.estimated_cost > STATIC_COST_LIMIT:
        return CompileError(
            f"compilation failed: estimated evaluation cost {found.estimated_cost} exceeds "
            f"the limit {STATIC_COST_LIMIT}"
        )
    renames = {expr_id: _REWRITES[ids[0]] for expr_id, ids in ast.overloads.items()
               if len(ids) == 1 and ids[0] in _REWRITES}
    if renames:  # comparisons cel-go orders differently, string work cel-cpp does not meter
        serialized = rename_calls(serialized, renames)
        if not device:
            expr = env.deserialize(serialized)
    if device:
        returns_bool = require_bool and expr.return_type() == cel.Type.BOOL
        return DeviceProgram(expression, env_type, returns_bool, expr, ast, {(0, 0): False},
                             max_cost, max_cost <= STATIC_COST_LIMIT, serialized)
    return Program(expression, env_type, require_bool, expr, ast, {(0, 0): False}, max_cost)


def validate_selector(expression: str, stored: bool) -> str | None:
    """The detail of the selector's validation error, or None when it compiles.

    Empty -> ``""`` (the caller reports ``field.Required(path, "")``); otherwise the
    ``field.Invalid`` detail, e.g. ``compilation failed: ERROR: <input>:1:1: ...`` or
    ``must evaluate to bool``. ``stored`` selects StoredExpressions (unchanged stored objects).
    """
    if expression == "":
        return ""
    env_type = EnvType.STORED_EXPRESSIONS if stored else EnvType.NEW_EXPRESSIONS
    try:
        compile_expression(expression, env_type)
    except CompileError as e:
        return e.detail
    return None


def clear_cache() -> None:
    _CACHE.clear()


def cache_info() -> Mapping[str, int]:
    return {"size": len(_CACHE.data), "max": _CACHE.size}
