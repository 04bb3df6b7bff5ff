"""The tutorial in docs/driver-sdk.md works as written: its driver module and its test."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "driver-sdk.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)


async def test_tutorial_driver_passes_its_own_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver_src, test_src = _python_blocks()
    assert len(driver_src.splitlines()) <= 50
    (tmp_path / "mydriver.py").write_text(driver_src)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mydriver", raising=False)
    namespace: dict[str, Any] = {}
    exec(compile(test_src, "test_mydriver.py", "exec"), namespace)
    await namespace["test_prepare_writes_the_cdi_spec"](monkeypatch)
