"""Run ``kgrag serve`` as a child process and wait until it answers (browser test, load benchmark).

The server picks a free port itself (``--port 0``) and prints its URL on one line; reading that line
avoids the race of choosing a port first and binding it later.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kgrag.processes import stop_process


class ServerStartError(RuntimeError):
    pass


@contextmanager
def running_server(kg_dir: str | Path, *args: str, timeout: float = 120.0) -> Iterator[str]:
    """Start ``kgrag serve KG_DIR --port 0 ARGS`` on 127.0.0.1, yield its base URL, stop it afterwards."""
    cmd = [sys.executable, "-m", "kgrag", "serve", str(kg_dir), "--host", "127.0.0.1", "--port", "0", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stderr: list[str] = []
    drain = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    drain.start()
    try:
        url = _read_url(proc, timeout)
        if url is None:
            raise ServerStartError(f"`{' '.join(cmd)}` did not start: {''.join(stderr)[-2000:]}")
        _wait_healthy(url, proc, timeout)
        yield url
    finally:
        stop_process(proc)


def _read_url(proc: subprocess.Popen, timeout: float) -> str | None:
    found: list[str] = []

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            if " at http://" in line:
                found.append(line.rsplit(" at ", 1)[1].strip())
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    return found[0].rstrip("/") if found else None


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerStartError(f"the server exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=5) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise ServerStartError(f"{url}/health did not answer within {timeout:g} s")
