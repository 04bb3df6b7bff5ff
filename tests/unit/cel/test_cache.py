"""The compile cache: bounded LRU keyed by (expression, environment), failures cached too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubedra.cel import (
    COMPILE_CACHE_SIZE,
    CompileError,
    EnvType,
    cache_info,
    clear_cache,
    compile_expression,
)


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


def test_hit_returns_same_program_per_environment() -> None:
    a = compile_expression("true", EnvType.STORED_EXPRESSIONS)
    assert compile_expression("true", EnvType.STORED_EXPRESSIONS) is a
    b = compile_expression("true", EnvType.NEW_EXPRESSIONS)
    assert b is not a and b.env_type is EnvType.NEW_EXPRESSIONS
    assert cache_info()["size"] == 2


def test_failures_are_cached() -> None:
    with pytest.raises(CompileError) as first:
        compile_expression("nosuchvar")
    with pytest.raises(CompileError) as second:
        compile_expression("nosuchvar")
    assert first.value is second.value


def test_bounded_least_recently_used_eviction() -> None:
    keep = compile_expression("true")
    for i in range(COMPILE_CACHE_SIZE + 10):
        compile_expression(f"{i} == {i}")
        compile_expression("true")  # keep it recently used
    info = cache_info()
    assert info["size"] == info["max"] == COMPILE_CACHE_SIZE
    assert compile_expression("true") is keep
    # the oldest entries were evicted: compiling again gives a new object
    first = compile_expression("0 == 0")
    assert compile_expression("0 == 0") is first
