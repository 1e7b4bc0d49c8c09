"""``python -m kgrag`` is the same as the ``kgrag`` command."""

from kgrag.cli import main

main()
