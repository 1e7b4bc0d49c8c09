"""What one KG-Linker call wrote: entities, relation paths, a graph query and draft answers, parsed
defensively (tags under other names, a query outside its tag, FINISH among the entities)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgrag.linking.normalize import names_said, normalize
from kgrag.methods.byokg.context import Context
from kgrag.prompts.gbnf import literal
from kgrag.prompts.tags import parse_tags, split_items
from kgrag.retrieval.graph_query import extract_query

LINKER_TAGS = ("entities", "paths", "opencypher", "answers")
LINKER_ALIASES = {
    "cypher": "opencypher",
    "query": "opencypher",
    "open_cypher": "opencypher",
    "graph_query": "opencypher",
    "relation_paths": "paths",
    "relationship_paths": "paths",
    "answer": "answers",
    "draft_answers": "answers",
}


def linker_grammar(relations: Sequence[str], *, query: bool, max_hops: int = 4) -> str:
    """GBNF for KG-Linker's reply in the prompt's own layout: up to 6 entity lines, up to 3 relation paths of
    up to ``max_hops`` relations each, every relation one of the ``relations`` the prompt lists, the graph query
    (when ``query``) in up to 12 lines, and up to 5 draft answers.

    Unconstrained, the 1.5B model repeated a path line until the token cap in 16 of 60 KG-Linker calls on the
    WebQSP proxy ("languages_spoken_in -> human_language" 20 times over, ~8 s of writing each), and wrote
    entities or made-up relations into paths. A line of free text may not start with "<", so a section ends
    only at its closing tag.
    """
    names = sorted({r for r in relations if r.strip() and "\n" not in r})
    rules = [
        'root ::= "<entities>\\n" line{0,6} "</entities>\\n<paths>\\n" path{0,3} "</paths>\\n" '
        + ("query " if query else "")
        + '"<answers>\\n" line{0,5} "</answers>"',
        'line ::= [^\\n<] [^\\n]{0,150} "\\n"',
        f'path ::= rel (" -> " rel){{0,{max_hops - 1}}} "\\n"' if names else "path ::= line",
    ]
    if names:
        rules.append("rel ::= " + " | ".join(literal(n) for n in names))
    if query:
        rules.append('query ::= "<opencypher>\\n" line{0,12} "</opencypher>\\n"')
    return "\n".join(rules)


class Artifacts:
    """What one KG-Linker call wrote."""

    def __init__(self, text: str) -> None:
        parsed = parse_tags(text, LINKER_TAGS, aliases=LINKER_ALIASES)
        names = split_items(parsed["entities"])
        self.finish = any(n.strip().upper() == "FINISH" for n in names)
        self.entities = [n for n in names if n.strip().upper() != "FINISH"]
        self.paths = split_items(parsed["paths"])
        self.query = extract_query(parsed["opencypher"], text)
        self.answers = split_items(parsed["answers"])

    def drop_copied_examples(self, examples: Sequence[str], question: str, context: Context) -> list[str]:
        """Remove entities and drafts that only repeat an example entity of the schema; return them.

        Small models copy the schema's illustrations (``starred_actors (e.g. 2012 -> Chiwetel Ejiofor)``) into
        their drafts for unrelated questions; linked, such a name pulls shortest paths and agentic walks toward
        it and ends up as the answer.  A name counts as a copy when it is an example entity that neither the
        question nor the graph context gathered so far mentions; a real answer that happens to be an example is
        still found by the strategies that start at the question's entities."""
        said = {normalize(x) for x in names_said(question, examples)}
        known = {normalize(e) for ev in context.items for e in ev.entities}
        copies = {n for n in (normalize(x) for x in examples) if n and n not in said and n not in known}
        dropped = [x for x in self.entities + self.answers if normalize(x) in copies]
        self.entities = [x for x in self.entities if normalize(x) not in copies]
        self.answers = [x for x in self.answers if normalize(x) not in copies]
        return dropped

    def as_json(self) -> dict[str, Any]:
        return {
            "entities": self.entities,
            "paths": self.paths,
            "opencypher": self.query,
            "answers": self.answers,
            "finish": self.finish,
        }
