"""KGs with their relations renamed (kgrag.eval.renamed): same facts, other names, mistakes refused."""

from __future__ import annotations

import pytest

from kgrag.eval.renamed import RENAMINGS, RenamingError, rename_relations, write_renamed
from kgrag.graph.io import load_file
from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import MOVIES

METAQA_RELATIONS = {
    "directed_by",
    "written_by",
    "starred_actors",
    "release_year",
    "in_language",
    "has_tags",
    "has_genre",
    "has_imdb_votes",
    "has_imdb_rating",
}


def test_metaqa_renaming_covers_the_nine_relations_with_distinct_names():
    renaming = RENAMINGS["metaqa-wikidata"]
    assert set(renaming) == METAQA_RELATIONS
    assert len(set(renaming.values())) == 9 and not set(renaming.values()) & METAQA_RELATIONS


def test_rename_keeps_ids_and_facts():
    kg = KnowledgeGraph.from_triples(MOVIES)
    renamed = rename_relations(kg, "metaqa-wikidata")
    assert renamed.relations == [RENAMINGS["metaqa-wikidata"][r] for r in kg.relations]
    assert renamed.entities == kg.entities
    assert list(renamed.heads) == list(kg.heads) and list(renamed.tails) == list(kg.tails)
    triples = set(renamed.iter_triples())
    assert ("Heat", "director", "Michael Mann") in triples and ("Alien", "publication date", "1979") in triples
    assert len(triples) == len(MOVIES)


def test_rename_refuses_what_would_change_the_facts():
    kg = KnowledgeGraph.from_triples(MOVIES)
    with pytest.raises(RenamingError, match="old names: starred_actors"):
        rename_relations(kg, {"directed_by": "director", "written_by": "writer", "release_year": "year"})
    with pytest.raises(RenamingError, match="same name: person"):
        rename_relations(
            kg, dict.fromkeys(("directed_by", "written_by", "starred_actors"), "person") | {"release_year": "year"}
        )
    with pytest.raises(RenamingError, match="does not have: has_genre"):
        rename_relations(kg, {"directed_by": "director", "has_genre": "genre"}, complete=False)
    with pytest.raises(RenamingError, match="unknown relation renaming"):
        rename_relations(kg, "no-such-renaming")


def test_write_renamed_gives_a_file_ingest_reads(tmp_path):
    source = tmp_path / "kb.txt"
    source.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in MOVIES), "utf-8")
    target = write_renamed(source, tmp_path / "renamed.tsv.gz", "metaqa-wikidata")
    kg = load_file(target)
    assert sorted(kg.relations) == ["cast member", "director", "publication date", "screenwriter"]
    assert kg.num_triples == len(MOVIES)
