"""The per-request compile budget: spent, further compiles fail and nothing is cached."""

from __future__ import annotations

from kubedra import cel


def test_compiles_after_the_budget_fail_uncached() -> None:
    expr = 'attributes.string["budget-test"] == "x"'
    cel.clear_cache()
    with cel.compile_budget(-1.0):  # already spent
        assert cel.validate_selector(expr, False) == cel.BUDGET_EXCEEDED
    assert cel.validate_selector(expr, False) is None  # the refusal was not cached
    with cel.compile_budget(-1.0):  # cached results cost nothing and stay available
        assert cel.validate_selector(expr, False) is None


def test_a_generous_budget_changes_nothing() -> None:
    with cel.compile_budget(60.0):
        assert cel.validate_selector("1 +", False) is not None
        assert cel.validate_selector('attributes.bool["b"]', False) is None


def test_cached_only_defers_a_compile_and_answers_from_the_cache() -> None:
    expr = 'attributes.string["deferred-test"] == "x"'
    cel.clear_cache()
    with cel.cached_only():
        try:
            cel.validate_selector(expr, False)
        except cel.CompileDeferred:
            pass
        else:
            raise AssertionError("a cache miss compiled inside cached_only()")
    assert cel.cache_info()["size"] == 0  # nothing compiled, nothing cached
    assert cel.validate_selector(expr, False) is None
    with cel.cached_only():  # compiled once: answered from the cache
        assert cel.validate_selector(expr, False) is None
    assert cel.validate_selector(expr, False) is None  # the mode ended with the block
