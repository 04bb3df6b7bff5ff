"""cel-scheduler-error-status.json, CEL side: the Filter message produced when a selector
hits a missing attribute (the plugin's status codes are covered by the allocation tests)."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.api.resource.v1alpha2 import NamedResourcesAttribute
from kubedra.cel import EnvType, EvalError, compile_expression, prepare, scheduler_error_text
from tests.vectors import load, vector_cases

FILE = "cel-scheduler-error-status.json"
CASES = load(FILE)["cases"]
SELECTOR = 'attributes.bool["no-such-attribute"]'


@vector_cases(FILE, CASES)
def test_filter_message(case: dict[str, Any]) -> None:
    which = "request" if case["name"].startswith("claim-") else "filter"
    program = compile_expression(SELECTOR, EnvType.STORED_EXPRESSIONS)
    instance = prepare([NamedResourcesAttribute(name="other", bool_=True)])
    with pytest.raises(EvalError) as exc:
        program.evaluate(instance)
    msg = scheduler_error_text(which, exc.value, node="worker", driver="some-driver")
    assert msg == case["filter_status"]["message"]
    assert case["filter_status"]["code"] == "UnschedulableAndUnresolvable"
