"""What the service keeps between requests: the KG, the LLM, method instances, the worker pool.

Loading is the slow part (embedders, linking indexes, a local model), so everything is built once and
reused: the LLM on the first request that needs one, a method instance per (method, settings, with/without
LLM) in a small LRU. Methods are safe to share between threads (the evaluation runner does the same).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgrag.errors import KGRagError, LLMError
from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.base import Method
from kgrag.models.llm.base import LLM
from kgrag.service.autocomplete import EntityCompleter
from kgrag.service.limits import ConcurrencyLimitedLLM
from kgrag.service.settings import check_operator_settings


class LLMLoadError(LLMError):
    """The configured LLM could not be loaded (missing model, bad spec, missing extra): HTTP 503."""


@dataclass
class ServiceConfig:
    """Limits and defaults of one service instance (``kgrag serve`` options)."""

    llm: str | None = None
    """LLM spec (``llamacpp:NAME``, ``openai:MODEL@URL``, ``scripted:FILE``); None = the default local model."""
    cache: str | None = None
    """SQLite file caching LLM responses (None: no cache)."""
    llm_timeout: float | None = None
    """Seconds one call to an ``openai:`` endpoint may take, retries included (None: the backend's default)."""
    max_llm_calls: int = 1
    """LLM calls running at once across all requests; more wait."""
    request_timeout: float = 300.0
    """Seconds before /ask or /retrieve gives up with 504 (the method's thread finishes in the background)."""
    max_question_chars: int = 1000
    max_topic_entities: int = 10
    workers: int = 4
    """Threads running methods (CPU-bound retrieval and LLM calls)."""
    method_cache_size: int = 16
    default_method: str = "auto"
    bind_host: str | None = "127.0.0.1"
    """Address the server listens on; a Host header may name it (besides localhost, 127.0.0.1 and [::1])."""
    allowed_hosts: tuple[str, ...] = ()
    """More names a Host header may carry (the server's DNS name); any other Host is refused (DNS rebinding)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """The operator's method settings (``kgrag serve --set``), for every method that has them; the only way to
    set what names a file, model or host. A client's settings override the rest (within client bounds)."""


class ServiceState:
    def __init__(self, kg: KnowledgeGraph, config: ServiceConfig | None = None, *, llm: LLM | None = None) -> None:
        from kgrag.methods import registry

        self.kg = kg
        self.config = config or ServiceConfig()
        check_operator_settings({name: registry.get(name) for name in registry}, self.config.settings)
        self._llm: LLM | None = None if llm is None else ConcurrencyLimitedLLM(llm, self.config.max_llm_calls)
        self._llm_lock = threading.Lock()
        self._methods: OrderedDict[tuple, Method] = OrderedDict()
        self._methods_lock = threading.Lock()
        self.executor = ThreadPoolExecutor(self.config.workers, thread_name_prefix="kgrag-service")
        self.stats = kg.stats()
        self.in_flight = 0
        self._count_lock = threading.Lock()
        self._completer: EntityCompleter | None = None
        self._completer_lock = threading.Lock()

    @contextmanager
    def running(self) -> Iterator[None]:
        """Count a request's work as in flight (reported by /health)."""
        with self._count_lock:
            self.in_flight += 1
        try:
            yield
        finally:
            with self._count_lock:
                self.in_flight -= 1

    @property
    def llm_loaded(self) -> bool:
        return self._llm is not None

    @property
    def llm_spec(self) -> str:
        if self._llm is not None:
            return self._llm.model_id
        from kgrag.models.llm import default_llm_spec

        return self.config.llm or default_llm_spec()

    def llm(self) -> LLM:
        """The service's LLM, loaded on first use (a local model takes seconds) and wrapped in the call limit."""
        with self._llm_lock:
            if self._llm is None:
                from kgrag.models.llm import load_llm

                try:
                    timeout = {} if self.config.llm_timeout is None else {"timeout": self.config.llm_timeout}
                    model = load_llm(self.config.llm, cache=self.config.cache, **timeout)
                    model.wait_loaded()  # a bad model file fails here, with the spec, not at a question
                except (KGRagError, ImportError, OSError, ValueError) as exc:
                    raise LLMLoadError(f"cannot load {self.llm_spec}: {exc}") from exc
                self._llm = ConcurrencyLimitedLLM(model, self.config.max_llm_calls)
            return self._llm

    def method(self, name: str, settings: dict[str, Any], *, with_llm: bool) -> Method:
        """A cached method instance; raises UnknownNameError / MethodConfigError for bad names or settings."""
        from kgrag.methods import get as get_method

        cls = get_method(name)
        key = (name, json.dumps(settings, sort_keys=True, default=str), with_llm and cls.needs_llm)
        with self._methods_lock:
            if key in self._methods:
                self._methods.move_to_end(key)
                return self._methods[key]
        llm = self.llm() if key[2] else None
        instance = cls(self.kg, llm=llm, **settings)  # validates the settings
        with self._methods_lock:
            instance = self._methods.setdefault(key, instance)
            self._methods.move_to_end(key)
            while len(self._methods) > self.config.method_cache_size:
                self._methods.popitem(last=False)
        return instance

    @property
    def completer(self) -> EntityCompleter:
        """Entity autocomplete, built once (the first caller builds it, others wait for it)."""
        if self._completer is None:
            with self._completer_lock:
                if self._completer is None:
                    self._completer = EntityCompleter(self.kg)
        return self._completer

    def kg_name(self) -> str:
        path: Path | None = getattr(self.kg, "store_path", None)
        return path.name if path is not None else "in-memory KG"

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
