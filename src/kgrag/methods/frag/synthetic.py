"""Questions written from a KG's relation names alone, for training FRAG's classifiers without labelled data.

`kgrag adapt` samples relation patterns around real entities and needs a question for each one that a person
*could* have asked. Nothing here knows any particular KG: relation names are humanised by generic rules
(``film.film.genre`` → "genre" of a "film", ``directed_by`` → "directed by", ``castMember`` → "cast member"),
each relation gets other words for it (the nearest words under the static embedder — "cast member" →
"actors" — and, with an LLM, its own phrasings: :class:`RelationLexicon`), and several template families are
mixed per hop so the classifiers learn the *shape* of 1-, 2- and 3-hop questions (how relations nest:
"the genre of the things whose director is [X]") rather than one fixed string. The classifiers read word
uni/bi-grams and ignore words they never saw, so what matters is that relation words, connecting words and
question words vary the way they do in real questions; the stilted ones ("the one [X] is directed by") cost
little. The topic's name stays in ``[brackets]``, so it is masked exactly like the names in real questions.

Templates use ``{x}`` for the slot a hop starts from, ``{w}``/``{ws}`` for the relation's words (singular,
plural) and ``{things}`` for a plural noun naming the subjects.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kgrag.graph.algorithms import reversed_relation

SLOT = "{x}"
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[_\-/:#]+")
# leading auxiliaries that make a relation name a statement ("has_genre", "is_part_of"): the rest is the noun
_AUX = ("has ", "have ", "had ", "is ", "was ", "are ", "were ", "in ")
# generic words for the subjects of an inverse hop when nothing names their type
_THINGS = ("things", "ones", "entities", "items")
_WH = ("what", "which", "who")
# generic words for the type of the topic itself ("the film [X]"): people name what they ask about
_TOPIC_TYPES = ("one", "entity", "item", "thing", "topic")
# relation words that name a point in time: "when" questions
_TIME_WORDS = re.compile(r"\b(date|dates|year|years|time|day|when|period|founded|born|died)\b")

# noun relations ("director"): forward = from the subject to the object, inverse = back
_NOUN_FORWARD_PHRASES = ("the {w} of {x}", "the {ws} of {x}", "the {w} for {x}", "the {ws} in {x}")
_NOUN_FORWARD_QUESTIONS = (
    "what is the {w} of {x}",
    "who is the {w} of {x}",
    "what are the {ws} of {x}",
    "what {w} is {x}",
    "what {w} does {x} have",
    "which {ws} does {x} have",
    "{x} has which {w}",
    "{x} has what {ws}",
    "the {w} of {x} is who",
    "name the {w} of {x}",
    "what is the {w} for {x}",
    "what {w} is {x} in",
    "who are the {ws} in {x}",
)
_TIME_FORWARD_QUESTIONS = ("when was {x}", "when is the {w} of {x}", "in what year was {x}", "when did {x} happen")
_NOUN_INVERSE_PHRASES = (
    "the {things} whose {w} is {x}",
    "the {things} with {x} as {w}",
    "the {things} that have {w} {x}",
    "the {things} {x} is the {w} of",
    "{things} with {w} {x}",
    "the {things} {x} is a {w} in",
    "the {things} that {x} was a {w} in",
)
_NOUN_INVERSE_QUESTIONS = (
    "which {things} have {x} as {w}",
    "what is {x} the {w} of",
    "{x} is the {w} of which {things}",
    "which {things} was {x} the {w} of",
    "what {things} have {w} {x}",
    "what {things} is {x} the {w} for",
    "list the {things} whose {w} is {x}",
    "which {things} was {x} a {w} in",
    "what {things} is {x} a {w} in",
)
# agentive relations ("directed by"): the object does the subject
_AGENT_FORWARD_PHRASES = ("the one {x} is {w}", "whoever {x} was {w}")
_AGENT_FORWARD_QUESTIONS = ("who is {x} {w}", "{x} is {w} who", "{x} was {w} whom", "what was {x} {w}")
_AGENT_INVERSE_PHRASES = ("the {things} {w} {x}", "the {things} that were {w} {x}")
_AGENT_INVERSE_QUESTIONS = ("which {things} were {w} {x}", "what was {w} {x}", "what {things} are {w} {x}")
# r then r_inv: the other subjects that share an object with {x}
_SHARED_PHRASES = (
    "the {things} that share a {w} with {x}",
    "the {things} with the same {w} as {x}",
    "other {things} sharing {ws} with {x}",
    "the {things} whose {w} is also the {w} of {x}",
)
_SHARED_QUESTIONS = (
    "which {things} share a {w} with {x}",
    "what else has the same {w} as {x}",
    "which {things} have the same {ws} as {x}",
    "what other {things} share {ws} with {x}",
    "which {things} have the same {w} of {x}",
    "the {w} of {x} is also the {w} of which {things}",
    "what else is the {w} of {x} the {w} of",
)
_AGENT_SHARED_PHRASES = ("the {things} also {w} the one {x} is {w}", "other {things} {w} the same one as {x}")
# relations with a verb (the object does the subject: "director" → directed)
_VERB_FORWARD_PHRASES = ("the one who {past} {x}", "the people who {past} {x}", "whoever {past} {x}")
_VERB_FORWARD_QUESTIONS = ("who {past} {x}", "{x} was {pp} by who", "who was {x} {pp} by", "{x} was {pp} by whom")
_VERB_INVERSE_PHRASES = ("the {things} {pp} by {x}", "the {things} {x} {past}", "the {things} that {x} {past}")
_VERB_INVERSE_QUESTIONS = (
    "what did {x} {base}",
    "which {things} did {x} {base}",
    "which {things} were {pp} by {x}",
    "what {things} has {x} {pp}",
    "{x} {past} which {things}",
    "what was {pp} by {x}",
)
_VERB_SHARED_PHRASES = ("the {things} {pp} by the one who {past} {x}", "other {things} {pp} by whoever {past} {x}")
_VERB_SHARED_QUESTIONS = (
    "the {w} of {x} also {past} which {things}",
    "what else did the {w} of {x} {base}",
    "which other {things} were {pp} by the {w} of {x}",
)
# r_inv then r: the others that hold the same relation to a subject as {x} ("who starred together with")
_CO_PHRASES = (
    "the other {ws} of the {things} {x} is the {w} of",
    "those who share {things} with {x} as {w}",
    "the {ws} of the {things} whose {w} is {x}",
)
_VERB_CO_PHRASES = ("the people who {past} {things} together with {x}", "the others who {past} the {things} {x} {past}")
_WRAPPERS = ("{wh} is {np}", "{wh} are {np}", "{np}", "name {np}", "list {np}", "tell me {np}", "{np} is {wh}")


@dataclass(frozen=True)
class RelationPhrase:
    """How a relation reads in English: ``words`` ("director", "place of birth", "directed by").

    ``agentive`` relations end in "by" (the object does the subject: "directed by"); they read as a verb
    phrase, the others as a noun. ``subject_type`` is the type a dotted id names ("film" in
    ``film.film.genre``), empty when the name says nothing about it.
    """

    words: str
    agentive: bool = False
    subject_type: str = ""


def humanise(name: str) -> RelationPhrase:
    """Read a relation id as English words.

    >>> humanise("people.person.place_of_birth")
    RelationPhrase(words='place of birth', agentive=False, subject_type='person')
    >>> humanise("directed_by").agentive
    True
    """
    subject_type = ""
    text = name.strip()
    if "." in text and " " not in text:  # namespaced ids: domain.type.property
        parts = [p for p in text.split(".") if p]
        if len(parts) >= 2:
            subject_type = _words(parts[-2])
        text = parts[-1] if parts else text
    words = _words(text)
    words = re.sub(r"(\w) s$", r"\1s", words)  # "spouse_s" → "spouses"
    for aux in _AUX:
        if words.startswith(aux) and len(words) > len(aux):
            words = words[len(aux) :]
            break
    if words.endswith(" of") and len(words) > 3:
        words = words[:-3]
    agentive = words.endswith(" by") and len(words) > 3
    return RelationPhrase(words or name, agentive, subject_type)


def _words(text: str) -> str:
    text = _CAMEL.sub(" ", text)
    return " ".join(_SEPARATORS.sub(" ", text).lower().split())


def plural(noun: str) -> str:
    """Naive English plural of the last word ("genre" → "genres", "country" → "countries")."""
    if not noun or noun.endswith("s"):
        return noun
    if re.search(r"[^aeiou]y$", noun):
        return noun[:-1] + "ies"
    if re.search(r"(x|ch|sh|z)$", noun):
        return noun + "es"
    return noun + "s"


# agent nouns whose verb is irregular: noun → (past, past participle, base)
_IRREGULAR = {
    "writer": ("wrote", "written", "write"),
    "maker": ("made", "made", "make"),
    "builder": ("built", "built", "build"),
    "leader": ("led", "led", "lead"),
    "winner": ("won", "won", "win"),
    "singer": ("sang", "sung", "sing"),
    "speaker": ("spoke", "spoken", "speak"),
    "seller": ("sold", "sold", "sell"),
    "buyer": ("bought", "bought", "buy"),
    "teacher": ("taught", "taught", "teach"),
    "holder": ("held", "held", "hold"),
    "driver": ("drove", "driven", "drive"),
    "giver": ("gave", "given", "give"),
    "drawer": ("drew", "drawn", "draw"),
    "thinker": ("thought", "thought", "think"),
}


def verb_forms(phrase: RelationPhrase, vocabulary: frozenset[str] | set[str]) -> tuple[str, str, str] | None:
    """(past, past participle, base) of the verb a relation implies, or None.

    The object of a relation named by an agent noun does the subject ("director": the director *directed*
    the film; "employer" *employed* the person), as does the object of an agentive name ("directed by").
    Regular verbs come from the noun ("creator" → "create"), checked against ``vocabulary`` (a word list) so
    that "member" does not become "membed"; a handful of irregular ones are listed.

    >>> verb_forms(humanise("director"), {"direct", "directed"})
    ('directed', 'directed', 'direct')
    >>> verb_forms(humanise("screenwriter"), set())
    ('wrote', 'written', 'write')
    """
    words = phrase.words.split()
    if phrase.agentive:
        pp = words[-2] if len(words) >= 2 else ""
        base = pp[:-2] if pp.endswith("ed") and pp[:-2] in vocabulary else pp[:-1] if pp.endswith("ed") else ""
        return (pp, pp, base) if pp and base in vocabulary else None
    last = words[-1] if words else ""
    for noun, forms in _IRREGULAR.items():
        if last.endswith(noun):
            return forms
    match = re.fullmatch(r"([a-z]{3,}?)(?:or|er)", last)
    if not match:
        return None
    stem = match.group(1)
    for base in (stem, stem + "e"):
        past = base + ("d" if base.endswith("e") else "ed")
        if base in vocabulary and past in vocabulary:
            return past, past, base
    return None


@dataclass
class RelationLexicon:
    """Every way the question writer may say one relation.

    ``synonyms`` are other words for it; ``subject_types`` plural nouns for its subjects ("films"); ``verb``
    the verb its object does (:func:`verb_forms`). The four
    template lists are optional phrasings with the slot ``{x}`` (written by an LLM): questions asking for the
    object of ``{x}`` ("who directed {x}") or for the subjects that have ``{x}`` as object ("which films did
    {x} direct"), and the same as noun phrases ("the director of {x}", "the films {x} directed") for nesting.
    """

    phrase: RelationPhrase
    synonyms: list[str] = field(default_factory=list)
    subject_types: list[str] = field(default_factory=list)
    verb: tuple[str, str, str] | None = None  # (past, participle, base): the object does the subject
    forward_questions: list[str] = field(default_factory=list)
    forward_phrases: list[str] = field(default_factory=list)
    inverse_questions: list[str] = field(default_factory=list)
    inverse_phrases: list[str] = field(default_factory=list)


def nearest_words(
    phrases: Sequence[RelationPhrase],
    words: Sequence[str],
    word_vectors: np.ndarray,
    phrase_vectors: np.ndarray,
    *,
    per_relation: int = 6,
    min_similarity: float = 0.6,
    margin: float = 0.05,
) -> list[list[str]]:
    """Other words for each relation: the vocabulary words nearest to its phrase (unit vectors, cosine at least
    ``min_similarity``) that are nearer to it than to any other relation of the KG by ``margin`` — "directors"
    is a word for "director" only when the KG has no "co-director" it would fit as well.

    ``word_vectors`` (n_words, d) and ``phrase_vectors`` (n_relations, d) are L2-normalised.
    """
    out: list[list[str]] = [[] for _ in phrases]
    if not len(words) or not len(phrases):
        return out
    own = [set(p.words.split()) for p in phrases]
    sims = word_vectors @ phrase_vectors.T  # (n_words, n_relations)
    best = np.argmax(sims, axis=1)
    top = sims[np.arange(len(words)), best]
    second = np.partition(sims, -2, axis=1)[:, -2] if sims.shape[1] > 1 else np.full(len(words), -1.0)
    ok = (top >= min_similarity) & (top - second >= margin)
    for i in np.flatnonzero(ok)[np.argsort(-top[ok], kind="stable")]:
        r = int(best[i])
        word = words[i]
        if len(word) >= 3 and word not in own[r] and len(out[r]) < per_relation:
            out[r].append(word)
    return out


def is_held_out(template: str) -> bool:
    """Whether a template belongs to the held-out quarter (stable: a checksum of its text)."""
    return zlib.crc32(template.encode("utf-8")) % 4 == 0


class QuestionWriter:
    """Writes a question for a directed relation pattern from a named topic entity.

    ``lexicons[r]`` describes relation ``r``; a directed id ``r + len(lexicons)`` is the inverse of ``r``
    (kgrag's virtual inverse). ``rng`` picks the template family and the words of each hop.
    """

    def __init__(self, lexicons: Sequence[RelationLexicon], rng: np.random.Generator, templates: str = "all") -> None:
        self.lexicons = list(lexicons)
        self.num_relations = len(self.lexicons)
        self.rng = rng
        if templates not in ("all", "training", "held-out"):
            raise ValueError(f"templates must be 'all', 'training' or 'held-out', not {templates!r}")
        self.templates = templates

    # ------------------------------------------------------------------ pieces
    def _pick(self, options: Sequence[str]) -> str:
        return options[int(self.rng.integers(len(options)))]

    def _template(self, options: Sequence[str]) -> str:
        """A template of the writer's share: about one in four of every list is held out of training, so that
        questions written with the others measure how a model does on wordings it never saw."""
        if self.templates != "all":
            held_out = self.templates == "held-out"
            share = [t for t in options if is_held_out(t) == held_out]
            options = share or options
        return self._pick(options)

    def _fill(self, template: str, x: str, lex: RelationLexicon) -> str:
        """Put words into a template; the slot last, so a name in it is never taken for a placeholder."""
        words = lex.phrase.words
        if lex.synonyms and self.rng.random() < 0.5:
            words = self._pick(lex.synonyms)
        if lex.subject_types and self.rng.random() < 0.7:
            things = self._pick(lex.subject_types)
        elif lex.phrase.subject_type and self.rng.random() < 0.7:
            things = plural(lex.phrase.subject_type)
        else:
            things = self._pick(_THINGS)
        text = template.replace("{ws}", plural(words)).replace("{w}", words).replace("{things}", things)
        if lex.verb is not None:
            past, pp, base = lex.verb
            text = text.replace("{past}", past).replace("{pp}", pp).replace("{base}", base)
        return text.replace(SLOT, x)

    def _choose(self, own: Sequence[str], generic: Sequence[str]) -> str:
        """An LLM-written template half of the time when the relation has them, else a generic one."""
        if own and self.rng.random() < 0.5:
            return self._template(own)
        return self._template(generic)

    def _hop(self, x: str, directed: int, *, question: bool, bare: bool) -> str:
        """Follow ``directed`` from ``x``: a noun phrase, or with ``question`` a question asking for its ends."""
        lex = self.lexicons[directed % self.num_relations]
        inverse = directed >= self.num_relations
        agent = lex.phrase.agentive
        if lex.verb is not None and self.rng.random() < 0.5:
            if inverse:
                generic = _VERB_INVERSE_QUESTIONS if question else _VERB_INVERSE_PHRASES
            else:
                generic = _VERB_FORWARD_QUESTIONS if question else _VERB_FORWARD_PHRASES
            return self._fill(self._template(generic), x, lex)
        if not inverse:
            own = lex.forward_questions if question else lex.forward_phrases
            if question:
                generic = _AGENT_FORWARD_QUESTIONS if agent else _NOUN_FORWARD_QUESTIONS
                if _TIME_WORDS.search(lex.phrase.words):
                    generic = (*generic, *_TIME_FORWARD_QUESTIONS)
            else:
                generic = _AGENT_FORWARD_PHRASES if agent else _NOUN_FORWARD_PHRASES
                if bare and not agent:
                    generic = (*generic, "{x}'s {w}", "the {x} {w}")
        else:
            own = lex.inverse_questions if question else lex.inverse_phrases
            if question:
                generic = _AGENT_INVERSE_QUESTIONS if agent else _NOUN_INVERSE_QUESTIONS
            else:
                generic = _AGENT_INVERSE_PHRASES if agent else _NOUN_INVERSE_PHRASES
        return self._fill(self._choose(own, generic), x, lex)

    def _shared(self, x: str, directed: int, *, question: bool) -> str:
        """``r`` then ``r_inv`` (``directed`` < R): the other subjects sharing an object with ``x`` ("... share a
        director with"); ``r_inv`` then ``r``: the others holding ``r`` to a subject of ``x`` ("co-stars")."""
        lex = self.lexicons[directed % self.num_relations]
        verb = lex.verb is not None and self.rng.random() < 0.5
        if directed >= self.num_relations:
            generic = _VERB_CO_PHRASES if verb else _CO_PHRASES
        elif verb:
            generic = _VERB_SHARED_QUESTIONS if question else _VERB_SHARED_PHRASES
        elif lex.phrase.agentive:
            generic = _AGENT_SHARED_PHRASES
        else:
            generic = _SHARED_QUESTIONS if question else _SHARED_PHRASES
        return self._fill(self._template(generic), x, lex)

    def _is_shared(self, pattern: Sequence[int], i: int) -> bool:
        """Hops ``i`` and ``i + 1`` are one relation there and back (``r > r_inv`` or ``r_inv > r``)."""
        return i + 1 < len(pattern) and pattern[i + 1] == reversed_relation(pattern[i], self.num_relations)

    # ------------------------------------------------------------------ questions
    def write(self, topic: str, pattern: Sequence[int], unnamed: Sequence[bool] = ()) -> str:
        """One question asking for the entities ``pattern`` (directed relation ids) reaches from ``topic``.

        ``unnamed[i]`` says the entities after hop ``i`` have no names (intermediate nodes such as Freebase's
        CVTs, "m.05hqqz6"): people do not mention them, so the hops on either side are worded as one relation
        ("who is the spouse of [X]" for spouse_s > spouse), named by either of the two.

        >>> lexicons = [RelationLexicon(humanise(r)) for r in ("director", "genre")]
        >>> "[Heat]" in QuestionWriter(lexicons, np.random.default_rng(0)).write("Heat", [0, 2, 1])
        True
        """
        hops = [int(p) for p in pattern]
        i = 0
        while i < len(unnamed) and i + 1 < len(hops):
            if unnamed[i]:  # one worded relation for hops i and i + 1
                keep = hops[i] if self.rng.random() < 0.5 else hops[i + 1]
                hops[i : i + 2] = [keep]
                unnamed = [*unnamed[:i], *unnamed[i + 1 :]]
            else:
                i += 1
        x, i = f"[{topic}]", 0
        if self.rng.random() < 0.3:  # "the film [Heat]": the topic's type named before it
            first = self.lexicons[hops[0] % self.num_relations].phrase
            typed = first.subject_type if first.subject_type and hops[0] < self.num_relations else ""
            x = f"the {typed or self._pick(_TOPIC_TYPES)} {x}"
        ask_last = self.rng.random() < 0.6  # the last hop as a question, else a noun phrase in a wrapper
        while i < len(hops):
            shared = self._is_shared(hops, i) and self.rng.random() < 0.6
            step = 2 if shared else 1
            last = i + step == len(hops)
            question = last and ask_last
            if shared:
                x = self._shared(x, hops[i], question=question)
            else:
                x = self._hop(x, hops[i], question=question, bare=i == 0)
            i += step
        if not ask_last:
            x = self._template(_WRAPPERS).replace("{wh}", self._pick(_WH)).replace("{np}", x)
        return re.sub(r"\bthe the\b", "the", x)
