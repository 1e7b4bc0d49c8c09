"""The embedded Cypher engine in a child process that cannot touch files and cannot take the machine's memory.

Why a process: Ladybug runs in-process, has no setting that disables ``LOAD FROM`` / ``COPY ... TO`` /
``EXPORT DATABASE``, ignores its query timeout while it materialises a list (``UNWIND range(1, 2000000000)``
took 16 GB and 155 s past a 15 s timeout), and a native crash would take the whole service down. So every
query runs in a child that

- opened the database read-only, then installed a seccomp filter (:mod:`.seccomp`): no file can be opened,
  created or changed, no socket opened, no program started — whatever the query text says;
- has its address space capped (``RLIMIT_AS``): an allocation past the cap fails inside the child;
- is killed and restarted by the parent when it overruns the query's timeout by more than a grace period,
  dies, or answers with something that is not a reply.

Protocol: length-prefixed JSON messages on the child's stdin/stdout (the child's own stdout is moved to
stderr, so nothing the engine prints can corrupt a reply).  Start-up costs ~0.5 s (importing ladybug); a
query adds well under a millisecond of round trip.
"""

from __future__ import annotations

import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

# Environment variable that lets an operator run untrusted Cypher without the seccomp wall on a platform
# that has none (the guard and the read-only handle remain). Documented in docs/SECURITY.md.
ALLOW_UNSANDBOXED = "KGRAG_ALLOW_UNSANDBOXED_CYPHER"
DEFAULT_MEMORY_LIMIT = 1 << 30  # working memory of a query, on top of what the opened database maps
MAX_REPLY = 64 << 20
_HEADER = struct.Struct(">I")


class EngineError(RuntimeError):
    """The engine process failed a query in a way that is not the engine's own error message."""


# ---------------------------------------------------------------------------------------------- wire format
def _send(fd: int, message: dict[str, Any]) -> None:
    data = json.dumps(message, default=str).encode("utf-8")
    os.write(fd, _HEADER.pack(len(data)))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _receive(fd: int, deadline: float | None = None) -> dict[str, Any]:
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > MAX_REPLY:
        raise EngineError(f"the engine's reply is {size:,} bytes (limit {MAX_REPLY:,})")
    return json.loads(_read_exact(fd, size, deadline))


# ---------------------------------------------------------------------------------------------- parent side
class SandboxedEngine:
    """A read-only Ladybug database served by a sandboxed child process (started lazily, restarted on failure).

    ``memory_limit`` bounds what a query may allocate beyond the mapped database; ``grace`` is how long past
    its own timeout a query may run before the child is killed.
    """

    def __init__(
        self,
        db_path: str | Path,
        *,
        memory_limit: int = DEFAULT_MEMORY_LIMIT,
        threads: int = 2,
        grace: float = 2.0,
        require_sandbox: bool | None = None,
    ) -> None:
        self.db_path = str(db_path)
        self.memory_limit = int(memory_limit)
        self.threads = threads
        self.grace = grace
        if require_sandbox is None:
            require_sandbox = os.environ.get(ALLOW_UNSANDBOXED, "") not in ("1", "true", "yes")
        self.require_sandbox = require_sandbox
        self.sandbox = ""  # what the running child reported: "seccomp" or why not
        self.restarts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _kill, [None])

    def _start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kgrag.graph.backends.sandbox"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            close_fds=True,
        )
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _kill, [proc])
        assert proc.stdin is not None and proc.stdout is not None
        config = {
            "db_path": self.db_path,
            "memory_limit": self.memory_limit,
            "threads": self.threads,
            "require_sandbox": self.require_sandbox,
        }
        try:
            _send(proc.stdin.fileno(), config)
            ready = _receive(proc.stdout.fileno(), time.monotonic() + 120)
        except (OSError, EOFError, TimeoutError, ValueError) as exc:
            _kill([proc])
            raise EngineError(f"the Cypher engine process did not start ({type(exc).__name__})") from None
        if "error" in ready:
            _kill([proc])
            raise EngineError(ready["error"])
        self.sandbox = ready.get("sandbox", "")
        return proc

    def execute(
        self, query: str, params: dict[str, Any] | None, timeout: float, row_cap: int
    ) -> tuple[list[str], list[list[Any]], bool]:
        """Run one query; engine errors come back as ``RuntimeError`` with the engine's message."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = self._start()
            proc = self._proc
            assert proc.stdin is not None and proc.stdout is not None
            request = {"query": query, "params": params or {}, "timeout_ms": int(timeout * 1000), "row_cap": row_cap}
            try:
                _send(proc.stdin.fileno(), request)
                reply = _receive(proc.stdout.fileno(), time.monotonic() + timeout + self.grace)
            except TimeoutError:
                self._restart()
                raise TimeoutError(
                    f"the query ran past its {timeout:g} s limit and its engine process was stopped"
                ) from None
            except (EOFError, OSError, ValueError, EngineError) as exc:
                self._restart()
                detail = str(exc) if isinstance(exc, EngineError) else "the engine process died"
                raise EngineError(
                    f"{detail} (a crash, or a query needing more than {self.memory_limit >> 20} MiB); it was restarted"
                ) from None
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["columns"], reply["rows"], reply["truncated"]

    def _restart(self) -> None:
        _kill([self._proc])
        self._proc = None
        self.restarts += 1

    def close(self) -> None:
        with self._lock:
            _kill([self._proc])
            self._proc = None


def _kill(holder: list[subprocess.Popen[bytes] | None]) -> None:
    proc = holder[0]
    if proc is None or proc.poll() is not None:
        return
    proc.kill()
    proc.wait(timeout=10)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            pipe.close()


# ---------------------------------------------------------------------------------------------- child side
def _vm_size() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _warm_up(conn: Any) -> None:
    """Load every module a query or its result conversion may import later (imports open files)."""
    import datetime  # noqa: F401
    import decimal  # noqa: F401
    import uuid  # noqa: F401

    from kgrag.graph.backends.base import plain_value

    probes = [
        "RETURN 1, 1.5, 'x', true, null, [1, 2], {a: 1}",
        "RETURN date('2020-01-02'), timestamp('2020-01-02 03:04:05'), interval('1 day'), CAST(1.5 AS DECIMAL(4, 2))",
        "RETURN gen_random_uuid(), CAST(1 AS INT128), CAST(2 AS UINT64)",
        "MATCH (n) RETURN n LIMIT 1",
        "MATCH ()-[r]->() RETURN r LIMIT 1",
    ]
    for query in probes:
        try:
            result = conn.execute(query)
            while result.has_next():
                plain_value(result.get_next())
        except RuntimeError:
            pass  # a probe this engine version does not know: nothing to import for it


def _serve(config: dict[str, Any], fd_in: int, fd_out: int) -> None:
    import resource  # POSIX only: imported in the child, not when the backend module loads

    import ladybug

    from kgrag.graph.backends import seccomp
    from kgrag.graph.backends.base import plain_value

    db = ladybug.Database(
        config["db_path"],
        read_only=True,
        buffer_pool_size=min(config["memory_limit"], 1 << 30),
        max_num_threads=config["threads"],
    )
    conn = ladybug.Connection(db)
    _warm_up(conn)
    with_room = _vm_size() + config["memory_limit"]
    resource.setrlimit(resource.RLIMIT_AS, (with_room, with_room))
    try:
        seccomp.install()
        sandbox = "seccomp"
    except seccomp.SandboxUnavailable as exc:
        if config["require_sandbox"]:
            _send(fd_out, {"error": f"untrusted Cypher needs the engine sandbox: {exc} (see docs/SECURITY.md)"})
            return
        sandbox = f"none ({exc})"
    _send(fd_out, {"ready": True, "sandbox": sandbox})
    while True:
        try:
            request = _receive(fd_in)
        except EOFError:
            return
        try:
            conn.set_query_timeout(request["timeout_ms"])
            result = conn.execute(request["query"], request["params"])
            columns = list(result.get_column_names())
            rows: list[list[Any]] = []
            while result.has_next() and len(rows) < request["row_cap"]:
                rows.append([plain_value(v) for v in result.get_next()])
            reply: dict[str, Any] = {"columns": columns, "rows": rows, "truncated": result.has_next()}
        except MemoryError:
            reply = {"error": f"MemoryError: the query needs more than {config['memory_limit'] >> 20} MiB"}
        except RuntimeError as exc:  # the engine's parse/bind/runtime/timeout errors, as text
            reply = {"error": str(exc)}
        except Exception as exc:
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        _send(fd_out, reply)


def main() -> None:
    """Entry point of the child: the first message is the configuration, then one reply per query."""
    fd_in, fd_out = os.dup(0), os.dup(1)
    os.dup2(2, 1)  # whatever the engine prints goes to stderr, never into the reply stream
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    try:
        _serve(_receive(fd_in), fd_in, fd_out)
    except Exception as exc:  # start-up failed: say why instead of dying silently
        _send(fd_out, {"error": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    main()
