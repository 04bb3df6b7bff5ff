"""Run every benchmark at a small size so they cannot rot (used by ``make test``)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)])
                   if m.name != "smoke" and not m.name.startswith("_"))
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        module.main(["--smoke"])
    print(f"bench smoke: {len(names)} benchmarks ran", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
