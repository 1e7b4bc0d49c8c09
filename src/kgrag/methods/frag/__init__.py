"""FRAG (Gao et al.): reasoning-aware routing, pruned path retrieval, path reranking, one LLM call.

1. Route: a text classifier (no LLM) predicts the hop count ``h``; ``h ≤ delta`` is *simple*, else *complex*.
2. Rank relations against the question and keep the top ``m`` (the paper's edge ranking; a no-op on KGs with
   fewer relations).
3. Paths: every relation pattern of length ≤ ``h`` over the kept relations from the topic entities, with the
   entities each reaches (set propagation, hubs not walked through: :mod:`kgrag.methods.frag.patterns`). For
   complex questions the paper uses shortest paths; ``complex_paths="shortest"`` keeps that, but it misses
   answers that a shorter, different pattern also reaches (measured on MetaQA 3-hop: answer recall 0.40 vs
   patterns, see docs/DESIGN.md), so patterns are the default for both kinds.
4. Rerank: each pattern is scored against the question — a learned pattern classifier (shipped, trained on
   MetaQA dev by ``benchmarks/frag_train.py``; retrain for your KG with ``kgrag frag-train``) plus embedding
   similarity of the pattern's text — and the top ``u`` endpoints are taken pattern by pattern, ties broken by
   personalized PageRank from the topics (damping 0.8); one concrete path per endpoint becomes the evidence.
   On a KG with no trained models (any KG but the shipped MetaQA one, unless ``kgrag adapt`` made some) there
   is no router either: patterns of up to ``zero_shot_hops`` are scored by aligning the relations they mention
   with spans of the question (:mod:`kgrag.methods.frag.alignment`), which also decides their length.
5. One LLM call answers from those paths.

Steps 1–4 are LLM-free, so ``retrieve`` returns exactly the evidence the answer call sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from kgrag.graph.algorithms import Paths, k_hop, personalized_pagerank, shortest_paths
from kgrag.graph.identifiers import unnamed_entities
from kgrag.graph.kg import KnowledgeGraph
from kgrag.linking.answers import by_path_score, follow_to_path_ends, keep_to_best_pattern, name_unnamed_answers
from kgrag.methods.answer_call import ask_for_answers, evidence_entities
from kgrag.methods.answer_kind import kind_on
from kgrag.methods.base import Method, Trace, registry, use_grammar
from kgrag.methods.confidence import artefact_key, fitted
from kgrag.methods.frag.adapted import adapted_models, adapted_phrasings, adapted_settings, record_of
from kgrag.methods.frag.alignment import (
    AlignmentCosts,
    RelationText,
    SpanSimilarities,
    aligned_pattern_scores,
    mean_pattern_scores,
)
from kgrag.methods.frag.config import FragConfig
from kgrag.methods.frag.grounding import as_long_as_asked, read_by_answer, refitted, resolve
from kgrag.methods.frag.patterns import (
    PatternReach,
    extends_better,
    paths_to,
    pattern_key,
    pattern_label,
    reachable_patterns,
    within_triple_budget,
)
from kgrag.methods.frag.question_fit import fit_patterns
from kgrag.methods.frag.router import HopRouter, PatternClassifier, TextClassifier, mask_topics
from kgrag.methods.frag.subgraph import ppr_pruned_subgraph
from kgrag.models.embeddings import Embedder, dot_scores, load_embedder
from kgrag.models.llm.base import LLM
from kgrag.retrieval.evidence_tree import TREE_LAYOUT, answer_options, compact_paths_text
from kgrag.retrieval.paths import paths_as_evidence, pattern_vectors, rank_paths, subset
from kgrag.retrieval.triples import facts_text, kg_vectors
from kgrag.types import Evidence


@registry.register("frag")
class Frag(Method):
    """FRAG: router → relation ranking → relation-pattern paths → path reranking → one answer call."""

    name = "frag"
    Config = FragConfig
    config: FragConfig

    def __init__(self, kg: KnowledgeGraph, llm: LLM | None = None, embedder: Any = None, **config: Any) -> None:
        super().__init__(kg, llm, embedder, **config)
        self.adaptation = record_of(kg)  # what `kgrag adapt` left for this KG, read and checked once
        self.adapted = adapted_settings(self.adaptation, unless_set=self.config.model_fields_set)
        self.config = self.validated({**self.config.model_dump(exclude_unset=True), **self.adapted})

    @cached_property
    def router(self) -> HopRouter | None:
        return self._classifier(HopRouter, self.config.router)  # type: ignore[return-value]

    @cached_property
    def pattern_classifier(self) -> PatternClassifier | None:
        return self._classifier(PatternClassifier, self.config.patterns)  # type: ignore[return-value]

    def _classifier(self, cls: type[TextClassifier], setting: str) -> TextClassifier | None:
        """The model a setting names; ``auto`` takes only a model trained for this KG (see FragConfig)."""
        if setting == "none":
            return None
        if setting != "auto":
            return cls.load(setting)
        adapted = adapted_models(self.kg, self.adaptation)[0 if cls is HopRouter else 1]  # None: absent or stale
        for candidate in ([adapted] if adapted is not None else []) + ["builtin"]:
            model = cls.load(candidate)
            if model.trained_for(self.kg.checksum):
                return model
        return None

    @cached_property
    def hub_degree(self) -> int:
        """Entities with more edges are reached but not walked through: the configured limit, or 1,000 raised
        to the KG's 99.99th degree percentile on big KGs (there 1,000 edges is an ordinary entity)."""
        if self.config.hub_degree is not None:
            return self.config.hub_degree
        degree = self.kg.degree("both")
        return max(1000, int(np.quantile(degree, 0.9999))) if len(degree) else 1000

    @property
    def _walk_limits(self) -> dict[str, Any]:
        """What the pattern search and the path walk do not walk through (patterns.py)."""
        return {"hub_degree": self.hub_degree, "fanout": self.config.hub_fanout}

    @cached_property
    def text_embedder(self) -> Embedder:
        if self.embedder is not None:
            return self.embedder
        name = self.config.embedder
        if name == "auto":
            name = "static" if self.pattern_classifier is not None else "minilm"
        return load_embedder(name)

    def confidence_weights(self) -> str:
        """Weights fitted with the trained pattern scorer in use, where there are such (MetaQA's shipped one);
        frag's own otherwise."""
        if self.pattern_classifier is not None:
            key = f"{self.name}:{artefact_key(self.pattern_classifier.provenance)}"
            if fitted(key):
                return key
        return self.name

    def _provenance(self, model: TextClassifier | None) -> str:
        if model is None:
            return "none (zero-shot)"
        return str(model.provenance.get("questions") or "trained without a recorded source")

    # ------------------------------------------------------------------ steps
    def _span_similarities(self, masked: str) -> SpanSimilarities | None:
        """The zero-shot alignment's span similarities for one (masked) question, computed once per question
        for the relation ranking and the pattern scoring; None when patterns are not scored by alignment."""
        if self.pattern_classifier is not None or self.config.zero_shot_scoring != "align":
            return None
        return SpanSimilarities.of(self.kg, self.text_embedder, masked, self.relation_text)

    @cached_property
    def relation_text(self) -> RelationText:
        """How the zero-shot scorer describes relations: words, frequent tails and, where `kgrag adapt
        --describe` ran on this KG, what the LLM wrote for each."""
        cfg = self.config
        phrasings: tuple[tuple[str, ...], ...] = ()
        if cfg.relation_phrasings and cfg.phrasing_weight:
            written = adapted_phrasings(self.kg, self.adaptation)
            if written:
                phrasings = tuple(written.get(r, ()) for r in range(self.kg.num_relations))
        return RelationText(cfg.relation_examples, cfg.relation_example_weight, phrasings, cfg.phrasing_weight)

    def _relations(
        self, question: str, sims: SpanSimilarities | None, topics: list[int], hops: int, routed: bool
    ) -> np.ndarray | None:
        """Directed ids of the ``top_relations`` (zero-shot: ``zero_shot_relations``) relations of the topics'
        ``hops``-hop subgraph most similar to the question (None: keep all). Ranking over the subgraph, not the
        whole KG, keeps the relation an answer needs when the KG has hundreds of relations that merely sound
        closer to the question; zero-shot, a relation's similarity is that of its best span of the question."""
        n = self.kg.num_relations
        keep = self.config.top_relations if routed else self.config.zero_shot_relations
        if n <= keep:
            return None
        present = np.unique(self.kg.rels[k_hop(self.kg, topics, hops).edges]).astype(np.int64)
        if len(present) <= keep:
            return None
        if sims is not None and not routed:
            scores = sims.relevance()[present]
        else:
            vectors = kg_vectors(self.kg, self.text_embedder).relations()[present]
            scores = dot_scores(vectors, self.text_embedder.encode([question])[0])
        best = present[np.argsort(-scores, kind="stable")[:keep]]
        return np.concatenate([best, best + n])

    def _score_patterns(
        self, question: str, masked: str, reach: PatternReach, hops: int, routed: bool, sims: SpanSimilarities | None
    ) -> np.ndarray:
        """Pattern scores: trained scorer + pattern-text similarity + a bonus for the routed length, or without
        a trained scorer, the zero-shot score (:meth:`_relation_scores`)."""
        cfg = self.config
        clf = self.pattern_classifier
        scores = cfg.length_bonus * (reach.lengths == hops) if routed else np.zeros(len(reach))
        if clf is None:
            aligned = None
            if sims is not None:
                costs = (cfg.mention_cost, cfg.extra_mention_cost, cfg.align_hop_cost, cfg.order_cost, cfg.shared_pairs)
                aligned = aligned_pattern_scores(self.kg, sims, reach, AlignmentCosts(*costs))
            if aligned is None:  # "mean", or a question with no words besides its topic's
                aligned = mean_pattern_scores(self.kg, self.text_embedder, question, reach, cfg.hop_cost)
            return scores + cfg.embedding_weight * aligned
        if cfg.embedding_weight:
            q = self.text_embedder.encode([question])[0]
            vectors = pattern_vectors(self.kg, reach.patterns, self.text_embedder)
            scores = scores + cfg.embedding_weight * dot_scores(vectors, q)
        if cfg.classifier_weight:
            proba = clf.predict_proba([masked])[0]
            index = {str(label): i for i, label in enumerate(clf.labels)}
            cols = np.array([index.get(pattern_label(self.kg, p), -1) for p in reach.patterns])
            known = cols >= 0
            scores = scores + cfg.classifier_weight * np.where(known, proba[np.maximum(cols, 0)], 0.0)
        return scores

    def _choose(
        self,
        topics: list[int],
        reach: PatternReach,
        scores: np.ndarray,
        routed: bool = True,
        room: int | None = None,
        margin: float | None = None,
        extension_margin: float | None = None,
    ) -> list[tuple[int, np.ndarray, Paths]]:
        """Endpoints pattern by pattern (best first) until ``top_paths`` (without a router: ``zero_shot_paths``,
        each pattern taking at most ``zero_shot_pattern_share`` of what is left), stopping at the first pattern
        that scores more than ``margin`` below the best one taken, and skipping a pattern that extends one taken
        but scores more than ``extension_margin`` below it (its extra hops are not what the question asks) when
        it would list more than ``extension_ends`` entities not yet taken; PPR breaks ties inside a pattern.
        Each comes with the concrete path to each endpoint, in the endpoints' order."""
        cfg = self.config
        chosen: list[tuple[int, np.ndarray, Paths]] = []
        # unnamed nodes (CVTs) are not answers: a longer pattern walks through them to the named entities
        taken = unnamed_entities(self.kg).copy()
        taken[topics] = True
        room = room or (cfg.top_paths if routed else cfg.zero_shot_paths)
        share = 1.0 if routed else cfg.zero_shot_pattern_share
        ppr = None
        taken_patterns: dict[tuple[int, ...], float] = {}  # the patterns chosen so far, with their scores
        for k in np.argsort(-scores, kind="stable"):
            if room <= 0 or (chosen and margin is not None and scores[k] < scores[chosen[0][0]] - margin):
                break
            ends = reach.endpoints(int(k))
            ends = ends[~taken[ends]]
            if (
                extension_margin is not None
                and len(ends) > cfg.extension_ends
                and extends_better(
                    reach.patterns[k], scores[k], taken_patterns, extension_margin, self.kg.num_relations
                )
            ):
                continue
            walked = None
            if len(ends) and reach.lengths[k] > 2:  # only a walk that turns back reaches some of them
                walked = paths_to(self.kg, topics, reach.patterns[k], ends, **self._walk_limits)
                ends = ends[np.isin(ends, walked.endpoints())]
            if not len(ends):
                continue
            cap = max(1, int(room * share))
            if len(ends) > cap:
                ppr = self._reach_ppr(topics, reach) if ppr is None else ppr
                ends = ends[np.argsort(-ppr[ends], kind="stable")[:cap]]
            taken[ends] = True
            room -= len(ends)
            if walked is None:
                walked = paths_to(self.kg, topics, reach.patterns[k], ends, **self._walk_limits)
            else:  # a path does not depend on the other targets: the kept ends' rows, in their order
                reached = walked.endpoints()
                order = np.argsort(reached, kind="stable")
                walked = subset(walked, order[np.searchsorted(reached[order], ends)])
            chosen.append((int(k), ends, walked))
            taken_patterns[pattern_key(reach.patterns[k])] = float(scores[k])
        return chosen

    @property
    def _ppr_settings(self) -> dict[str, Any]:
        """Personalized PageRank's settings, for both of frag's uses of it."""
        return {"damping": self.config.damping, "max_iter": self.config.ppr_max_iter, "tol": self.config.ppr_tol}

    def _reach_ppr(self, topics: list[int], reach: PatternReach) -> np.ndarray:
        """Personalized PageRank from the topics over the subgraph the patterns reached, per entity."""
        ball = np.unique(np.concatenate([np.asarray(topics, np.int64), reach.entity]))
        restrict = ball if len(ball) < self.kg.num_entities // 2 else None
        ranked = personalized_pagerank(self.kg, topics, restrict_to=restrict, **self._ppr_settings)
        ppr = np.zeros(self.kg.num_entities)
        ppr[ranked.nodes] = ranked.scores
        return ppr

    def _reach(self, topics: list[int], hops: int, relations: np.ndarray | None, routed: bool) -> PatternReach:
        """Every relation pattern of up to ``hops`` from ``topics`` over ``relations``, with what each reaches."""
        prune_from = 1 if routed else self.config.zero_shot_pruned_from
        return reachable_patterns(
            self.kg, topics, hops, **self._walk_limits, allowed_relations=relations, prune_from=prune_from
        )

    def zero_shot_pattern_scores(self, question: str, topics: list[int]) -> tuple[PatternReach, np.ndarray] | None:
        """The zero-shot score of every relation pattern from ``topics``, as the answer call's ``answer_margin``
        reads them; None where a trained router or scorer (or a fixed ``hops``) decides, whose scores are on
        another scale. Another method's relation path can be held against them (ultrag's query:
        :mod:`kgrag.methods.ultrag.verify`)."""
        if self.router is not None or self.pattern_classifier is not None or self.config.hops:
            return None
        masked = mask_topics(question, [self.kg.entities[t] for t in topics])
        sims = self._span_similarities(masked)
        hops = self.config.zero_shot_hops
        reach = self._reach(topics, hops, self._relations(question, sims, topics, hops, False), False)
        return reach, self._score_patterns(question, masked, reach, hops, False, sims)

    def _pattern_paths(
        self,
        question: str,
        masked: str,
        sims: SpanSimilarities | None,
        topics: list[int],
        hops: int,
        relations: np.ndarray | None,
        trace: Trace,
        routed: bool,
        for_answer: bool = False,
    ) -> tuple[Paths, np.ndarray]:
        cfg = self.config
        # zero-shot, the answer call may read fewer paths than retrieval returns (answer_paths / answer_triples)
        room = cfg.answer_paths if for_answer and not routed else None
        triples = (cfg.answer_triples if for_answer else None) or cfg.zero_shot_triples
        with trace.step("paths", hops=hops) as step:
            reach = self._reach(topics, hops, relations, routed)
            step.outputs.update({"patterns": len(reach), "reached": len(reach.entity), "truncated": reach.truncated})
        with trace.step("rank_paths", top_k=cfg.top_paths) as step:
            if not len(reach):
                return Paths.empty(), np.empty(0)
            scores = self._score_patterns(question, masked, reach, hops, routed, sims)
            answering = for_answer and not routed
            if answering or (for_answer and self.pattern_classifier is not None):
                scores = fit_patterns(self, question, topics, reach, scores, step.outputs)
            margin = cfg.answer_margin if answering else None
            extension = cfg.extension_margin if answering else None
            chosen = self._choose(topics, reach, scores, routed, room, margin, extension)
            parts, part_scores = [], []
            for k, _, paths in chosen:
                parts.append(paths)
                part_scores.append(np.full(len(paths), scores[k]))
            step.outputs["patterns"] = [
                {
                    "pattern": pattern_label(self.kg, reach.patterns[k]),
                    "score": round(float(scores[k]), 4),
                    "paths": len(e),
                }
                for k, e, _ in chosen
            ]
            paths = Paths.concat(parts)
            keep = np.arange(len(paths)) if routed else within_triple_budget(paths, triples)
            step.outputs["paths"] = len(keep)
            return subset(paths, keep), (np.concatenate(part_scores)[keep] if part_scores else np.empty(0))

    def _shortest_paths(self, question: str, topics: list[int], relations: np.ndarray | None, trace: Trace):
        cfg = self.config
        with trace.step("subgraph") as step:
            sub = ppr_pruned_subgraph(
                self.kg, topics, hops=cfg.complex_subgraph_hops, top_n=cfg.top_nodes, **self._ppr_settings
            )
            step.outputs.update({"ball_entities": len(sub.ball_nodes), "kept_entities": len(sub.nodes)})
        with trace.step("paths") as step:
            paths = shortest_paths(
                self.kg, topics, sub.nodes, relations=relations, max_length=cfg.complex_subgraph_hops, max_paths=50_000
            )
            step.outputs.update({"paths": len(paths), "truncated": paths.truncated})
        with trace.step("rank_paths", top_k=cfg.top_paths):
            return rank_paths(
                self.kg, question, paths, embedder=self.text_embedder, top_k=cfg.top_paths, exclude_endpoints=topics
            )

    def _retrieve(
        self, question: str, topic_entities: Sequence[str], trace: Trace, for_answer: bool = False
    ) -> tuple[list[Evidence], int]:
        """Ranked paths as evidence (``for_answer``: within the answer call's budgets), and the hop count the
        router chose (0: no router, the length is open)."""
        cfg = self.config
        topics = self._link_topics(question, topic_entities, trace)
        if not topics:
            return [], 0
        masked = mask_topics(question, [self.kg.entities[t] for t in topics])
        sims = self._span_similarities(masked)
        with trace.step("route") as step:
            router = self.router if cfg.hops is None else None
            hops = cfg.hops or (router.hops(masked) if router is not None else cfg.zero_shot_hops)
            simple = hops <= cfg.delta
            step.outputs.update({"hops": hops, "kind": "simple" if simple else "complex"})
            step.outputs["router"] = "fixed" if cfg.hops else self._provenance(router)
            step.outputs["pattern_scorer"] = self._provenance(self.pattern_classifier)
            step.outputs.update({"adapted_settings": self.adapted} if self.adapted else {})
        routed = router is not None or cfg.hops is not None
        with trace.step("rank_relations") as step:
            relations = self._relations(question, sims, topics, hops, routed)
            step.outputs["kept"] = "all" if relations is None else len(relations) // 2
        if not simple and cfg.complex_paths == "shortest":
            paths, scores = self._shortest_paths(question, topics, relations, trace)
        else:
            paths, scores = self._pattern_paths(
                question, masked, sims, topics, hops, relations, trace, routed, for_answer
            )
        return paths_as_evidence(self.kg, paths, scores, source="frag"), (hops if routed else 0)

    def retrieve(self, question: str, topic_entities: Sequence[str] | None = None) -> list[Evidence]:
        return self._retrieve(question, list(topic_entities or []), Trace())[0]

    def _choose_answers(self) -> bool:
        return use_grammar(self.config.choose_answers, self.llm)

    def _answer(self, question: str, topic_entities: list[str], trace: Trace) -> tuple[list[str], list[Evidence]]:
        evidence, hops = self._retrieve(question, topic_entities, trace, for_answer=True)
        if self._skip_answer_call(topic_entities, trace):
            return [], evidence
        with trace.step("answer") as step:
            topics = sorted({ev.entities[0] for ev in evidence if ev.entities})
            kind = kind_on(self.kg, question)
            trained = self.pattern_classifier is not None
            grounding = resolve(self.config.grounding, trained=trained, refit=refitted(trace), kind=kind)
            evidence = read_by_answer(evidence, hops, grounding, self.config.pattern_reads, kind)
            full = as_long_as_asked(evidence, hops)
            layout = "tree" if self.config.evidence_format == "auto" else self.config.evidence_format
            tree = layout == "tree"
            step.outputs["evidence_format"] = layout
            options = answer_options(evidence) if tree and self._choose_answers() else {}
            step.outputs["choices"] = len(options)
            answers = ask_for_answers(
                self,
                "frag_answer",
                question=question,
                paths=compact_paths_text(self.kg, evidence) if tree else facts_text(evidence),
                layout=TREE_LAYOUT if tree else "",
                evidence_names=evidence_entities(full or evidence, ends_only=True),
                exclude=topics,
                choices=options,
            )
            answers = name_unnamed_answers(answers, [ev.entities for ev in evidence], topics)
            ranked = [(ev.entities, ev.relations) for ev in (full or evidence)]
            step.outputs["grounding"] = grounding
            if grounding == "pattern":
                answers = keep_to_best_pattern(
                    answers, ranked, exclude=topics, every_end=self.config.answer_ends == "all" and kind != "count"
                )
            elif grounding == "paths" and full:
                answers = follow_to_path_ends(answers, ranked, exclude=topics)
            elif grounding == "score":
                answers = by_path_score(answers, [(ev.entities, ev.score or 0.0) for ev in evidence])
            step.outputs["answers"] = answers
        return answers, evidence
