"""The answer call: ask the model for answers and read its reply defensively, the same way for every method.

Every method that lets the LLM write (or choose) its answers ends in :func:`ask_for_answers` — kaping's and
decompose's facts-then-question calls through :func:`answer_from_facts` — so how a reply is read (one answer a
line, lists on one line split where the KG says so, names recovered from sentences, a reply cut off by its token
budget) is decided here once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from kgrag.methods.base import FactsLayout
from kgrag.types import Evidence

_ANSWERS_TAG = re.compile(r"<\s*answers?\s*>", re.I)  # the opening tag a reply's answers belong after
_ANY_TAG = re.compile(r"<[^<>\n]*>")
_OWN_TAG = re.compile(r"^\s*<\s*([^<>/\s][^<>\n]*?)\s*>\s*$", re.M)  # a line that is one opening tag

if TYPE_CHECKING:
    from kgrag.linking.names import NameIndex
    from kgrag.methods.base import Method, PromptReply


def ask_for_answers(
    method: Method,
    prompt_name: str,
    *,
    kg_names: bool = True,
    evidence_names: Sequence[str] = (),
    exclude: Sequence[str] = (),
    choices: Mapping[str, str] | None = None,
    replies: list[str] | None = None,
    **values: str,
) -> list[str]:
    """Call a prompt that returns ``<answers>`` and read them defensively (one per line).

    ``choices`` (the names the reply may write → the KG names they stand for) holds the reply to them under a
    grammar (:func:`~kgrag.prompts.gbnf.choice_grammar`): a small model chooses a name it was shown more
    reliably than it writes one, and every answer then stands on the evidence. What is not one of them (a
    reply cut off by ``max_tokens`` ends in part of a name) is dropped before the names are read, so a reply
    that names only the question's own entity still gets the evidence's best other name in its place.

    With ``kg_names`` a line listing several KG entities is split and KG names come first;
    ``evidence_names`` (the entities of the evidence shown, best first) and ``exclude`` (the question's own
    entities) let a sentence or run-together names be read as the names they mention, and put evidence names
    first (:func:`kgrag.linking.answers.as_kg_answers`). ``replies`` collects the raw reply, for a prompt
    whose reply says more than its answers (decompose's plan that also answers its first step). A reply that
    ran into the prompt's ``max_tokens`` loses its unfinished last answer (:func:`without_cut_tail`).
    """
    from kgrag.linking.answers import as_kg_answers
    from kgrag.linking.names import NameIndex
    from kgrag.methods.answer_kind import COUNT_ITEMS, is_number, kind_on, read_yes_no, with_note
    from kgrag.prompts.gbnf import choice_grammar

    kind = kind_on(method.kg, values.get("question", ""))
    if "question" in values:  # a count or yes/no question gets the note its answer needs
        values["question"] = with_note(values["question"], kind)
    if kind == "yes_no" and choices:
        choices = {"yes": "yes", "no": "no"}
    if kind == "count" and choices:
        choices = {k: v for k, v in choices.items() if not is_number(k)}  # members to count, not a number
    grammar = choice_grammar(choices or {}, max_items=COUNT_ITEMS if kind == "count" else 10)
    reply = method.prompt_reply(prompt_name, grammar=grammar, **values)
    text = reply.text
    if replies is not None:
        replies.append(text)
    names = NameIndex.of(method.kg) if kg_names else None
    items = _answer_lines(reply, lambda: _whole_name_test(evidence_names, choices, names))
    if kind == "yes_no":
        return read_yes_no(items or [text.split("<", 1)[0]])
    if choices:  # the grammar separates names by lines or "; "
        items = [
            part for item in items for part in ([item] if item in choices else item.split("; ")) if part in choices
        ]
    if not items and "<" in text:
        items = _around_the_tags(text, names, [*evidence_names, *(choices or {})])
    if names is None or not items:
        return items
    return as_kg_answers(items, names, evidence_names, exclude)


def _around_the_tags(text: str, names: NameIndex | None, shown: Sequence[str]) -> list[str]:
    """Answers of a reply whose ``<answers>`` held none. "Lucia Ferrari <answers>": the answers written before
    the empty tag (5 of 2,304 recorded replies; "<matt dallas plays in>", ten films a line, "<answers>" lost all
    ten), where only lines that are names of the KG count, so a remark or a tag of the model's own before it is
    never an answer; else answers written as tags of their own (:func:`tagged_names`)."""
    from kgrag.prompts.tags import split_items

    opening = _ANSWERS_TAG.search(text)
    before = _ANY_TAG.sub("\n", text[: opening.start()] if opening else text.split("<", 1)[0])
    named = [x for x in split_items(before) if names is not None and names.exact(x)]
    return named or tagged_names(text, shown)


def tagged_names(text: str, shown: Sequence[str]) -> list[str]:
    """Answers written each as a tag of its own ("<mystery>\n<thriller>" for two genres the query returned; 2 of
    4,396 recorded replies, both lost before): the tags that name an entity the prompt showed, as it showed it.
    A tag naming nothing shown (a section tag, a made-up name) is no answer."""
    from kgrag.linking.normalize import normalize

    by_key = {normalize(n): n for n in shown}
    found = (by_key.get(normalize(m.group(1))) for m in _OWN_TAG.finditer(text))
    return list(dict.fromkeys(n for n in found if n is not None))


def _answer_lines(reply: PromptReply, whole: Callable[[], Callable[[str], bool]]) -> list[str]:
    """The reply's answers, one a line: its ``<answers>``, or its lines where it ignored the format; a cut-off
    reply's unfinished last part dropped (:func:`without_cut_tail`; ``whole`` makes its name test, only then)."""
    from kgrag.prompts.tags import split_items

    content = reply.tags.get("answers")
    if content is None and "<" not in reply.text:  # the model ignored the format: take its lines as answers
        content = reply.text
    return split_items(without_cut_tail(content, whole()) if reply.cut and content else content)


def without_cut_tail(content: str, whole: Callable[[str], bool]) -> str:
    """``content`` of a reply cut off by its ``max_tokens`` without its last answer, unless ``whole`` says that
    answer is a whole name: the model stopped in the middle of it ("…, Through the" for "Through the Wormhole";
    96 of 96 tokens), and the fragment is no answer. The last answer is what follows the last line's last ``;``
    or ``|`` (a comma inside it is the name's own: "…; The Correspondence of Charles Darwin, Volume 4: 1847-184"),
    else its last comma — and as a comma may be a name's own, the parts before it go too until the text ends in
    a whole name or a part begins its line —, else the last line. A reply that is one item is left as it is."""
    start = content.rfind("\n") + 1
    line = content[start:]
    strong = max(line.rfind(";"), line.rfind("|"))
    comma = line.rfind(",")
    cut = start + strong if strong >= 0 else start + comma if comma >= 0 else start - 1
    tail = content[cut + 1 :]
    if cut < 0 or "<" in tail or whole(tail.strip()):  # "<": it had begun its closing tag
        return content
    kept = content[:cut]
    while strong < 0 <= comma and not _ends_whole(kept, whole):
        comma = kept.rfind(",")
        if comma < start:  # the first part of its line stays
            break
        kept = kept[:comma]
    return kept


def _ends_whole(content: str, whole: Callable[[str], bool]) -> bool:
    """Whether ``content`` ends in a whole name: its last one to four comma-separated parts, joined."""
    parts = [p.strip() for p in content[content.rfind("\n") + 1 :].split(",")]
    return any(whole(", ".join(parts[-k:])) for k in range(1, min(4, len(parts)) + 1))


def _whole_name_test(
    evidence_names: Sequence[str], choices: Mapping[str, str] | None, names: NameIndex | None
) -> Callable[[str], bool]:
    """Whether a cut reply's last part is a whole name: one the evidence shows or the grammar offers; with
    neither (a method that showed no evidence), a KG entity's name."""
    from kgrag.linking.normalize import normalize

    shown = {normalize(n) for n in [*evidence_names, *(choices or {})]}
    if shown:
        return lambda part: normalize(part) in shown
    return lambda part: names is not None and bool(names.exact(part))


def answer_from_facts(
    method: Method,
    prompt_name: str,
    question: str,
    evidence: Sequence[Evidence],
    exclude: Sequence[str],
    layout: FactsLayout = "lines",
    fold_unnamed: bool = False,
    anchors: Sequence[int] = (),
    choose: bool = False,
    replies: list[str] | None = None,
    **values: str,
) -> list[str]:
    """Ask a prompt about ``evidence`` shown as ``facts``; answers are read against the evidence's entity
    names, ``exclude`` (the question's own entities) never standing alone (:func:`ask_for_answers`).

    ``choose``: the reply may only name entities the facts show, under a grammar (:func:`choice_grammar`), so
    every answer stands on the evidence (:func:`ask_for_answers`); for a model that enforces grammars
    (:func:`use_grammar`).

    ``layout``: "lines" (a numbered fact a line), "grouped" (facts sharing subject and relation on one line),
    "grouped_by_object" (and lone facts sharing relation and object on one line too) or "tree" (paths
    from ``anchors``, the topic entities, each shared prefix once); ``fold_unnamed``: grouped facts through an
    unnamed node read as one (:func:`~kgrag.retrieval.triples.facts_text`). A prompt that names the layout reads
    it from ``facts_intro``."""
    from kgrag.linking.answers import name_unnamed_answers
    from kgrag.retrieval.evidence_tree import TREE_LAYOUT, UNNAMED, UNNAMED_IS, answer_options, rooted_tree_text
    from kgrag.retrieval.triples import facts_text

    if layout == "tree":
        facts = rooted_tree_text(method.kg, evidence, anchors)
        arrows = '"A -[r]-> B": A r B; "A <-[r]- B": B r A'
        intro = f"Facts, as paths from the question's entities ({arrows}).{TREE_LAYOUT}"
    else:
        grouped, by_object = layout in ("grouped", "grouped_by_object"), layout == "grouped_by_object"
        facts = facts_text(evidence, grouped=grouped, by_object=by_object, fold_unnamed=fold_unnamed)
        intro = 'Facts (one per line, "subject relation object"):'
        if fold_unnamed and UNNAMED in facts:  # said as the tree layout says it
            intro = f'Facts (one per line, "subject relation object"; "{UNNAMED}" is an {UNNAMED_IS}):'
    answers = ask_for_answers(
        method,
        prompt_name,
        question=question,
        facts=facts,
        facts_intro=intro,
        evidence_names=evidence_entities(evidence),
        exclude=exclude,
        choices=answer_options(evidence) if choose else None,
        replies=replies,
        **values,
    )
    return name_unnamed_answers(answers, [ev.entities for ev in evidence], exclude)


def evidence_entities(evidence: Sequence[Evidence], *, ends_only: bool = False) -> list[str]:
    """Entity names of the evidence in rank order, each once (``ends_only``: the last entity of each item,
    i.e. where a path leads)."""
    names = (ev.entities[-1:] if ends_only else ev.entities for ev in evidence)
    return list(dict.fromkeys(n for group in names for n in group))
