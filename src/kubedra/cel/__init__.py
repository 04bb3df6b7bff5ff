"""CEL selectors of the named-resources model (Kubernetes v1.30) and of resource.k8s.io/v1
devices (1.34), on cel-expr-python (cel-cpp).

Only this package imports ``cel_expr_python``. Public API:

* ``compile_expression(expr, EnvType.NEW_EXPRESSIONS | STORED_EXPRESSIONS) -> Program``
  (alias ``compile``), raising :class:`CompileError` whose ``detail`` is upstream's text
  (``compilation failed: ERROR: <input>:L:C: ...``, ``must evaluate to bool``). cel-cpp parses
  and type-checks; the 1.29 literal validators run on the checked AST (_validators.py).
  Results are cached in a bounded LRU (1,024 entries) keyed by (expression, environment).
* ``compile_expression(expr, DeviceEnv(env_type, consumable_capacity))``: a v1 ``device``
  selector (a ``Program`` whose output is bool or dyn); ``Program.max_cost`` is the worst-case
  estimate validation compares with its 1,000,000 limit.
* ``prepare_device(driver, attributes, capacity, allow_multiple_allocations) ->
  PreparedDevice``: converts a v1 device (the model's ``DeviceAttribute``/``DeviceCapacity``
  maps, names qualified or not) once; keep it per device and call
  ``program.evaluate(prepared_device)`` for each device selector. It returns a bool or raises
  :class:`EvalError` with upstream's text (``no such key: <id>``, ``attribute <name>: parse
  semantic version: ...``, ``CEL result of type <t> could not be converted to bool: ...``).
  ``device.attributes[<unknown domain>]`` and ``device.capacity[...]`` read as empty maps.
* ``validate_selector(expr, stored) -> str | None`` for API validation.
* ``prepare(attributes) -> Prepared``: converts an instance's ``NamedResourcesAttribute`` list
  once; keep it per instance and call ``program.evaluate(prepared)`` (a plain attribute list
  is accepted too, converted on each call). ``evaluate`` returns a bool or raises
  :class:`EvalError` with cel-go's text (``no such key: <name>``, library error texts).
* ``scheduler_error_text(filter_or_request, err)``: the allocation engine's wrapping.

Bounds (upstream: a runtime cost limit of 1,000,000 cel-go cost units per evaluation and no
static limit). cel-cpp offers no cost tracker, so we bound evaluations differently:

1. at compile time: expressions longer than 10,000 characters, nesting deeper than cel-cpp's
   parser limit (32), and expressions whose static estimate exceeds 1,000,000 node
   evaluations are rejected (the estimate counts every AST node once per iteration of each
   enclosing comprehension, assuming 10,000 iterations for non-literal ranges);
2. at run time: cel-cpp stops every evaluation after 10,000 comprehension iterations, and our
   Python library functions charge a per-evaluation meter (elements scanned, characters
   produced) limited to 1,000,000 units, including the string functions whose work grows with
   their operands (``+``, ``contains``, ``matches``, ``size``, ...: run in Python and charged
   as cel-go charges them, _metered.py); an evaluation still charging after 0.5 s of wall
   clock is stopped too. All surface as ``operation cancelled: actual cost limit exceeded``;
3. per request: the API server compiles a request's selectors under
   ``compile_budget(seconds)`` (thread CPU time); past it each further compile fails with
   upstream's CRD-validation text :data:`BUDGET_EXCEEDED`; it first tries the validation with
   ``cached_only()``, which raises :class:`CompileDeferred` instead of compiling.

Together these keep any selector well under a second (see tests/unit/cel/test_hostile.py);
docs/deviations.md ("CEL selectors") lists where this differs from cel-go.
"""

from __future__ import annotations

from kubedra.cel._cost import COST_LIMIT_EXCEEDED, RUNTIME_COST_LIMIT
from kubedra.cel._device import PreparedDevice, prepare_device
from kubedra.cel._env import DeviceEnv, EnvType
from kubedra.cel._program import (
    BUDGET_EXCEEDED,
    COMPILE_CACHE_SIZE,
    MAX_EXPRESSION_LENGTH,
    STATIC_COST_LIMIT,
    CompileDeferred,
    CompileError,
    EvalError,
    Prepared,
    Program,
    cache_info,
    cached_only,
    clear_cache,
    compile_budget,
    compile_expression,
    prepare,
    runtime_error_text,
    validate_selector,
)
from kubedra.cel._scheduler import scheduler_error_text

compile = compile_expression

__all__ = [
    "BUDGET_EXCEEDED",
    "COMPILE_CACHE_SIZE",
    "COST_LIMIT_EXCEEDED",
    "MAX_EXPRESSION_LENGTH",
    "RUNTIME_COST_LIMIT",
    "STATIC_COST_LIMIT",
    "CompileDeferred",
    "CompileError",
    "DeviceEnv",
    "EnvType",
    "EvalError",
    "Prepared",
    "PreparedDevice",
    "Program",
    "cache_info",
    "cached_only",
    "clear_cache",
    "compile",
    "compile_budget",
    "compile_expression",
    "prepare",
    "prepare_device",
    "runtime_error_text",
    "scheduler_error_text",
    "validate_selector",
]
