"""The contract every registered embedder keeps: ``encode`` gives float32 rows of ``dim`` with unit L2 norm,
the same vector for the same text whatever batch it comes in, and different vectors for different texts.

An embedder whose optional extra is not installed (``st`` without sentence-transformers) is skipped with the
extra's name; the others load their models from packages installed with kgrag."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.errors import MissingExtraError
from kgrag.models.embeddings import Embedder, embedders, load_embedder

TEXTS = ["Heat", "Michael Mann", "who directed Heat?", "Ridley Scott directed Alien (1979)", "Amélie", "a " * 40]


@pytest.fixture(scope="module", params=list(embedders))
def embedder(request) -> Embedder:
    try:
        return load_embedder(request.param)
    except MissingExtraError as exc:
        pytest.skip(str(exc))


class TestEmbedderContract:
    def test_is_an_embedder_with_an_id_and_a_dimension(self, embedder):
        assert isinstance(embedder, Embedder)
        assert isinstance(embedder.id, str) and embedder.id and isinstance(embedder.dim, int) and embedder.dim > 0

    def test_rows_are_float32_unit_vectors_of_dim(self, embedder):
        vectors = embedder.encode(TEXTS)
        assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), embedder.dim)
        assert np.isfinite(vectors).all()
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)

    def test_nothing_to_encode_gives_no_rows(self, embedder):
        assert embedder.encode([]).shape == (0, embedder.dim)

    def test_a_text_gets_the_same_vector_every_time_and_in_any_batch(self, embedder):
        batch = embedder.encode(TEXTS)
        assert np.array_equal(embedder.encode(TEXTS), batch)
        alone = np.vstack([embedder.encode([text]) for text in TEXTS])
        assert np.allclose(alone, batch, atol=1e-5)
        assert np.allclose(embedder.encode(TEXTS, batch_size=2), batch, atol=1e-5)

    def test_different_texts_get_different_vectors(self, embedder):
        vectors = embedder.encode(TEXTS)
        similarity = vectors @ vectors.T
        assert (similarity[~np.eye(len(TEXTS), dtype=bool)] < 0.9999).all()
