"""The C allocator's side of the server's memory (glibc only; elsewhere these do nothing).

CPython frees large objects with ``free``, but glibc keeps freed heap memory for reuse and
raises its mmap threshold after the first large free, so a burst of large objects leaves
the process at its peak size. Large blocks are kept on mmap (returned as soon as they are
freed) and the heap is trimmed after the watch window evicts a lot.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

_M_MMAP_THRESHOLD = -3
# blocks from this size up are mmapped: larger than any ordinary object, smaller than the
# annotation blobs and vendor parameters that make the window large
_MMAP_THRESHOLD = 64 << 10


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.malloc_trim  # noqa: B018 - glibc only
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def tune_for_server() -> None:
    """Keep large blocks off the heap so that freeing them shrinks the process."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)


def release_free_memory() -> None:
    """Return the free parts of the heap to the system (``malloc_trim(0)``)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
