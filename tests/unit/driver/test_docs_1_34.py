"""docs/driver-sdk.md's 1.34 driver and its test work as written, as a project of its own
(the doc's pytest.ini, a 1.34 API server in a subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.driver.helpers import blocks
from tests.unit.driver.test_docs import run_pytest

pytestmark = pytest.mark.timeout(180)


def test_the_1_34_driver_passes_its_own_test(short_dir: Path) -> None:
    driver_src, test_src = blocks("python")[3:5]
    (ini_src,) = blocks("ini")
    (short_dir / "mydriver134.py").write_text(driver_src)
    (short_dir / "test_mydriver134.py").write_text(test_src)
    (short_dir / "pytest.ini").write_text(ini_src)
    done = run_pytest(short_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
