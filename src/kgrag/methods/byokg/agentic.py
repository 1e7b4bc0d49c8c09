"""Agentic triplet retrieval (BYOKG-RAG Algorithm 1): an LLM walks the KG one hop per round.

Each round expands the current entities by one hop (both directions), asks the LLM which of the relations
found there matter (relation selection), keeps those triples, then asks which entities to explore next
(entity selection) — or ``FINISH`` when the gathered triples already answer the question.  The LLM calls are
passed in as callables, so this module holds only the traversal and its bookkeeping; a method supplies the
prompts.  Whatever the LLM writes, the traversal degrades gracefully: relations it names that are not on
offer are ignored (and when none is usable, the relations most similar to the question are taken), entity
names are matched to the entities of the gathered triples first and linked only when that fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kgrag.graph.algorithms.edges import incident_edges
from kgrag.graph.kg import KnowledgeGraph, unique_ints
from kgrag.graph.verbalize import verbalize_triples
from kgrag.linking.normalize import normalize
from kgrag.methods.byokg.relation_paths import RelationResolver

# (question, entity names, offered relation names) -> relation names the LLM picked
SelectRelations = Callable[[str, list[str], list[str]], list[str]]
# (question, numbered context lines) -> entity names to explore next; [] means FINISH / nothing to explore
SelectEntities = Callable[[str, str], list[str]]
# (question, triple ids, k) -> the k most relevant of those triple ids, best first
RankTriples = Callable[[str, np.ndarray, int], np.ndarray]
# (question, relation ids) -> one relevance score per relation
ScoreRelations = Callable[[str, np.ndarray], np.ndarray]
# a name the LLM wrote -> an entity id (or None)
LinkName = Callable[[str], int | None]


@dataclass
class AgenticResult:
    """Triples gathered (in the order found), the trace of every round, and whether the LLM said FINISH."""

    tids: np.ndarray
    rounds: list[dict] = field(default_factory=list)
    finished: bool = False


def _match_relations(kg: KnowledgeGraph, picked: Sequence[str], offered: np.ndarray) -> np.ndarray:
    resolver = RelationResolver.of(kg)
    hops = [resolver.resolve(name) for name in picked]
    chosen = {h.relation for h in hops if h is not None}
    return offered[np.isin(offered, list(chosen))] if chosen else np.empty(0, np.int64)


def _match_entities(kg: KnowledgeGraph, names: Sequence[str], tids: np.ndarray, link: LinkName | None) -> list[int]:
    """Entity ids for names, preferring entities of the gathered triples (what the LLM was shown)."""
    local: dict[str, int] = {}
    for eid in unique_ints(np.concatenate([kg.heads[tids], kg.tails[tids]]).astype(np.int64)).tolist():
        local.setdefault(normalize(kg.entities[eid]), eid)
    out: list[int] = []
    for name in names:
        eid = local.get(normalize(name))
        if eid is None and link is not None:
            eid = link(name)
        if eid is not None and eid not in out:
            out.append(eid)
    return out


def _relation_selection(
    kg: KnowledgeGraph,
    question: str,
    offered: np.ndarray,
    record: dict,
    select_relations: SelectRelations,
    score_relations: ScoreRelations,
    max_relations: int,
    fallback_relations: int,
) -> np.ndarray:
    """The relations of one round the LLM picked among those ``offered`` (recorded in ``record``).

    Only the ``max_relations`` most question-like relations fit in a prompt; when the LLM names none of them
    usably, the ``fallback_relations`` closest to the question are taken so the round still gathers triples.
    """
    if len(offered) > max_relations:
        keep = np.argsort(-score_relations(question, offered), kind="stable")[:max_relations]
        offered = offered[keep]
    names = [kg.relations[r] for r in offered]
    picked = select_relations(question, record["entities"], names)
    chosen = _match_relations(kg, picked, offered)
    record.update(offered=len(names), selected=[kg.relations[r] for r in chosen])
    if not len(chosen):  # unusable answer: the relations closest to the question
        order = np.argsort(-score_relations(question, offered), kind="stable")
        chosen = offered[order[:fallback_relations]]
        record["fallback_relations"] = [kg.relations[r] for r in chosen]
    return chosen


def agentic_traversal(
    kg: KnowledgeGraph,
    question: str,
    seeds: Sequence[int],
    *,
    select_relations: SelectRelations,
    select_entities: SelectEntities,
    rank_triples: RankTriples,
    score_relations: ScoreRelations,
    link: LinkName | None = None,
    rounds: int = 3,
    max_relations: int = 30,
    max_triples: int = 30,
    max_frontier: int = 10,
    fallback_relations: int = 2,
) -> AgenticResult:
    """Algorithm 1 from ``seeds`` for at most ``rounds`` rounds (T_A); see the module docstring."""
    frontier = list(dict.fromkeys(int(s) for s in seeds))[:max_frontier]
    gathered: list[int] = []
    explored: set[int] = set()
    result = AgenticResult(np.empty(0, np.int64))
    for t in range(1, rounds + 1):
        if not frontier:
            break
        explored.update(frontier)
        record: dict = {"round": t, "entities": [kg.entities[e] for e in frontier]}
        result.rounds.append(record)
        _, tids, _, _ = incident_edges(kg, np.asarray(frontier, dtype=np.int64), "both")
        tids = unique_ints(tids.astype(np.int64))
        if not len(tids):
            break
        offered = unique_ints(kg.rels[tids].astype(np.int64))
        chosen = _relation_selection(
            kg, question, offered, record, select_relations, score_relations, max_relations, fallback_relations
        )
        tids = tids[np.isin(kg.rels[tids], chosen)]
        tids = tids[~np.isin(tids, gathered)]
        if len(tids) > max_triples:
            tids = np.asarray(rank_triples(question, tids, max_triples), dtype=np.int64)
        gathered.extend(tids.tolist())
        record["triples"] = len(tids)
        if t == rounds:
            break
        context_ids = np.asarray(gathered, dtype=np.int64)
        lines = "\n".join(f"{i}. {text}" for i, text in enumerate(verbalize_triples(kg, context_ids), 1))
        next_names = select_entities(question, lines)
        if not next_names or any(n.strip().upper() == "FINISH" for n in next_names):
            result.finished = True
            record["next"] = "FINISH"
            break
        nxt = [e for e in _match_entities(kg, next_names, context_ids, link) if e not in explored]
        record["next"] = [kg.entities[e] for e in nxt]
        frontier = nxt[:max_frontier]
    result.tids = np.asarray(gathered, dtype=np.int64)
    return result


__all__ = ["AgenticResult", "agentic_traversal"]
