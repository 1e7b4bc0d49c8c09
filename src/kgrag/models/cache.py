"""Opt-in on-disk cache of LLM responses, so evaluations are reproducible and re-runs cost nothing.

Keyed by sha256 of (model id, messages, generation parameters); stored in one SQLite file, safe to share
between threads and processes (SQLite serialises writers).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from kgrag.types import TokenLogprob


def cache_key(model_id: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
    payload = json.dumps(
        {"model": model_id, "messages": messages, "params": params}, sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """``get``/``put`` of (text, prompt_tokens, completion_tokens) by key, and the reply's token
    log-probabilities (``logprobs``) where the backend gave them.

    >>> import tempfile, os
    >>> cache = ResponseCache(os.path.join(tempfile.mkdtemp(), "c.sqlite"))
    >>> cache.put("k", "hello", 3, 1); cache.get("k")
    ('hello', 3, 1)
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, text TEXT NOT NULL, "
                "prompt_tokens INTEGER, completion_tokens INTEGER)"
            )
            # a table of its own, so caches written before token log-probabilities were kept still open
            conn.execute("CREATE TABLE IF NOT EXISTS logprobs (key TEXT PRIMARY KEY, tokens TEXT NOT NULL)")

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> tuple[str, int, int] | None:
        row = (
            self._conn()
            .execute("SELECT text, prompt_tokens, completion_tokens FROM responses WHERE key = ?", (key,))
            .fetchone()
        )
        return (row[0], int(row[1]), int(row[2])) if row else None

    def put(
        self,
        key: str,
        text: str,
        prompt_tokens: int,
        completion_tokens: int,
        token_logprobs: list[TokenLogprob] | None = None,
    ) -> None:
        with self._conn() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                (key, text, prompt_tokens, completion_tokens),
            )
            if token_logprobs is not None:
                rows = [[t.token, round(t.logprob, 4), round(t.best, 4), round(t.entropy, 4)] for t in token_logprobs]
                tokens = json.dumps(rows, ensure_ascii=False)
                conn.execute("INSERT OR REPLACE INTO logprobs VALUES (?, ?)", (key, tokens))

    def logprobs(self, key: str) -> list[TokenLogprob] | None:
        """The cached reply's tokens with their log-probabilities, when they were stored with it."""
        row = self._conn().execute("SELECT tokens FROM logprobs WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        return [TokenLogprob(str(t), float(lp), float(best), float(h)) for t, lp, best, h in json.loads(row[0])]

    def __len__(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])
