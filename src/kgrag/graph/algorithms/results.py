"""The result types of the graph algorithms: padded id arrays, never lists of Python objects.

Later steps (reranking, verbalisation) stay vectorised because paths, neighbourhoods and rankings arrive as
numpy arrays of entity and triple ids; the types live apart from the algorithms so every algorithm module and
every caller can import them without pulling in the others.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from kgrag.graph.kg import unique_ints

IdsLike = Sequence[int] | np.ndarray | Iterable[int]


@dataclass
class Paths:
    """A batch of paths as padded arrays.

    ``nodes[i, :lengths[i] + 1]`` are the entities of path ``i`` (source first) and
    ``edges[i, :lengths[i]]`` the triple ids between them; padding is ``-1``.  Whether an edge was walked
    forwards is ``kg.heads[edge] == node_before_it``.
    """

    nodes: np.ndarray
    edges: np.ndarray
    lengths: np.ndarray
    truncated: bool = False

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Iterator[tuple[list[int], list[int]]]:
        for i in range(len(self)):
            n = int(self.lengths[i])
            yield self.nodes[i, : n + 1].tolist(), self.edges[i, :n].tolist()

    def endpoints(self) -> np.ndarray:
        """The last entity of every path."""
        return self.nodes[np.arange(len(self)), self.lengths] if len(self) else np.empty(0, np.int32)

    def triple_ids(self) -> np.ndarray:
        """Distinct triple ids used by any path."""
        return unique_ints(self.edges[self.edges >= 0])

    @staticmethod
    def empty(truncated: bool = False) -> Paths:
        return Paths(np.empty((0, 1), np.int32), np.empty((0, 0), np.int64), np.empty(0, np.int32), truncated)

    @staticmethod
    def concat(parts: Sequence[Paths]) -> Paths:
        parts = [p for p in parts if len(p)]
        if not parts:
            return Paths.empty()
        width = max(p.nodes.shape[1] for p in parts)
        nodes = np.full((sum(len(p) for p in parts), width), -1, np.int32)
        edges = np.full((len(nodes), width - 1), -1, np.int64)
        row = 0
        for p in parts:
            nodes[row : row + len(p), : p.nodes.shape[1]] = p.nodes
            edges[row : row + len(p), : p.edges.shape[1]] = p.edges
            row += len(p)
        return Paths(nodes, edges, np.concatenate([p.lengths for p in parts]), any(p.truncated for p in parts))


@dataclass
class Neighborhood:
    """Entities within ``hops`` of the seeds (with their hop distance) and the triples walked to reach them."""

    nodes: np.ndarray
    distance: np.ndarray
    edges: np.ndarray


@dataclass
class RelationPathResult:
    """Entities reached by following a relation sequence, and concrete paths (at most ``max_paths``)."""

    reached: np.ndarray
    paths: Paths
    truncated: bool = False


@dataclass
class RankedNodes:
    """Entity ids sorted by descending score."""

    nodes: np.ndarray
    scores: np.ndarray
    iterations: int = 0
    converged: bool = field(default=False)
