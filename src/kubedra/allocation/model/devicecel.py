"""Device selectors compiled and evaluated by :mod:`kubedra.cel`'s ``device`` environment
(StoredExpressions, as the scheduler's allocator).

Each device is converted once (``cel.prepare_device``) and kept on its
:class:`~.devices.DeviceEntry`, so every selector evaluated on it reuses one activation.
"""

from __future__ import annotations

from kubedra import cel
from kubedra.allocation.model.devices import DeviceEntry, DeviceSelectors, Evaluator
from kubedra.allocation.selectors import SelectorCompileError, SelectorEvalError

_ENV = cel.DeviceEnv(cel.EnvType.STORED_EXPRESSIONS)


def compile_device_selector(expression: str) -> Evaluator:
    """Compile ``expression``; a compile error carries upstream's detail text."""
    try:
        program = cel.compile_expression(expression, _ENV)
    except cel.CompileError as err:
        raise SelectorCompileError(err.detail) from err

    def evaluate(entry: DeviceEntry) -> bool:
        prepared = entry.prepared
        if not isinstance(prepared, cel.PreparedDevice):
            device = entry.device
            prepared = entry.prepared = cel.prepare_device(
                entry.key[0], device.attributes, device.capacity,
                device.allow_multiple_allocations)
        try:
            return program.evaluate(prepared)
        except cel.EvalError as err:
            raise SelectorEvalError(str(err)) from err

    return evaluate


def cel_device_selectors() -> DeviceSelectors:
    """A device selector cache compiling with CEL (what the scheduler and the simulator use)."""
    return DeviceSelectors(compile_device_selector)
