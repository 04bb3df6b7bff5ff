"""Plumbing every benchmark shares: its command line, median timing and the JSON result file.

Each ``bench/<name>_bench.py`` keeps its own ``main(argv)``; sharing this keeps the contract
(``--smoke``, ``--json FILE``) and the units of the figures the same across them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any


def arg_parser(
    description: str | None, smoke_help: str = "tiny size (< 5 s)"
) -> argparse.ArgumentParser:
    """A parser with the options every benchmark takes: ``--smoke`` and ``--json FILE``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--smoke", action="store_true", help=smoke_help)
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    return parser


BACKENDS = ("sqlite", "etcd")


def backends_option(parser: argparse.ArgumentParser) -> None:
    """``--backend sqlite,etcd``: the stores to measure, reported side by side."""

    def backends(value: str) -> list[str]:
        names = [n.strip() for n in value.split(",") if n.strip()]
        unknown = sorted(set(names) - set(BACKENDS))
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"backends are {', '.join(BACKENDS)}: {value!r}")
        return names

    parser.add_argument("--backend", type=backends, default=["sqlite"],
                        help="store backends, comma-separated: sqlite (default), etcd")


def median_us(seconds: Iterable[float]) -> float:
    """The median of durations given in seconds, in microseconds."""
    return statistics.median(seconds) * 1e6


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of values sorted ascending: the value at rank ``q * n``
    (the last one for q = 1); 0 for no values."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def time_median_us(fn: Callable[[], object], repeats: int) -> float:
    """Call ``fn`` ``repeats`` times; the median wall-clock time of one call in microseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return median_us(times)


def cpu_seconds(pid: int, children: bool = True) -> float:
    """User + system CPU time of process ``pid`` (all threads) and, with ``children``, of
    its live child processes (the API server's store committer), from /proc; 0 once it is
    gone. On a shared machine CPU per operation is the figure load does not distort."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(child) for child in _children(pid)) if children else own


def _children(pid: int) -> list[int]:
    children: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                children += (int(c) for c in (task / "children").read_text().split())
    return children


def calibration_ms() -> float:
    """CPU milliseconds of a fixed pure-Python loop: the machine's speed right now (a
    loaded machine's shared caches slow every process), to put CPU figures of runs taken
    under different load side by side."""
    start = time.process_time()
    table: dict[str, list[int]] = {}
    for i in range(200_000):
        table[str(i)] = [i, i * 2]
    return (time.process_time() - start) * 1000


def sample(metrics: str, name: str) -> float | None:
    """The value of the unlabelled sample ``name`` in a ``/metrics`` answer, or None."""
    return next((float(line.split()[1]) for line in metrics.splitlines()
                 if line.startswith(name + " ")), None)


def write_json(path: str | None, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path`` (the ``--json`` option), if one was given."""
    if path:
        Path(path).write_text(json.dumps(data, indent=2) + "\n")


class Callgrind:
    """A server run under valgrind's callgrind, counted between marks: instructions, the same
    for the same code and inputs whatever else the machine does (valgrind must be installed).

    ``prefix`` goes before the server's command; ``zero`` starts a count, ``dump`` ends it;
    ``counts()``, once the server has exited, gives each dump's instruction total in order."""

    def __init__(self, out_dir: Path) -> None:
        if shutil.which("valgrind") is None:
            raise SystemExit("--callgrind needs valgrind")
        self.out_dir = out_dir
        self.prefix = ("valgrind", "--tool=callgrind",
                       f"--callgrind-out-file={out_dir / 'callgrind.out.%p'}")

    @staticmethod
    def zero(pid: int) -> None:
        _callgrind_control(pid, "--zero")

    @staticmethod
    def dump(pid: int) -> None:
        _callgrind_control(pid, "--dump")

    def counts(self) -> list[int]:
        return [_instructions(d) for d in self._dumps()]

    def keep(self, dest: Path, names: list[str]) -> None:
        """Copy each dump, in order, to ``dest/<name>.callgrind`` (for callgrind_annotate)."""
        dest.mkdir(parents=True, exist_ok=True)
        for dump, name in zip(self._dumps(), names, strict=True):
            shutil.copyfile(dump, dest / f"{name}.callgrind")

    def _dumps(self) -> list[Path]:
        dumps = sorted(self.out_dir.glob("callgrind.out.*.*"),
                       key=lambda p: int(p.name.rsplit(".", 1)[1]))
        if not dumps:
            raise RuntimeError("callgrind wrote no dump of the measured part")
        return dumps


def _callgrind_control(pid: int, command: str) -> None:
    subprocess.run(["callgrind_control", command, str(pid)], check=True, capture_output=True)


def _instructions(dump: Path) -> int:
    for line in dump.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no instruction total in {dump}")
