"""Loaders: every format round-trips; every class of bad input names the right path:line."""

from __future__ import annotations

import gzip
import json

import pytest

from kgrag.errors import KGFormatError
from kgrag.graph.io import TripleBuilder, detect_format, load_dataframe, load_file, load_networkx, write_file
from kgrag.graph.kg import KnowledgeGraph
from tests.conftest import MOVIES

TRICKY = [
    *MOVIES,
    ("Amélie", "directed_by", "Jean-Pierre Jeunet"),
    ("Film, with comma", "has_tags", 'quote "inside"'),
    ("Se7en", "has_imdb_rating", "8.6"),
    ("a/b#c:d", "odd relation/name", "100% legit"),
]


@pytest.mark.parametrize(
    "ext",
    [
        "kb.txt",
        "kb.spo",
        "kb.tsv",
        "kb.csv",
        "kb.jsonl",
        "kb.nt",
        "kb.csv.gz",
        "kb.jsonl.gz",
        "kb.nt.gz",
        "kb.tsv.gz",
    ],
)
def test_every_format_round_trips(tmp_path, ext):
    triples = [t for t in TRICKY if not (ext.startswith("kb.txt") or ext.startswith("kb.spo")) or "|" not in "".join(t)]
    kg = KnowledgeGraph.from_triples(triples)
    path = write_file(kg, tmp_path / ext)
    back = load_file(path)
    assert set(back.iter_triples()) == set(kg.iter_triples())
    assert sorted(back.entities) == sorted(kg.entities)
    assert back.num_triples == kg.num_triples


def test_autodetect_by_content(tmp_path):
    kg = KnowledgeGraph.from_triples(MOVIES)
    for fmt in ("spo", "tsv", "csv", "jsonl", "nt"):
        path = write_file(kg, tmp_path / f"data.{fmt}", format=fmt)
        renamed = path.rename(tmp_path / f"noext_{fmt}")
        assert detect_format(renamed) == fmt
        assert load_file(renamed).num_triples == len(MOVIES)


def test_gzip_detected_by_magic_not_name(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_bytes(gzip.compress(b"a|r|b\nb|r|c\n"))
    assert load_file(path).num_triples == 2


def test_metaqa_style_and_freebase_style_columns(tmp_path):
    spo = tmp_path / "kb.txt"
    spo.write_text("Kismet|directed_by|William Dieterle\nKismet|release_year|1944\n")
    assert load_file(spo).num_triples == 2
    csv_path = tmp_path / "fb.csv"
    csv_path.write_text("src,edge,dst,weight\nWynton Marsalis,people.person.place_of_birth,New Orleans,1\n")
    kg = load_file(csv_path, head="src", relation="edge", tail="dst")
    assert list(kg.iter_triples()) == [("Wynton Marsalis", "people.person.place_of_birth", "New Orleans")]
    kg = load_file(csv_path, head=0, relation=1, tail=2)
    assert kg.num_triples == 1
    headerless = tmp_path / "triples.tsv"
    headerless.write_text("Jamaica\tlocation.country.languages_spoken\tJamaican English\n")
    assert load_file(headerless).num_triples == 1


def test_nt_labels_become_names(tmp_path):
    path = tmp_path / "g.nt"
    path.write_text(
        '<http://ex.org/Q1> <http://www.w3.org/2000/01/rdf-schema#label> "Douglas Adams"@en .\n'
        "<http://ex.org/Q1> <http://ex.org/prop/educated_at> <http://ex.org/Q2> .\n"
        '<http://ex.org/Q2> <http://www.w3.org/2000/01/rdf-schema#label> "St John\\u0027s College" .\n'
        '<http://ex.org/Q1> <http://ex.org/prop/born> "1952"^^<http://www.w3.org/2001/XMLSchema#gYear> .\n'
        "# a comment\n"
    )
    kg = load_file(path)
    assert set(kg.iter_triples()) == {
        ("Douglas Adams", "educated_at", "St John's College"),
        ("Douglas Adams", "born", "1952"),
    }


WD = "http://www.wikidata.org"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
ALT = "<http://www.w3.org/2004/02/skos/core#altLabel>"


def test_nt_predicates_take_their_labels(tmp_path):
    """A relation named "P50" tells no method what it means: a predicate is named by its own label, else by the
    label of the one labelled IRI with its local name (Wikidata labels wd:P50 and states facts with wdt:P50)."""
    path = tmp_path / "wd.nt"
    path.write_text(
        f'<{WD}/entity/Q42> {LABEL} "Douglas Adams"@en .\n'
        f'<{WD}/entity/Q350> {LABEL} "Cambridge"@en .\n'
        f'<{WD}/entity/P19> {LABEL} "place of birth"@en .\n'
        f'<http://ex.org/worksFor> {LABEL} "works for" .\n'
        f'<http://a.org/P7> {LABEL} "one P7" .\n'
        f'<http://b.org/P7> {LABEL} "another P7" .\n'
        f"<{WD}/entity/Q42> <{WD}/prop/direct/P19> <{WD}/entity/Q350> .\n"
        f"<{WD}/entity/Q42> <http://ex.org/worksFor> <{WD}/entity/Q350> .\n"
        f"<{WD}/entity/Q42> <{WD}/prop/direct/P7> <{WD}/entity/Q350> .\n"
    )
    kg = load_file(path)
    assert set(kg.iter_triples()) == {
        ("Douglas Adams", "place of birth", "Cambridge"),
        ("Douglas Adams", "works for", "Cambridge"),
        ("Douglas Adams", "P7", "Cambridge"),  # two labelled IRIs end in P7: which one is meant is unknown
    }
    assert kg.entities == ["Douglas Adams", "Cambridge"]  # a label's subject is no entity of its own


def test_nt_names_prefer_untagged_then_english_labels_and_keep_others_as_aliases(tmp_path):
    path = tmp_path / "g.nt"
    path.write_text(
        f'<http://x/a> {LABEL} "Ада"@ru .\n'
        f'<http://x/a> {LABEL} "Ada"@en .\n'
        f'<http://x/a> {ALT} "Ada Lovelace"@en-GB .\n'
        f'<http://x/a> {ALT} "Ада Лавлейс"@ru .\n'
        f'<http://x/b> {LABEL} "Бэббидж"@ru .\n'
        f'<http://x/b> {LABEL} "Babbage"@de .\n'
        f'<http://x/b> {ALT} "Чарльз Бэббидж"@ru .\n'
        f'<http://x/c> {LABEL} "Analytical Engine"@en .\n'
        f'<http://x/c> {LABEL} "Engine" .\n'
        "<http://x/a> <http://x/worked_with> <http://x/b> .\n"
        "<http://x/b> <http://x/designed> <http://x/c> .\n"
    )
    kg = load_file(path)
    assert kg.entities == ["Ada", "Бэббидж", "Engine"]
    aliases = {kg.entities[k]: v for k, v in kg.aliases.items()}
    assert aliases == {"Ada": ["Ada Lovelace"], "Бэббидж": ["Чарльз Бэббидж"], "Engine": ["Analytical Engine"]}


def test_dataframe_and_networkx():
    pd = pytest.importorskip("pandas")
    nx = pytest.importorskip("networkx")
    df = pd.DataFrame(MOVIES, columns=["h", "r", "t"])
    kg = KnowledgeGraph.from_pandas(df, head="h", relation="r", tail="t")
    assert set(kg.iter_triples()) == set(MOVIES)
    g = nx.MultiDiGraph()
    for h, r, t in MOVIES:
        g.add_edge(h, t, relation=r)
    g.add_node("Lonely")
    kg2 = KnowledgeGraph.from_networkx(g)
    assert set(kg2.iter_triples()) == set(MOVIES)
    assert kg2.find_entity("Lonely") is not None
    keyed = nx.MultiDiGraph()
    keyed.add_edge("a", "b", key="likes")
    assert list(load_networkx(keyed).iter_triples()) == [("a", "likes", "b")]


# ---------------------------------------------------------------------- bad input
def _error(path, **kwargs) -> KGFormatError:
    with pytest.raises(KGFormatError) as info:
        load_file(path, **kwargs)
    return info.value


def test_ragged_row(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text("a|r|b\nc|r|d\nbroken|row\n")
    err = _error(path)
    assert str(err).startswith(f"{path}:3: expected 3 fields")
    tsv = tmp_path / "kb.tsv"
    tsv.write_text("head\trelation\ttail\na\tr\tb\nc\tr\n")
    assert str(_error(tsv)).startswith(f"{tsv}:3: expected 3 fields, found 2")


def test_empty_field(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text("a|r|b\na||b\n")
    assert str(_error(path)) == f"{path}:2: empty relation"
    csv_path = tmp_path / "kb.csv"
    csv_path.write_text("head,relation,tail\na,r,b\n\nc,r,  \n")
    assert str(_error(csv_path)) == f"{csv_path}:4: empty tail"


def test_bad_encoding(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_bytes(b"a|r|b\nc|r|d\ncaf\xe9|r|x\n")
    err = _error(path)
    assert str(err).startswith(f"{path}:3: not valid UTF-8")
    gz = tmp_path / "kb.txt.gz"
    gz.write_bytes(gzip.compress(b"a|r|b\n\xff\xfe|r|x\n"))
    assert str(_error(gz)).startswith(f"{gz}:2: not valid UTF-8")


def test_empty_file(tmp_path):
    for name in ("kb.txt", "kb.csv", "kb.jsonl"):
        path = tmp_path / name
        path.write_text("" if name != "kb.csv" else "\n\n")
        assert "empty" in str(_error(path))
        assert str(_error(path)).startswith(str(path))
    header_only = tmp_path / "h.csv"
    header_only.write_text("head,relation,tail\n")
    assert "no triples" in str(_error(header_only))


def test_unknown_column(tmp_path):
    path = tmp_path / "kb.csv"
    path.write_text("head,relation,tail\na,r,b\n")
    err = _error(path, head="subject_name")
    assert str(err) == f"{path}:1: unknown head column 'subject_name'; columns are: head, relation, tail"
    odd = tmp_path / "odd.csv"
    odd.write_text("x,y,z,w\na,r,b,c\n")
    assert "name the columns" in str(_error(odd))


def test_jsonl_errors(tmp_path):
    path = tmp_path / "kb.jsonl"
    path.write_text(json.dumps({"head": "a", "relation": "r", "tail": "b"}) + "\n{oops\n")
    assert str(_error(path)).startswith(f"{path}:2: invalid JSON")
    path.write_text(json.dumps({"head": "a", "relation": "r"}) + "\n")
    assert str(_error(path)).startswith(f"{path}:1: missing key 'tail'")
    path.write_text(json.dumps({"head": "a", "relation": "r", "tail": None}) + "\n")
    assert "must be a string or number" in str(_error(path))


def test_nt_errors(tmp_path):
    path = tmp_path / "g.nt"
    path.write_text("<http://a> <http://r> <http://b> .\n<http://a> <http://r> \n")
    assert str(_error(path)).startswith(f"{path}:2: not an N-Triples statement")


def test_missing_file_and_dataframe_errors(tmp_path):
    assert str(_error(tmp_path / "nope.txt")) == f"{tmp_path / 'nope.txt'}: no such file"
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"head": ["a", "b"], "relation": ["r", "r"], "tail": ["x", None]})
    with pytest.raises(KGFormatError, match=r"^<DataFrame>:2: missing value in tail column"):
        load_dataframe(df)
    with pytest.raises(KGFormatError, match="unknown head column 'src'"):
        load_dataframe(df, head="src")


@pytest.mark.parametrize("fmt", ["spo", "tsv", "csv"])
def test_fast_reader_matches_line_by_line_reader(tmp_path, fmt):
    """The chunked bulk reader assigns exactly the ids the row-by-row reader does."""
    from kgrag.graph.io import delimited

    triples = [(f"e{i % 97}", f"r{i % 5}", f"e{(i * 7) % 89}x") for i in range(2000)] + [("Amélie", "r0", "é")]
    path = write_file(KnowledgeGraph.from_triples(triples), tmp_path / f"kb.{fmt}", format=fmt)
    fast = load_file(path)
    slow_builder = TripleBuilder(str(path))
    if fmt == "spo":
        delimited.read_spo(path, slow_builder)
    else:
        delimited.read_delimited(path, slow_builder, "\t" if fmt == "tsv" else ",", None, None, None, None)
    slow = slow_builder.build()
    assert fast.entities == slow.entities and fast.relations == slow.relations
    assert (fast.heads == slow.heads).all() and (fast.tails == slow.tails).all() and (fast.rels == slow.rels).all()


def test_fast_reader_edge_cases(tmp_path):
    path = tmp_path / "kb.txt"
    path.write_text("".join(f"head {i}|rel|tail {i}\r\n" for i in range(50)) + "last|rel|a much longer row name")
    kg = load_file(path)
    assert kg.num_triples == 51 and kg.find_entity("a much longer row name") is not None
    assert kg.find_entity("tail 7") is not None  # CRLF stripped
    blank = tmp_path / "blank.txt"
    blank.write_text("a|r|b\n\nc|r|d\n")  # a blank line: handled by the line-by-line reader
    assert load_file(blank).num_triples == 2
    spaces = tmp_path / "spaces.txt"
    spaces.write_text("a|r|b\n |r|d\n")
    assert str(_error(spaces)) == f"{spaces}:2: empty head"


# ---------------------------------------------------------------------- hostile input (issue #22, item 5)
def _jsonl(path, head='"a"', relation='"r"', tail='"b"'):
    path.write_text(
        '{"head": "x", "relation": "r", "tail": "y"}\n'
        + f'{{"head": {head}, "relation": {relation}, "tail": {tail}}}\n'
    )
    return path


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("rel.csv", 'head,relation,tail\nx,r,y\na,"r\nq",b\n', ":3: a quoted field spans lines 3-4"),
        ("head.csv", 'head,relation,tail\nx,r,y\n"a\r\nb",r,c\n', ":3: a quoted field spans lines 3-4"),
        (
            "open.csv",
            'head,relation,tail\nx,"r,y\na,r,b\nc,r,d\n',
            ":2: malformed CSV: a quote opens here and is never",
        ),
        ("semi.csv", "head;relation;tail\nx;r;y\n", ":1: no header and 1 columns; the fields look separated by semi"),
        ("pipe.csv", "x|r|y\n", ":1: no header and 1 columns; the fields look separated by '|': pass --format spo"),
        # one recognised column name, and the row's values are not data in the rows after it: a header
        ("node.csv", "node_a,edge,node_b\nx,r,y\nz,r,y\n", ":1: no head column found among node_a, edge, node_b"),
        ("rel.nt", "<http://x/a> <http://x/r%0Aq> <http://x/b> .\n", ":1: relation contains a line break"),
        ("sub.nt", "<http://x/a%0Db> <http://x/r> <http://x/b> .\n", ":1: head contains a line break"),
        ("lit.nt", '<http://x/a> <http://x/r> "a\\nb" .\n', ":1: tail contains a line break"),
        ("surrogate.nt", '<http://x/a> <http://x/r> "\\uD800" .\n', ":1: tail contains a lone surrogate"),
        (
            "label.nt",
            '<http://x/a> <http://www.w3.org/2000/01/rdf-schema#label> "\\uDFFF" .\n'
            "<http://x/a> <http://x/r> <http://x/b> .\n",
            ":1: label contains a lone surrogate",
        ),
        ("big.nt", '<http://x/a> <http://x/r> "\\U0011FFFF" .\n', ":1: escape \\U0011FFFF is not a Unicode"),
        ("pct.nt", "<http://x/a> <http://x/r> <http://x/caf%E9> .\n", ":1: percent-encoded bytes in"),
    ],
)
def test_hostile_names_are_refused_with_path_and_line(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_bytes(text.encode())
    assert str(_error(path)).startswith(f"{path}{expected}")


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({"relation": '"r\\nq"'}, ":2: relation contains a line break: 'r\\nq'"),
        ({"head": '"a\\rb"'}, ":2: head contains a line break"),
        ({"tail": '"\\ud800"'}, ":2: tail contains a lone surrogate (U+D800)"),
        ({"head": "[" * 100_000 + "]" * 100_000}, ":2: JSON nested too deeply"),
        ({"tail": "NaN"}, ":2: invalid JSON (NaN is not a JSON number)"),
    ],
)
def test_hostile_jsonl_is_refused_with_path_and_line(tmp_path, fields, expected):
    path = _jsonl(tmp_path / "kb.jsonl", **fields)
    assert str(_error(path)).startswith(f"{path}{expected}")


def test_jsonl_numbers_are_stored_as_written(tmp_path):
    huge = "9" * 5000  # above Python's int-to-str digit limit
    path = _jsonl(tmp_path / "kb.jsonl", head=huge, relation='"r"', tail="8.60")
    (tmp_path / "more.jsonl").write_text('{"head": 1e999, "relation": "r", "tail": 0.1000000000000000055511}\n')
    assert load_file(path).entities == ["x", "y", huge, "8.60"]
    assert load_file(tmp_path / "more.jsonl").entities == ["1e999", "0.1000000000000000055511"]


def test_jsonl_alias_with_a_surrogate_is_refused(tmp_path):
    path = tmp_path / "kb.jsonl"
    path.write_text('{"head": "a", "relation": "r", "tail": "b", "aliases": {"a": ["\\ud800"]}}\n')
    assert str(_error(path)).startswith(f"{path}:1: alias contains a lone surrogate")


def test_gzip_corrupt_mid_file_is_reported_as_corrupt_gzip(tmp_path):
    data = "".join(f"e{i}|r{i % 7}|e{i + 1}\n" for i in range(200_000)).encode()
    packed = bytearray(gzip.compress(data))
    for k in range(len(packed) // 2, len(packed) // 2 + 40):
        packed[k] ^= 0x55
    path = tmp_path / "kb.txt.gz"
    path.write_bytes(bytes(packed))
    message = str(_error(path))
    assert message.startswith(f"{path}:") and "corrupt gzip data" in message, message
    truncated = tmp_path / "cut.txt.gz"
    truncated.write_bytes(gzip.compress(data)[:-100])
    assert "corrupt gzip data" in str(_error(truncated))


def test_long_names_are_interned_exactly_and_quickly(tmp_path):
    """One 100 KB name made the fast reader hash every field once per 8 bytes of it (5 s for 20k rows)."""
    import time

    long_a, long_b = "x" * 100_000, "x" * 99_999 + "y"
    rows = [f"e{i}|r|e{i + 1}" for i in range(20_000)]
    rows[3], rows[9], rows[11] = f"{long_a}|r|{long_b}", f"{long_b}|r|{long_a}", f"{'z' * 300}|r|e1"
    path = tmp_path / "kb.txt"
    path.write_text("\n".join(rows) + "\n")
    start = time.perf_counter()
    kg = load_file(path)
    assert time.perf_counter() - start < 1.5
    assert sorted(kg.iter_triples()) == sorted(tuple(row.split("|")) for row in rows)
    assert kg.num_entities == len({name for row in rows for name in row.split("|")[::2]})


def test_a_gzip_bomb_is_refused_with_bounded_memory(tmp_path, monkeypatch):
    """3 MB of gzip expanded to one 3 GiB line: MemoryError before; now at most MAX_LINE bytes are held."""
    from kgrag.graph import fastparse
    from kgrag.graph.io import lines

    monkeypatch.setattr(lines, "MAX_LINE", 1 << 16)
    monkeypatch.setattr(fastparse, "MAX_BYTES", 1 << 16)
    path = tmp_path / "bomb.txt.gz"
    path.write_bytes(gzip.compress(b"a|r|b\n" + b"a" * (1 << 20)))
    read_sizes: list[int] = []
    real_read = gzip.GzipFile.read

    def spy(self, size=-1):
        read_sizes.append(size)
        return real_read(self, size)

    monkeypatch.setattr(gzip.GzipFile, "read", spy)
    assert str(_error(path)) == f"{path}:2: line longer than 65536 bytes; no triple line is that long"
    assert -1 not in read_sizes and None not in read_sizes  # never "read everything"


def test_an_empty_nt_label_still_falls_back_to_the_iri(tmp_path):
    path = tmp_path / "g.nt"
    path.write_text('<http://x/a> <http://www.w3.org/2000/01/rdf-schema#label> "" .\n<http://x/a> <http://x/r> "b" .\n')
    assert load_file(path).entities == ["a", "b"]


@pytest.mark.parametrize("aliases", ['"Alpha"', '{"a": "Alpha"}', '{"a": [["x"]]}', '{"a": [true]}'])
def test_malformed_jsonl_aliases_are_refused_not_skipped(tmp_path, aliases):
    path = tmp_path / "kb.jsonl"
    path.write_text(f'{{"head": "a", "relation": "r", "tail": "b", "aliases": {aliases}}}\n')
    assert str(_error(path)).startswith(f"{path}:1: 'aliases' must map names to lists of strings")


def test_jsonl_aliases_keep_numbers_as_written(tmp_path):
    path = tmp_path / "kb.jsonl"
    path.write_text('{"head": "a", "relation": "r", "tail": "b", "aliases": {"a": ["Alpha", 1.50]}}\n')
    kg = load_file(path)
    assert kg.aliases == {kg.entity_id("a"): ["Alpha", "1.50"]}


def test_a_row_naming_one_column_is_data_when_the_rows_after_it_use_its_values(tmp_path):
    """``heat,type,film`` names one recognised column (``type``) but ``type`` is a relation below: a triple."""
    path = tmp_path / "typed.csv"
    path.write_text("heat,type,film\nalien,type,film\n")
    kg = load_file(path)
    assert kg.num_triples == 2 and kg.relations == ["type"]


def test_load_file_says_which_columns_it_took(tmp_path):
    """The user sees how their file was read: the format, and which columns became head, relation and tail."""
    from kgrag.graph.io import load_file

    with_header = tmp_path / "kg.csv"
    with_header.write_text("subject,predicate,object\nHeat,directed by,Michael Mann\n")
    notes: list[str] = []
    load_file(with_header, notes=notes)
    assert notes == [
        "format: csv (from the file's name and first lines)",
        "header row: 'subject' → head, 'predicate' → relation, 'object' → tail",
    ]
    bare = tmp_path / "kg.tsv"
    bare.write_text("Heat\tdirected by\tMichael Mann\n")
    notes = []
    load_file(bare, notes=notes)
    assert notes[-1] == "no header row: columns 1, 2, 3 → head, relation, tail"
    notes = []
    load_file(with_header, head="object", relation="predicate", tail="subject", notes=notes)
    assert notes[-1] == "header row: 'object' → head, 'predicate' → relation, 'subject' → tail"


def test_relation_names_that_look_like_identifiers_are_flagged(tmp_path):
    path = tmp_path / "ids.tsv"
    path.write_text("a\tP50\tb\nb\tr7\tc\nc\tborn in\td\n")
    notes: list[str] = []
    load_file(path, notes=notes)
    assert any(n.startswith("warning: 2 of 3 relation names look like identifiers (P50, r7)") for n in notes)
    named = tmp_path / "named.tsv"
    named.write_text("a\tauthor\tb\nb\tP19\tc\nc\tborn in\td\n")
    notes = []
    load_file(named, notes=notes)
    assert not any(n.startswith("warning") for n in notes)
