"""Run a snippet of Python under several string hash seeds: what it prints, once per answer."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence


def outputs_under_hash_seeds(code: str, seeds: Sequence[str] = ("1", "2", "3")) -> set[str]:
    """The distinct standard outputs of ``python -c code`` run with each ``PYTHONHASHSEED``:
    one element when nothing it prints depends on the order sets and dicts of strings take."""
    return {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in seeds
    }
