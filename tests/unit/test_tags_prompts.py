"""Tag parsing tolerates what small LLMs write; prompt files load and render."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.prompts import available, load_prompt
from kgrag.prompts.tags import parse_tags, split_items

TAGS = ["entities", "paths", "opencypher", "answers"]
content = st.text(alphabet=st.characters(blacklist_characters="<>`", blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(
    values=st.fixed_dictionaries({t: content for t in TAGS}),
    upper=st.booleans(),
    fence=st.booleans(),
    drop_close=st.sampled_from([None, *TAGS]),
    junk=content,
)
def test_sections_survive_format_slips(values, upper, fence, drop_close, junk):
    parts = [junk]
    for tag in TAGS:
        name = tag.upper() if upper else tag
        close = "" if tag == drop_close else f"</ {name} >"
        parts.append(f"<{name}>{values[tag]}{close}\n")
    text = "".join(parts)
    if fence:
        text = f"```xml\n{text}\n```"
    parsed = parse_tags(text, TAGS)
    for tag in TAGS:
        assert parsed[tag] == (values[tag].strip() or None)


@given(st.text(max_size=200))
def test_never_raises_on_junk(text):
    parsed = parse_tags(text, TAGS)
    assert set(parsed) == set(TAGS)


def test_mismatched_and_singular_tags():
    out = parse_tags("<answer>Paris\nLyon</answers> trailing <entity>France", ["answers", "entities"])
    assert out == {"answers": "Paris\nLyon", "entities": "France"}
    assert parse_tags("", ["answers"]) == {"answers": None}
    assert parse_tags("<answers>  </answers><answers>X</answers>", ["answers"]) == {"answers": "X"}


def test_split_items():
    assert split_items("1. Heat\n- Collateral\n* Heat\n\n  none\n(3) Thief") == ["Heat", "Collateral", "Thief"]
    assert split_items(None) == []


def test_prompts_load_and_render():
    assert "llm_answer" in available()
    prompt = load_prompt("llm_answer")
    messages = prompt.render(question="who directed {Heat}?")
    assert messages[-1]["content"].startswith("Question: who directed {Heat}?")
    assert "answers" in prompt.tags and "<answers>" in messages[-1]["content"]
    with pytest.raises(KeyError, match="needs values for: question"):
        prompt.render()
    decomposition = load_prompt("decompose_questions")  # the paper's sampling settings travel with the prompt
    assert (decomposition.top_k, decomposition.min_p, decomposition.temperature) == (40, 0.05, 0.3)
    assert prompt.top_k is None and prompt.min_p is None
    with pytest.raises(FileNotFoundError, match="no prompt named"):
        load_prompt("no_such_prompt")


def test_a_score_copied_from_a_candidate_list_is_not_part_of_the_answer():
    reply = "Spanish (1.00)\nSuwon (0.87, by location.mailing_address.citytown)\nApollo 13 (1995)\n1.5"
    assert split_items(reply) == ["Spanish", "Suwon", "Apollo 13 (1995)", "1.5"]
