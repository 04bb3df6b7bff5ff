"""The C allocator's side of the server's memory (glibc only; elsewhere this does nothing).

CPython frees large objects with ``free``, but glibc keeps freed heap memory for reuse, so a
burst of large objects leaves the process at its peak size; the heap is trimmed after the
watch window evicts a lot. (Keeping large blocks on mmap instead would return them at once,
but costs a system call pair on every 256 KiB socket read: a quarter of the GET throughput.)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.malloc_trim  # noqa: B018 - glibc only
    except (OSError, AttributeError):
        return None
    return libc


def release_free_memory() -> None:
    """Return the free parts of the heap to the system (``malloc_trim(0)``)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
