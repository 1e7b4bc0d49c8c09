"""Exceptions users see.

Every error a user can cause by handing kgrag bad input derives from :class:`KGRagError`, so the CLI can
print it as one line (no traceback) and exit with a distinct status.
"""

from __future__ import annotations


class KGRagError(Exception):
    """Base class of every error that is the user's input, not a bug in kgrag."""

    exit_code = 1


class KGFormatError(KGRagError, ValueError):
    """A KG input file (or frame) is malformed; the message reads ``path:line: what is wrong``."""

    exit_code = 2

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class KGStoreError(KGRagError, OSError):
    """A saved KG store is missing, from an unknown format version, or fails its checksum."""

    exit_code = 2


class UnknownEntityError(KGRagError, KeyError):
    """A name given by the user is not an entity (or relation) of the KG."""

    exit_code = 2

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "unknown entity"


class MissingExtraError(KGRagError, ImportError):
    """An optional dependency is not installed; the message names the pip extra that brings it."""

    exit_code = 2

    def __init__(self, extra: str | None, what: str, module: str) -> None:
        hint = f"pip install 'kgrag[{extra}]'" if extra else f"pip install {module} (a core dependency of kgrag)"
        super().__init__(f"{what} needs the '{module}' package: {hint}")


class LLMError(KGRagError, RuntimeError):
    """An LLM backend failed in a way retries cannot fix (bad request, context overflow, auth)."""

    exit_code = 3


class LLMUnavailableError(LLMError):
    """An LLM endpoint stayed unreachable (connection refused, timeouts, 429, 5xx) after all retries."""


class LLMResponseError(LLMError):
    """An LLM endpoint answered 200 with something that is not a chat completion (HTML, text, wrong shapes).

    Not retried: a proxy's login page or a server that speaks another API gives the same reply every time.
    """


class ModelSetupError(KGRagError):
    """A local model is missing, incomplete or fails its checksum."""

    exit_code = 2
