"""``python -m optsched``: the CLI."""

import sys

from .cli import main

if __name__ == "__main__":  # guarded: pytest --doctest-modules imports this module
    sys.exit(main())
