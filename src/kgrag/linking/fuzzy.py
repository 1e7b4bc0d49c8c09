"""Fuzzy linking with rapidfuzz, for typos and small spelling differences.

Scoring every name is fine for tens of thousands of names but not for millions, so a prefilter keeps only
names sharing a token prefix or suffix (3 characters) with the mention — one typo rarely breaks both ends
of every word — and rapidfuzz scores that subset in one vectorised ``process.extract`` call.
"""

from __future__ import annotations

import numpy as np
from rapidfuzz import fuzz, process

from kgrag.graph.kg import unique_ints
from kgrag.linking.base import Candidate
from kgrag.linking.names import NameIndex
from kgrag.linking.normalize import normalize

GRAM = 3
# Below this many names a full rapidfuzz scan is cheap (~13 ms at 40k) and rescues short names whose every
# word a typo changed at both ends ("Plocie" for "Police"), which the gram prefilter cannot see.
FULL_SCAN_MAX = 200_000


def _grams(key: str) -> set[str]:
    out = set()
    for word in key.split(" "):
        out.add("^" + word[:GRAM])
        out.add(word[-GRAM:] + "$")
    return out


class FuzzyLinker:
    def __init__(self, names: NameIndex, *, max_candidates: int = 50_000) -> None:
        self.names = names
        self.keys = names.keys
        index: dict[str, list[int]] = {}
        for i, key in enumerate(self.keys):
            for g in _grams(key):
                index.setdefault(g, []).append(i)
        self.index = {g: np.asarray(ids, dtype=np.int32) for g, ids in index.items()}
        self.max_candidates = max_candidates

    def _pool(self, query: str) -> np.ndarray:
        lists = [self.index[g] for g in _grams(query) if g in self.index]
        if not lists:
            return np.empty(0, dtype=np.int32)
        pool = unique_ints(np.concatenate(lists))
        if len(pool) > self.max_candidates:  # very common grams: keep names sharing the most grams
            counts = np.bincount(np.concatenate(lists), minlength=len(self.keys))[pool]
            pool = pool[np.argsort(-counts, kind="stable")[: self.max_candidates]]
        return pool

    def link(self, mention: str, k: int = 3, *, score_cutoff: float = 60.0, full_scan: bool = True) -> list[Candidate]:
        """Best ``k`` entities by normalised edit similarity (score in [0, 1]).

        Ties are broken by whether the name's capitalisation matches the mention's, then by degree.
        ``full_scan=False`` keeps to the gram prefilter (for scanning many n-grams of a question).
        """
        query = normalize(mention)
        if not query:
            return []
        pool = self._pool(query)
        hits = self._extract(query, pool, k, score_cutoff) if len(pool) else []
        if full_scan and (not hits or hits[0][1] < 90) and len(self.keys) <= FULL_SCAN_MAX:
            hits = self._extract(query, None, k, score_cutoff)
        capital = mention[:1].isupper()
        out: list[Candidate] = []
        for key, score in hits:
            for eid in self.names.by_key[key]:
                out.append(Candidate(eid, self.names.kg.entities[eid], score / 100.0))
        out.sort(key=lambda c: (-c.score, c.name[:1].isupper() != capital, -int(self.names.degree[c.entity])))
        return out[:k]

    def _extract(self, query: str, pool: np.ndarray | None, k: int, cutoff: float) -> list[tuple[str, float]]:
        choices = self.keys if pool is None else [self.keys[i] for i in pool]
        found = process.extract(query, choices, scorer=fuzz.ratio, limit=k * 2, score_cutoff=cutoff)
        return [(choices[pos], score) for _, score, pos in found]
