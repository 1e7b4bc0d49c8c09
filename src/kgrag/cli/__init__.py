"""The ``kgrag`` command line (typer + rich).

Every command that reads a KG takes a store directory made by ``kgrag ingest``.  User errors (bad input
files, unknown entities, missing stores) print one ``error: ...`` line on stderr and exit with status 2;
``--json`` makes a command print exactly one JSON object on stdout.
"""

from __future__ import annotations

import sys

# the order the commands are listed in `kgrag --help`
# isort: off
from kgrag.cli import kg as _kg  # noqa: F401 - the command modules register their commands on import
from kgrag.cli import qa as _qa  # noqa: F401
from kgrag.cli import bench as _bench  # noqa: F401
from kgrag.cli import compare as _compare  # noqa: F401
from kgrag.cli import stores as _stores  # noqa: F401
from kgrag.cli import models as _models  # noqa: F401
from kgrag.cli import frag as _frag  # noqa: F401
from kgrag.cli import adapt as _adapt  # noqa: F401
from kgrag.cli import service as _service  # noqa: F401

# isort: on
from kgrag.cli.common import app, err_console
from kgrag.errors import KGRagError


def main() -> None:
    """Console-script entry point: run the app, turning user errors into one line and exit status."""
    try:
        app()
    except KGRagError as exc:
        sys.stderr.write(f"error: {exc}\n")  # one plain line: no wrapping, grep-able
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":  # pragma: no cover
    main()


__all__ = ["app", "main"]
