"""Small helpers for the local servers kgrag starts (FalkorDB, llama.cpp server in tests)."""

from __future__ import annotations

import subprocess


def stop_process(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Terminate ``proc``; kill it if it has not exited after ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
