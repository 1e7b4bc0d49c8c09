"""Embedders give sensible unit vectors; the per-KG cache embeds everything exactly once."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.graph.kg import KnowledgeGraph
from kgrag.models.embeddings import Embedder, dot_scores, load_embedder
from kgrag.models.embeddings.kg_cache import KGEmbeddings
from kgrag.models.rerankers import EmbeddingReranker, load_reranker
from tests.conftest import MOVIES


@pytest.fixture(scope="module", params=["minilm", "static"])
def embedder(request):
    return load_embedder(request.param)


def test_unit_vectors_and_semantics(embedder):
    texts = [
        "Heat was directed by Michael Mann",
        "Michael Mann directed the film Heat",
        "the recipe needs two eggs and flour",
    ]
    vecs = embedder.encode(texts)
    assert vecs.shape == (3, embedder.dim) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2] + 0.2
    assert embedder.encode([]).shape == (0, embedder.dim)


def test_batching_does_not_change_vectors(embedder):
    # six texts: more than SMALL_BATCH, so the MiniLM batch runs on the multi-threaded session, each text alone
    # on the single-threaded one — both sessions must give the same vectors
    texts = ["a", "a much longer text about films, directors and the actors who starred in them", "Kismet"] * 2
    together = embedder.encode(texts, batch_size=8)
    alone = np.vstack([embedder.encode([t]) for t in texts])
    assert np.abs(together - alone).max() < 2e-2  # int8 activations are quantised per batch


def test_dot_scores_is_the_matrix_vector_product():
    rng = np.random.default_rng(0)
    matrix, query = rng.standard_normal((50, 8)).astype(np.float32), rng.standard_normal(8)
    out = dot_scores(matrix, query)
    assert out.dtype == np.float32 and np.allclose(out, matrix @ query.astype(np.float32), atol=1e-5)
    assert dot_scores(matrix[:0], query).shape == (0,)


def test_static_matches_model2vec():
    model2vec = pytest.importorskip("model2vec")
    from kgrag.models.embeddings.static import _default_dir

    texts = ["Heat directed by Michael Mann", "Amélie", "東京物語", "x"]
    ours = load_embedder("static").encode(texts)
    theirs = model2vec.StaticModel.from_pretrained(str(_default_dir())).encode(texts)
    assert np.abs(ours - theirs).max() < 1e-3


class CountingEmbedder(Embedder):
    """Wraps an embedder and counts the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.id, self.dim, self.seen = inner, "counting-" + inner.id, inner.dim, []

    def _encode(self, texts, batch_size):
        self.seen.extend(texts)
        return self.inner._encode(texts, batch_size)


def test_kg_embeddings_cached_on_disk_and_lazy_for_triples(tmp_path):
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    counter = CountingEmbedder(load_embedder("static"))
    cache = KGEmbeddings(kg, counter)
    ents = cache.entities()
    assert ents.shape == (kg.num_entities, counter.dim) and len(counter.seen) == kg.num_entities
    assert KGEmbeddings(kg, counter).entities().shape == ents.shape  # second instance: read from disk
    assert len(counter.seen) == kg.num_entities
    first = cache.triples(np.array([0, 1, 2]))
    again = KGEmbeddings(kg, counter).triples(np.array([2, 1, 0, 3]))
    assert len(counter.seen) == kg.num_entities + 4  # triple 3 was the only new one
    assert np.allclose(again[:3], first[::-1])
    # a different KG in the same store directory invalidates the cache
    other = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES[:3]).save(tmp_path / "kg"))
    assert KGEmbeddings(other, counter).entities().shape[0] == other.num_entities


def test_reranker_orders_by_relevance():
    reranker = load_reranker("cosine:static")
    assert isinstance(reranker, EmbeddingReranker)
    passages = ["the recipe needs eggs", "Heat directed by Michael Mann", "Heat starred Al Pacino"]
    top = reranker.top_k("who directed Heat", passages, 2)
    assert top[0] == 1 and len(top) == 2


def _cached_kg(tmp_path):
    kg = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES).save(tmp_path / "kg"))
    return kg, CountingEmbedder(load_embedder("static"))


def test_a_zeroed_triple_cache_is_re_embedded_with_a_warning(tmp_path, caplog):
    kg, counter = _cached_kg(tmp_path)
    tids = np.arange(kg.num_triples)
    right = KGEmbeddings(kg, counter).triples(tids)
    cache_dir = tmp_path / "kg" / "embeddings" / counter.id
    for name in ("triples.f32", "triples_sum.u64"):  # zero the vectors, and their checksums too
        path = cache_dir / name
        if path.exists():
            path.write_bytes(b"\0" * path.stat().st_size)
    seen = len(counter.seen)
    again = KGEmbeddings(kg, counter).triples(tids)
    assert np.allclose(again, right) and len(counter.seen) == seen + kg.num_triples
    assert "do not match their checksums" in caplog.text


def test_a_swapped_triple_row_is_detected(tmp_path, caplog):
    kg, counter = _cached_kg(tmp_path)
    right = KGEmbeddings(kg, counter).triples(np.array([0, 1]))
    mat = np.memmap(tmp_path / "kg" / "embeddings" / counter.id / "triples.f32", dtype=np.float32, mode="r+")
    mat = mat.reshape(kg.num_triples, counter.dim)
    mat[[0, 1]] = mat[[1, 0]]  # two genuine vectors, each under the other triple's id
    mat.flush()
    assert np.allclose(KGEmbeddings(kg, counter).triples(np.array([0, 1])), right)
    assert "do not match their checksums" in caplog.text


def test_a_replaced_entity_matrix_is_recomputed_with_a_warning(tmp_path, caplog):
    kg, counter = _cached_kg(tmp_path)
    right = KGEmbeddings(kg, counter).entities()
    np.save(tmp_path / "kg" / "embeddings" / counter.id / "entities.npy", np.zeros_like(right))
    assert np.allclose(KGEmbeddings(kg, counter).entities(), right)
    assert "differs from what was written" in caplog.text


def test_a_truncated_triple_cache_is_rebuilt(tmp_path):
    kg, counter = _cached_kg(tmp_path)
    right = KGEmbeddings(kg, counter).triples(np.arange(3))
    path = tmp_path / "kg" / "embeddings" / counter.id / "triples.f32"
    path.write_bytes(path.read_bytes()[:100])
    assert np.allclose(KGEmbeddings(kg, counter).triples(np.arange(3)), right)


def test_a_stale_cache_keeps_files_kgrag_did_not_write(tmp_path):
    kg, counter = _cached_kg(tmp_path)
    KGEmbeddings(kg, counter).entities()
    (tmp_path / "kg" / "embeddings" / counter.id / "notes.txt").write_text("precious")
    other = KnowledgeGraph.load(KnowledgeGraph.from_triples(MOVIES[:3]).save(tmp_path / "other"))
    KGEmbeddings(other, counter, directory=tmp_path / "kg" / "embeddings").entities()
    assert (tmp_path / "kg" / "embeddings" / counter.id / "notes.txt").read_text() == "precious"


def test_two_caches_of_one_store_keep_each_others_files(tmp_path, caplog):
    # two instances on one store (two methods, or two processes): what one writes after the other read the
    # tag is not taken for a damaged file by the other, nor dropped from the tag when the other writes
    kg, counter = _cached_kg(tmp_path)
    first, second = KGEmbeddings(kg, counter), KGEmbeddings(kg, counter)
    ents = second.entities()
    first.relations()  # writes the tag from what `first` knew
    seen = len(counter.seen)
    assert np.allclose(first.entities(), ents) and np.allclose(KGEmbeddings(kg, counter).entities(), ents)
    assert len(counter.seen) == seen and "differs from what was written" not in caplog.text
