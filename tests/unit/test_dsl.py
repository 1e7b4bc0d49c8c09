"""ULTRAG's query language: parsing, printing (round trip), validation against a KG, GBNF generation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.graph.kg import KnowledgeGraph
from kgrag.methods.ultrag.dsl import (
    DSLSyntaxError,
    Entity,
    Intersection,
    Projection,
    depth,
    extract_query,
    feedback,
    format_query,
    leaves,
    parse,
    parse_and_validate,
    query_grammar,
    relations,
    shape,
    validate,
)
from kgrag.methods.ultrag.dsl.printer import format_relation

E = Entity


def P(operand, relation):
    return Projection(operand, relation)


# ---------------------------------------------------------------------- parsing
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"Kismet" -> directed_by', P(E("Kismet"), "directed_by")),
        ("Kismet -> directed_by", P(E("Kismet"), "directed_by")),
        ("[Kismet] -> directed_by", P(E("Kismet"), "directed_by")),
        ("'Kismet' -> directed_by", P(E("Kismet"), "directed_by")),
        ("Kismet → directed_by", P(E("Kismet"), "directed_by")),
        ("Kismet", E("Kismet")),
        (
            '"Kismet" -> directed_by -> directed_by_inv',
            P(P(E("Kismet"), "directed_by"), "directed_by_inv"),
        ),
        (
            "AND(e1 -> r1_inv, e2 -> r2) -> r3",
            P(Intersection((P(E("e1"), "r1_inv"), P(E("e2"), "r2"))), "r3"),
        ),
        (
            "and( a -> r, b -> r, c -> s, ) -> t",
            P(Intersection((P(E("a"), "r"), P(E("b"), "r"), P(E("c"), "s"))), "t"),
        ),
        ("AND(a -> r)", P(E("a"), "r")),  # a one-operand AND is its operand
        ("((a -> r)) -> s", P(P(E("a"), "r"), "s")),
        ("ANDREW Smith -> r", P(E("ANDREW Smith"), "r")),  # AND is a keyword only before "("
        ("Spider-Man 2 -> r", P(E("Spider-Man 2"), "r")),  # a hyphen is not an arrow
        ("Schindler's List -> r", P(E("Schindler's List"), "r")),
        ('"Heat (1995 film)" -> r', P(E("Heat (1995 film)"), "r")),
        ('"say \\"hi\\"" -> r', P(E('say "hi"'), "r")),
        ('a -> "directed by"', P(E("a"), "directed by")),
        ("Q42 -> P31_inv", P(E("Q42"), "P31_inv")),
        ("x -> people.person.place_of_birth", P(E("x"), "people.person.place_of_birth")),
        ("AND(\n  a -> r,\n  b -> s\n)", Intersection((P(E("a"), "r"), P(E("b"), "s")))),
    ],
)
def test_parse(text, expected):
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("a ->", "ends too early"),
        ("AND(a -> r, b -> s", "ends too early"),
        ('"abc -> r', "quote is not closed"),
        ("a -> r1 r2", "column 9"),
        ("a -> (r)", "expected a quoted name or a relation name"),
        (") a", r"unexpected '\)'"),
        ('"" -> r', "entity name is empty"),
        ("x" * 5000, "too long"),
    ],
)
def test_syntax_errors_say_what_is_wrong(text, message):
    with pytest.raises(DSLSyntaxError, match=message):
        parse(text)


def test_syntax_error_is_a_user_error():
    from kgrag.errors import KGRagError

    with pytest.raises(KGRagError):
        parse("AND(")


def test_extract_query_from_chatty_replies():
    assert extract_query('```\n"Kismet" -> directed_by\n```') == '"Kismet" -> directed_by'
    assert extract_query("Query: Kismet -> directed_by") == "Kismet -> directed_by"
    reply = 'Sure! The question asks for the director.\n"Kismet" -> directed_by\nThis follows directed_by.'
    assert parse(extract_query(reply)) == P(E("Kismet"), "directed_by")
    assert extract_query("") == ""
    assert extract_query(None) == ""


def test_tree_helpers():
    q = parse("AND(a -> r1_inv, b -> r2) -> r3")
    assert leaves(q) == ["a", "b"]
    assert relations(q) == ["r3", "r1_inv", "r2"]
    assert depth(q) == 2
    assert shape(q) == "AND(e->r, e->r)->r"
    with pytest.raises(ValueError):
        Intersection((E("a"),))


# ---------------------------------------------------------------------- printing: round trip
_names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(lambda s: s.strip())
_relations = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_.:/]{0,15}(_inv)?", fullmatch=True),
    _names,  # anything at all: printed quoted when it is not a plain identifier
)
_queries = st.recursive(
    st.builds(Entity, _names),
    lambda sub: st.one_of(
        st.builds(Projection, sub, _relations),
        st.builds(Intersection, st.lists(sub, min_size=2, max_size=4).map(tuple)),
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(_queries)
def test_print_parse_round_trip(query):
    text = format_query(query)
    assert parse(text) == query
    assert parse(format_query(query, indent=2)) == query
    assert format_query(parse(text)) == text  # the canonical form is a fixed point


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_or_fails_with_a_syntax_error(text):
    try:
        query = parse(text)
    except DSLSyntaxError:
        return
    assert parse(format_query(query)) == query  # whatever was accepted prints back to the same tree


def test_format_relation_quotes_only_when_needed():
    assert format_relation("directed_by_inv") == "directed_by_inv"
    assert format_relation("directed by") == '"directed by"'
    assert format_relation("a->b") == '"a->b"'


def test_pretty_printer_indents_intersections():
    q = parse("AND(a -> r, AND(b -> s, c -> t)) -> u")
    assert format_query(q, indent=2) == 'AND(\n  "a" -> r,\n  AND(\n    "b" -> s,\n    "c" -> t\n  )\n) -> u'


# ---------------------------------------------------------------------- validation
def test_validate_accepts_known_and_inverse_relations(movies_kg):
    v = validate(parse("AND(Heat -> starred_actors, Gladiator -> starred_actors) -> starred_actors_inv"), movies_kg)
    assert v.ok and not v.notes


@pytest.mark.parametrize(
    ("written", "read_as"),
    [
        ("Directed By", "directed_by"),
        ("directed-by", "directed_by"),
        ("directed_by.inv", "directed_by_inv"),
        ("directed_by^-1", "directed_by_inv"),
        ("directed_by_inverse", "directed_by_inv"),
        ("directed_by_inv_inv", "directed_by"),
    ],
)
def test_validate_repairs_small_slips(movies_kg, written, read_as):
    v = validate(P(E("Heat"), written), movies_kg)
    assert v.ok
    assert v.query == P(E("Heat"), read_as)
    assert v.notes == [f"relation {written!r} read as {read_as!r}"]


def test_validate_reports_unknown_relations_with_suggestions(movies_kg):
    v = parse_and_validate('"Heat" -> director -> stared_actors_inv', movies_kg)
    assert not v.ok and v.query is None
    assert len(v.errors) == 2
    assert "unknown relation 'director'" in v.errors[1] or "unknown relation 'director'" in v.errors[0]
    assert any("did you mean" in e and "starred_actors_inv" in e for e in v.errors)
    text = feedback('"Heat" -> director', v)
    assert "director" in text and "_inv" in text


def test_parse_and_validate_turns_syntax_errors_into_errors(movies_kg):
    v = parse_and_validate("AND(Heat -> directed_by", movies_kg)
    assert not v.ok and "ends too early" in v.errors[0]


def test_validate_refuses_a_bare_entity(movies_kg):
    v = parse_and_validate("I am not sure which relation to use.", movies_kg)
    assert not v.ok and "follows no relation" in v.errors[0]


def test_validate_limits_size(movies_kg):
    q = E("Heat")
    for _ in range(70):
        q = P(q, "directed_by")
    assert "too large" in validate(q, movies_kg).errors[0]


# ---------------------------------------------------------------------- GBNF
def test_gbnf_lists_every_relation_both_ways(movies_kg):
    grammar = query_grammar(movies_kg)
    for rel in movies_kg.relations:
        assert f'"{rel}"' in grammar and f'"{rel}_inv"' in grammar
    assert grammar.startswith("root ::= query")


def test_gbnf_quotes_relations_that_need_it():
    kg = KnowledgeGraph.from_triples([("a", "directed by", "b")])
    assert '"\\"directed by\\""' in query_grammar(kg)


def test_gbnf_is_accepted_by_llama_cpp(movies_kg):
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python (extra [local]) is not installed")
    assert llama_cpp.LlamaGrammar.from_string(query_grammar(movies_kg), verbose=False) is not None
