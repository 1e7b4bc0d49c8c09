"""byokg's graph-query strategy: the KG's Cypher backend, who writes the query (KG-Linker or text2cypher's
writer), and running it guarded and read-only. A mixin of :class:`~kgrag.methods.byokg.BYOKG`, kept apart so
the method module reads as the iterative process."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from kgrag.graph.property_graph import stored_mapping
from kgrag.methods.base import Trace
from kgrag.methods.byokg.config import BYOKGConfig
from kgrag.methods.byokg.context import Context
from kgrag.methods.text2cypher import Text2Cypher
from kgrag.prompts import load_prompt
from kgrag.retrieval.graph_query import fit_relation_types, rows_as_evidence, run_recorded


class GraphQuery:
    """The graph-query tools of a method with ``kg``, ``llm`` and a :class:`BYOKGConfig` ``config``."""

    kg: Any
    llm: Any
    config: BYOKGConfig
    backend_problem: str = ""

    @cached_property
    def backend(self) -> Any:
        """The KG's Cypher backend, or ``None`` (no Cypher step) when it is off or cannot be opened."""
        self.backend_problem = "" if self.config.cypher else "cypher=false"
        if not self.config.cypher:
            return None
        from kgrag.graph.backends import open_cypher_backend

        try:
            backend = open_cypher_backend(self.kg, self.config.cypher_backend)
        except Exception as exc:  # missing extra, unreachable server, unwritable store: skip the strategy
            self.backend_problem = f"{type(exc).__name__}: {exc}"
            return None
        if not backend.supports_cypher:  # a backend registered for paths only
            self.backend_problem = f"the {backend.name} backend does not answer Cypher"
            return None
        return backend

    @cached_property
    def query_writer(self) -> Text2Cypher | None:
        """The text2cypher method that writes the graph query (``cypher_writer``), sharing this method's model and
        Cypher backend; None when KG-Linker writes it or there is no backend."""
        writer = self.config.cypher_writer
        if writer == "auto":
            writer = "text2cypher" if stored_mapping(self.kg) is not None else "linker"
        if writer == "linker" or self.backend is None:
            return None
        cfg = self.config
        made = Text2Cypher(self.kg, llm=self.llm, row_cap=cfg.cypher_row_cap, timeout=cfg.cypher_timeout)
        made.__dict__["backend"] = self.backend  # one connection to the database, not two
        return made

    @cached_property
    def query_prompt_parts(self) -> tuple[str, str]:
        """(task text, format line) of the graph-query part of the KG-Linker prompt; empty without Cypher or
        when text2cypher writes the query."""
        if self.backend is None or self.query_writer is not None:
            return "", ""
        part = load_prompt("byokg_linker_query").render(query_schema=self.backend.query_schema(self.kg))
        return part[-1]["content"] + "\n", part[0]["content"] + "\n"

    def _graph_query(self, query: str, context: Context, trace: Trace) -> None:
        cfg = self.config
        backend = self.backend
        if backend is None:
            return
        with trace.step("cypher", cypher=query) as step:
            types = backend.relation_types(self.kg)
            if types is not None:  # a triples KG: the model may have written relation names the KG's way
                query = fit_relation_types(query, self.kg, types)
            result = run_recorded(backend, query, step.outputs, row_cap=cfg.cypher_row_cap, timeout=cfg.cypher_timeout)
            if result.ok:
                step.outputs["added"] = context.add(rows_as_evidence(result.columns, result.rows))
