"""CPU threads of a verifier's forward passes: the same digits whatever the machine's core count.

MKL splits the sum of a small GEMM between its threads, so a pass's last digits follow the thread
count it runs with (:class:`~ene_core.verifiers.nli.NLIOracle`'s docstring). Torch's thread
setting is process-wide; :func:`threads_held` gives the calling thread a count of its own
(OpenMP's and MKL's per-thread settings, through the C interfaces ``libtorch_cpu`` exports)
and falls back to torch's process-wide setting, set back after the block, where torch has no MKL.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError

# Held while a deterministic CPU call sets torch's process-wide thread count (threads_held, where a
# thread cannot set its own), so that two oracles never change it under each other.
_THREADS = threading.RLock()


class OwnThreads:
    """Sets the calling thread's own OpenMP and MKL thread counts (torch's setting is
    process-wide): :meth:`pin` gives what :meth:`unpin` sets back."""

    def __init__(self, torch: Any, omp: Any, mkl: Any) -> None:
        self.torch, self.omp, self.mkl = torch, omp, mkl

    def pin(self, threads: int) -> tuple[int, int]:
        before = self.torch.get_num_threads()  # also torch's per-thread setup, else it undoes ours
        self.omp(threads)
        return before, self.mkl(threads)  # MKL's: the thread's own count before (0: none)

    def unpin(self, before: tuple[int, int]) -> None:
        self.omp(before[0])
        self.mkl(before[1])


def checked_cpu_threads(value: Any) -> int | None:
    """An oracle's ``cpu_threads``: a positive int or None, else :class:`InvalidInputError`."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise InvalidInputError(f"cpu_threads must be a positive int or None, got {value!r}")
    return value


@contextmanager
def threads_held(torch: Any, threads: int) -> Iterator[None]:
    """The calling thread runs torch with ``threads`` threads until the block ends: with a count
    of its own where it can hold one (:func:`own_threads`), else with torch's process-wide count,
    set back after the block (under a lock every oracle shares, so two never change it under
    each other)."""
    own = own_threads()
    if own is not None:
        pinned = own.pin(threads)
        try:
            yield
        finally:
            own.unpin(pinned)
        return
    with _THREADS:
        before = torch.get_num_threads()
        if before != threads:
            torch.set_num_threads(threads)
        try:
            yield
        finally:
            if torch.get_num_threads() != before:
                torch.set_num_threads(before)


@functools.cache
def own_threads() -> OwnThreads | None:
    """:class:`OwnThreads` where torch links MKL and exports both runtimes' C interfaces (x86
    Linux wheels); else None."""
    import torch

    library = Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"
    if not torch.backends.mkl.is_available() or not library.exists():
        return None
    try:
        lib = ctypes.CDLL(str(library))
        omp, mkl = lib.omp_set_num_threads, lib.MKL_Set_Num_Threads_Local
    except (OSError, AttributeError):
        return None
    omp.argtypes, omp.restype = [ctypes.c_int], None
    mkl.argtypes, mkl.restype = [ctypes.c_int], ctypes.c_int
    return OwnThreads(torch, omp, mkl)
