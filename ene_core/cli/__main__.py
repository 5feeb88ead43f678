"""``python -m ene_core.cli``: the ``ene`` command."""

from .commands import main

if __name__ == "__main__":
    raise SystemExit(main())
