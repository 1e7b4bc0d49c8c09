"""The in-memory knowledge graph every method works on.

Entities and relations are interned to dense integer ids; triples are three parallel ``int32`` arrays kept
sorted by ``(head, relation, tail)`` with duplicates removed, so out-edges of an entity are one contiguous
slice.  In-edges go through a permutation (``in_edges``) sorted by tail.  Both directions are CSR index
pointers, which makes every neighbourhood query a handful of numpy slices instead of Python loops.

Inverse relations are *virtual*: relation id ``r + num_relations`` (name ``<rel>_inv``) means "follow ``r``
backwards".  Nothing is stored twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kgrag.errors import UnknownEntityError
from kgrag.graph.resources import KGResources

if TYPE_CHECKING:  # pragma: no cover
    import scipy.sparse as sp

INVERSE_SUFFIX = "_inv"
Direction = str  # "out" | "in" | "both"


def _check_direction(direction: str) -> None:
    if direction not in ("out", "in", "both"):
        raise ValueError(f"direction must be 'out', 'in' or 'both', not {direction!r}")


def unique_ints(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values of an integer array.

    Sort-and-mask instead of ``np.unique``: numpy 2.3+ routes ``np.unique`` through a hash table that is
    ~50× slower on millions of distinct int64 keys (11 s vs 0.2 s for 5M here).
    """
    arr = np.sort(np.asarray(values).ravel())
    if len(arr) < 2:
        return arr
    keep = np.empty(len(arr), dtype=bool)
    keep[0] = True
    np.not_equal(arr[1:], arr[:-1], out=keep[1:])
    return arr[keep]


def canonical_triples(
    heads: np.ndarray, rels: np.ndarray, tails: np.ndarray, num_entities: int, num_relations: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort triples by (head, relation, tail) and drop duplicates; returns three int32 arrays.

    When ``E * R * E`` fits in 63 bits the triple is packed into one int64 key, sorted and deduplicated in
    one pass; otherwise a lexsort is used.
    """
    h = np.asarray(heads, dtype=np.int64)
    r = np.asarray(rels, dtype=np.int64)
    t = np.asarray(tails, dtype=np.int64)
    n_e, n_r = max(num_entities, 1), max(num_relations, 1)
    if n_e * n_r * n_e < 2**62:
        key = unique_ints((h * n_r + r) * n_e + t)
        t_out = key % n_e
        key //= n_e
        return (key // n_r).astype(np.int32), (key % n_r).astype(np.int32), t_out.astype(np.int32)
    order = np.lexsort((t, r, h))
    h, r, t = h[order], r[order], t[order]
    keep = np.ones(len(h), dtype=bool)
    keep[1:] = (h[1:] != h[:-1]) | (r[1:] != r[:-1]) | (t[1:] != t[:-1])
    return h[keep].astype(np.int32), r[keep].astype(np.int32), t[keep].astype(np.int32)


def _indptr(ids: np.ndarray, n: int) -> np.ndarray:
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(ids, minlength=n), out=indptr[1:])
    return indptr


class KnowledgeGraph:
    """A directed, relation-labelled multigraph with interned ids and CSR adjacency in both directions.

    Build one with :meth:`from_file`, :meth:`from_triples`, :meth:`from_pandas` or :meth:`from_networkx`;
    persist it with :meth:`save` / :meth:`load`.

    >>> kg = KnowledgeGraph.from_triples([("Heat", "directed_by", "Michael Mann")])
    >>> kg.num_entities, kg.num_relations, kg.num_triples
    (2, 1, 1)
    >>> kg.relation_name(kg.relation_id("directed_by_inv"))
    'directed_by_inv'
    """

    def __init__(
        self,
        entities: Sequence[str],
        relations: Sequence[str],
        heads: np.ndarray,
        rels: np.ndarray,
        tails: np.ndarray,
        *,
        aliases: Mapping[int, Sequence[str]] | None = None,
        _canonical: bool = False,
        _index: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.entities: list[str] = list(entities)
        self.relations: list[str] = list(relations)
        n_e, n_r = len(self.entities), len(self.relations)
        if not _canonical:
            heads, rels, tails = (np.asarray(a) for a in (heads, rels, tails))
            if not (len(heads) == len(rels) == len(tails)):
                raise ValueError("heads, rels and tails must have the same length")
            for arr, n, what in ((heads, n_e, "head"), (rels, n_r, "relation"), (tails, n_e, "tail")):
                if len(arr) and (arr.min() < 0 or arr.max() >= n):
                    raise ValueError(f"{what} id out of range [0, {n})")
            heads, rels, tails = canonical_triples(heads, rels, tails, n_e, n_r)
        self.heads: np.ndarray = heads
        self.rels: np.ndarray = rels
        self.tails: np.ndarray = tails
        if _index is None:
            out_indptr = _indptr(self.heads, n_e)
            in_edges = np.argsort(self.tails, kind="stable").astype(np.int32)
            in_indptr = _indptr(self.tails, n_e)
        else:
            out_indptr, in_indptr, in_edges = _index
        self.out_indptr: np.ndarray = out_indptr
        self.in_indptr: np.ndarray = in_indptr
        self.in_edges: np.ndarray = in_edges
        self.aliases: dict[int, list[str]] = {int(k): list(v) for k, v in (aliases or {}).items()}
        self._entity_index: dict[str, int] | None = None
        self._relation_index: dict[str, int] | None = None
        self._alias_index: dict[str, int] | None = None
        #: objects derived from this KG and kept while it lives (see graph/resources.py)
        self.resources = KGResources()
        #: content checksum of the store this KG was loaded from (None when built in memory); derived
        #: artefacts (indexes, embedded databases) are keyed by it.
        self.checksum: str | None = None
        #: the store directory this KG was loaded from; derived artefacts are saved next to it
        self.store_path: Path | None = None

    # ------------------------------------------------------------------ sizes
    @property
    def num_entities(self) -> int:
        return len(self.entities)

    @property
    def num_relations(self) -> int:
        """Number of stored relations (virtual inverses not counted)."""
        return len(self.relations)

    @property
    def num_triples(self) -> int:
        return len(self.heads)

    def __repr__(self) -> str:
        return (
            f"KnowledgeGraph(entities={self.num_entities:,}, relations={self.num_relations:,}, "
            f"triples={self.num_triples:,})"
        )

    # ------------------------------------------------------------------ names <-> ids
    def _entities_by_name(self) -> dict[str, int]:
        if self._entity_index is None:
            self._entity_index = {name: i for i, name in enumerate(self.entities)}
        return self._entity_index

    def find_entity(self, name: str) -> int | None:
        """Id of the entity named exactly ``name`` (or having it as an alias), else ``None``."""
        eid = self._entities_by_name().get(name)
        if eid is None and self.aliases:
            if self._alias_index is None:
                self._alias_index = {a: e for e, names in self.aliases.items() for a in names}
            eid = self._alias_index.get(name)
        return eid

    def entity_id(self, name: str) -> int:
        """Id of the entity named ``name``; raises :class:`UnknownEntityError` with close names otherwise."""
        eid = self.find_entity(name)
        if eid is None:
            raise UnknownEntityError(f"unknown entity {name!r}{self._suggest(name, self.entities)}")
        return eid

    def entity_ids(self, names: Iterable[str]) -> np.ndarray:
        return np.array([self.entity_id(n) for n in names], dtype=np.int32)

    def entity_name(self, eid: int) -> str:
        return self.entities[int(eid)]

    def relation_id(self, name: str) -> int:
        """Id of relation ``name``; ``<rel>_inv`` gives the virtual inverse id ``rel + num_relations``."""
        if self._relation_index is None:
            self._relation_index = {name: i for i, name in enumerate(self.relations)}
        rid = self._relation_index.get(name)
        if rid is not None:
            return rid
        if name.endswith(INVERSE_SUFFIX):
            base = self._relation_index.get(name[: -len(INVERSE_SUFFIX)])
            if base is not None:
                return base + self.num_relations
        raise UnknownEntityError(f"unknown relation {name!r}{self._suggest(name, self.relations)}")

    def relation_name(self, rid: int) -> str:
        """Name of a relation id, including virtual inverses (``rid >= num_relations``)."""
        rid = int(rid)
        if rid >= self.num_relations:
            return self.relations[rid - self.num_relations] + INVERSE_SUFFIX
        return self.relations[rid]

    @staticmethod
    def _suggest(name: str, choices: Sequence[str]) -> str:
        from rapidfuzz import process

        close = [c for c, score, _ in process.extract(name, choices, limit=3) if score >= 60]
        return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""

    # ------------------------------------------------------------------ edges
    def out_edge_ids(self, eid: int) -> np.ndarray:
        """Triple ids whose head is ``eid`` (a contiguous range, since triples are sorted by head)."""
        return np.arange(self.out_indptr[eid], self.out_indptr[eid + 1], dtype=np.int64)

    def in_edge_ids(self, eid: int) -> np.ndarray:
        """Triple ids whose tail is ``eid``."""
        return self.in_edges[self.in_indptr[eid] : self.in_indptr[eid + 1]]

    def degree(self, direction: Direction = "both") -> np.ndarray:
        """Number of incident triples per entity (int64 array of length ``num_entities``)."""
        _check_direction(direction)
        out_deg = np.diff(self.out_indptr)
        in_deg = np.diff(self.in_indptr)
        return {"out": out_deg, "in": in_deg, "both": out_deg + in_deg}[direction]

    def triple(self, tid: int) -> tuple[str, str, str]:
        """The triple with id ``tid`` as names."""
        return (
            self.entities[int(self.heads[tid])],
            self.relations[int(self.rels[tid])],
            self.entities[int(self.tails[tid])],
        )

    def iter_triples(self) -> Iterable[tuple[str, str, str]]:
        ents, rels = self.entities, self.relations
        for h, r, t in zip(self.heads.tolist(), self.rels.tolist(), self.tails.tolist()):
            yield ents[h], rels[r], ents[t]

    def has_triple(self, head: int, rel: int, tail: int) -> bool:
        """Whether ``(head, rel, tail)`` is in the KG; inverse relation ids are accepted."""
        if rel >= self.num_relations:
            head, tail, rel = tail, head, rel - self.num_relations
        lo, hi = self.out_indptr[head], self.out_indptr[head + 1]
        seg_r, seg_t = self.rels[lo:hi], self.tails[lo:hi]
        return bool(np.any((seg_r == rel) & (seg_t == tail)))

    def relation_ids(self, names: Iterable[str | int] | None) -> np.ndarray | None:
        """Resolve relation names or ids to an int array (``None`` stays ``None``: no filter)."""
        if names is None:
            return None
        return np.array([n if isinstance(n, (int, np.integer)) else self.relation_id(n) for n in names], dtype=np.int64)

    def adjacency(self, direction: Direction = "both", relations: np.ndarray | None = None) -> sp.csr_matrix:
        """Entity × entity sparse matrix whose entries count edges (cached when unfiltered).

        ``out``: row = head, column = tail; ``in``: transposed; ``both``: the symmetric sum.
        ``relations`` restricts the edges to those base relation ids.
        """

        _check_direction(direction)
        if relations is None:
            return self.resources.get(("adj", direction), lambda: self._adjacency(direction, None))
        return self._adjacency(direction, relations)

    def _adjacency(self, direction: Direction, relations: np.ndarray | None) -> sp.csr_matrix:
        import scipy.sparse as sp

        h, t = self.heads, self.tails
        if relations is not None:
            mask = np.isin(self.rels, np.asarray(relations) % max(self.num_relations, 1))
            h, t = h[mask], t[mask]
        n = self.num_entities
        if direction == "out":
            rows, cols = h, t
        elif direction == "in":
            rows, cols = t, h
        else:
            rows, cols = np.concatenate([h, t]), np.concatenate([t, h])
        mat = sp.csr_matrix((np.ones(len(rows), dtype=np.float64), (rows, cols)), shape=(n, n))
        mat.sum_duplicates()
        return mat

    # ------------------------------------------------------------------ statistics
    def stats(self) -> dict[str, Any]:
        """Counts, degree statistics, the most frequent relations with an example triple each, and the hubs (what
        ``kgrag info`` prints: what the methods will see of the KG)."""
        deg = self.degree("both")
        rel_counts = np.bincount(self.rels, minlength=self.num_relations)
        order = np.argsort(-rel_counts, kind="stable")
        present, first = np.unique(self.rels, return_index=True)  # each relation's first triple is its example
        example = dict(zip(present.tolist(), first.tolist()))
        hubs = np.argsort(-deg, kind="stable")[:5] if len(deg) else np.empty(0, dtype=np.int64)
        return {
            "entities": self.num_entities,
            "relations": self.num_relations,
            "triples": self.num_triples,
            "aliases": sum(len(v) for v in self.aliases.values()),
            "degree": {
                "mean": float(deg.mean()) if len(deg) else 0.0,
                "median": float(np.median(deg)) if len(deg) else 0.0,
                "max": int(deg.max()) if len(deg) else 0,
                "isolated": int((deg == 0).sum()),
                "p90": float(np.percentile(deg, 90)) if len(deg) else 0.0,
                "p99": float(np.percentile(deg, 99)) if len(deg) else 0.0,
            },
            "top_relations": {self.relations[i]: int(rel_counts[i]) for i in order[:20]},
            "relation_examples": {
                self.relations[i]: f"{self.entities[self.heads[example[i]]]} → {self.entities[self.tails[example[i]]]}"
                for i in order[:20]
                if i in example
            },
            "hubs": {self.entities[i]: int(deg[i]) for i in hubs.tolist()},
        }

    # ------------------------------------------------------------------ construction / persistence
    @classmethod
    def from_triples(
        cls, triples: Iterable[tuple[str, str, str]], *, aliases: Mapping[str, Sequence[str]] | None = None
    ) -> KnowledgeGraph:
        """Build from ``(head, relation, tail)`` name tuples."""
        from kgrag.graph.io.builder import TripleBuilder

        builder = TripleBuilder(source="<triples>")
        for i, (h, r, t) in enumerate(triples, start=1):
            builder.add(h, r, t, line=i)
        if aliases:
            for name, names in aliases.items():
                builder.add_aliases(name, names)
        return builder.build()

    @classmethod
    def from_file(cls, path: str | Path, format: str = "auto", **options: Any) -> KnowledgeGraph:
        """Load a triples file; see :func:`kgrag.graph.io.load_file` for formats and options."""
        from kgrag.graph.io import load_file

        return load_file(path, format=format, **options)

    @classmethod
    def from_pandas(cls, df: Any, head: str = "head", relation: str = "relation", tail: str = "tail") -> KnowledgeGraph:
        from kgrag.graph.io import load_dataframe

        return load_dataframe(df, head=head, relation=relation, tail=tail)

    @classmethod
    def from_networkx(cls, graph: Any, relation_attr: str = "relation") -> KnowledgeGraph:
        from kgrag.graph.io import load_networkx

        return load_networkx(graph, relation_attr=relation_attr)

    def save(self, directory: str | Path) -> Path:
        """Write the KG store to ``directory`` atomically (temp dir, then rename)."""
        from kgrag.graph.store import save_kg

        return save_kg(self, directory)

    @classmethod
    def load(cls, directory: str | Path, *, verify: bool = True) -> KnowledgeGraph:
        """Load a store written by :meth:`save`; arrays are memory-mapped."""
        from kgrag.graph.store import load_kg

        return load_kg(directory, verify=verify)
