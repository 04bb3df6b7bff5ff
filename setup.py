"""The API server's request path compiled to C with mypyc, from the same typed source that
``mypy --strict`` checks: the API server's loop is the control plane's ceiling, and compiled
it spends about a tenth less CPU per pod (bench/README.md, "Compiled with mypyc").

Only with ``KUBEDRA_COMPILE=1``, in an environment that has the dependencies and the
``compile`` extra (``make compile`` does this, and ``make test`` through it: mypyc types the
code against the dependencies, which an isolated build lacks). Every other install is plain
Python, which behaves the same; so is this one if the modules cannot be built (no C compiler
or Python headers). An editable install builds them in place beside their sources; ``make``
rebuilds them when one of :func:`compiled_sources` changes, and the tests refuse to run
against a compiled module older than its source.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SRC = Path(__file__).parent / "src"

COMPILED = ["kubedra/apiserver", "kubedra/validation", "kubedra/registry/pipeline.py",
            "kubedra/registry/strategies",
            "kubedra/registry/identity.py", "kubedra/storage/sqlite", "kubedra/proto/kube.py"]
"""What the API server's loop runs for every request (``registry/strategies``: each kind's
write hooks; ``proto/kube.py``: the protobuf wire form of every body and answer a Go client
exchanges). (The control loops, compiled too,
ran the steady state another 5 % faster, but mypyc lets a compiled coroutine that awaits a
cancelled task while an exception propagates leak the CancelledError, and their shutdown
and failure paths do just that: bench/README.md.)"""

INTERPRETED = {
    # run as a program by its path (the committer process)
    "kubedra/storage/sqlite/commitproc.py",
    # its tests lose the committer's answers and refuse its restarts by replacing methods
    "kubedra/storage/sqlite/committer.py",
    # async generators, which mypyc does not compile
    "kubedra/apiserver/hub.py",
    # aiohttp's ``reify`` on its request class's methods needs plain functions
    "kubedra/apiserver/audit.py",
}
"""Modules under :data:`COMPILED` left as Python, each for the reason given."""

NATIVE: dict[str, str] = {"kubedra.proto._encode": "src/kubedra/proto/_encode.c"}
"""C extensions built with the compiled modules: the protobuf encoder's common case
(``proto/kube.py`` encodes whatever it declines, and everything without it)."""

GROUP = "kubedra_native"
"""The shared library every compiled module's stub loads (``src/kubedra_native__mypyc*``)."""


def compiled_sources() -> list[str]:
    """The sources compiled, relative to the project (tests read them from here too)."""
    found: list[str] = []
    for entry in COMPILED:
        path = SRC / entry
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        found += [str(f.relative_to(SRC.parent)) for f in files
                  if str(f.relative_to(SRC)) not in INTERPRETED]
    return found


class _AllOrNothing(build_ext):
    """Build every compiled module or none: a stub without the shared library (or with an
    older one) would not import, where the Python source would. The shared library is one
    extension of many C files, which setuptools compiles one after another; here they are
    compiled on every core."""

    def build_extension(self, ext: Any) -> None:
        compile_each = self.compiler.compile

        def compile_all(sources: list[str], *args: Any, **kwargs: Any) -> list[str]:
            with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                objects = pool.map(lambda source: compile_each([source], *args, **kwargs),
                                   sources)
                return [obj for part in objects for obj in part]

        self.compiler.compile = compile_all
        try:
            super().build_extension(ext)
        finally:
            del self.compiler.compile

    def run(self) -> None:
        try:
            super().run()
        except Exception as err:  # noqa: BLE001 - any build failure means plain Python
            for ext in self.extensions:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            self.extensions = []
            logging.getLogger("kubedra.setup").warning(
                "kubedra: building the compiled modules failed (%s); installing plain "
                "Python, which behaves the same, only slower", err)


def _extensions() -> list[Any]:
    if os.environ.get("KUBEDRA_COMPILE") != "1":
        return []
    from mypyc.build import mypycify

    return [*mypycify(compiled_sources(), opt_level="3", debug_level="0", multi_file=True,
                      group_name=GROUP),
            *(Extension(name, [source], extra_compile_args=["-O2"])
              for name, source in NATIVE.items())]


if __name__ == "__main__":  # as setuptools runs it; a test imports it for its lists
    setup(ext_modules=_extensions(), cmdclass={"build_ext": _AllOrNothing})
