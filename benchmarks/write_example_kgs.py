"""Write examples/software, examples/pharmacy and examples/bookshelf: user-style KGs and their questions (#24).

Written on 2026-12-06 as KGs no method setting had been tuned on: fictional software packages with snake_case
relation names (``depends_on``, ``maintained_by``, ``works_for``), a fictional pharmacy formulary with plain
ones (``active ingredient``, ``may cause``, ``made by``) and, later that night, a fictional bookshelf with
camelCase ones (``writtenBy``, ``publishedBy``, ``wonAward``). Each question names the relation path that answers it,
and its gold answers are computed here by following that path from the question's entity, so the gold cannot
disagree with the triples. Re-running rewrites the same files.

    python benchmarks/write_example_kgs.py [OUT_DIR]   # default: examples/
"""

import csv
import json
import sys
from pathlib import Path

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 and __name__ == "__main__" else Path(__file__).parents[1] / "examples"


def follow(
    triples: list[tuple[str, str, str]], start: str, path: list[tuple[str, str]], exclude_start: bool = False
) -> list[str]:
    """The entities reached from ``start`` along ``path`` (relation, ">" forward or "<" backward).

    A plain loop over the triples rather than kgrag's graph code on purpose: the gold answers the methods are
    scored against must not come from the code being scored."""
    cur = {start}
    for rel, direction in path:
        nxt = set()
        for h, r, t in triples:
            if r != rel:
                continue
            if direction == ">" and h in cur:
                nxt.add(t)
            if direction == "<" and t in cur:
                nxt.add(h)
        cur = nxt
    if exclude_start:
        cur.discard(start)
    assert cur, (start, path)
    return sorted(cur)


def write(
    name: str,
    triples: list[tuple[str, str, str]],
    questions: list[tuple],
    header: tuple[str, str, str] = ("head", "relation", "tail"),
) -> None:
    """``OUT/name/kg.csv`` (with ``header``) and ``OUT/name/questions.jsonl`` (gold from :func:`follow`)."""
    d = OUT / name
    d.mkdir(parents=True, exist_ok=True)
    assert len(set(triples)) == len(triples), [t for t in triples if triples.count(t) > 1]
    with open(d / "kg.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(triples)
    with open(d / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q, start, path, group, *rest in questions:
            answers = follow(triples, start, path, exclude_start=bool(rest and rest[0]))
            fh.write(json.dumps({"question": q, "answers": answers, "group": group}, ensure_ascii=False) + "\n")
    print(name, len(triples), "triples", len({r for _, r, _ in triples}), "relations", len(questions), "questions")


# ------------------------------------------------------------------ software packages
pk = {  # package: (language, license, year, maintainers, dependencies)
    "Ferrite": ("Rust", "MIT", "2016", ["Bruno Lindqvist"], []),
    "Basalt": ("Rust", "Apache-2.0", "2018", ["Bruno Lindqvist", "Elif Yilmaz"], ["Ferrite"]),
    "Quillstack": ("Python", "BSD-3-Clause", "2015", ["Ada Okafor"], ["Tidepool", "Basalt"]),
    "Tidepool": ("Python", "MIT", "2012", ["Chen Wei"], []),
    "Lumen.js": ("TypeScript", "MIT", "2019", ["Dana Petrova"], ["Sparrow-UI"]),
    "Sparrow-UI": ("TypeScript", "MIT", "2017", ["Dana Petrova", "Hugo Almeida"], []),
    "Nimbus-DB": ("Go", "Apache-2.0", "2014", ["Farid Haddad"], ["Halyard"]),
    "Halyard": ("Go", "Apache-2.0", "2013", ["Grace Mensah"], []),
    "Corvid": ("C++", "GPL-3.0", "2011", ["Hugo Almeida"], []),
    "Pylon": ("Python", "Apache-2.0", "2020", ["Ada Okafor", "Chen Wei"], ["Tidepool", "Corvid"]),
    "Gantry": ("Go", "MIT", "2021", ["Grace Mensah"], ["Nimbus-DB", "Halyard"]),
    "Mosaic-ML": ("Python", "Apache-2.0", "2022", ["Elif Yilmaz"], ["Pylon", "Quillstack"]),
    "Orbitron": ("Rust", "GPL-3.0", "2023", ["Farid Haddad"], ["Basalt", "Ferrite"]),
    "Tessera": ("TypeScript", "BSD-3-Clause", "2020", ["Hugo Almeida"], ["Lumen.js"]),
}
people = {  # maintainer: (employer, home city)
    "Ada Okafor": ("Bluefin Analytics", "Lisbon"),
    "Bruno Lindqvist": ("Quay Robotics", "Tallinn"),
    "Chen Wei": ("Bluefin Analytics", "Toronto"),
    "Dana Petrova": ("Larchmont Systems", "Osaka"),
    "Elif Yilmaz": ("Saffron Health", "Nairobi"),
    "Farid Haddad": ("Tundra Logistics", "Toronto"),
    "Grace Mensah": ("Tundra Logistics", "Nairobi"),
    "Hugo Almeida": ("Larchmont Systems", "Lisbon"),
}
companies = {  # company: (headquarters, packages it uses)
    "Bluefin Analytics": ("Toronto", ["Quillstack", "Pylon", "Nimbus-DB"]),
    "Quay Robotics": ("Tallinn", ["Orbitron", "Corvid", "Basalt"]),
    "Larchmont Systems": ("Osaka", ["Lumen.js", "Tessera", "Gantry"]),
    "Saffron Health": ("Nairobi", ["Mosaic-ML", "Tidepool"]),
    "Tundra Logistics": ("Lisbon", ["Gantry", "Halyard", "Ferrite"]),
}
countries = {"Lisbon": "Portugal", "Toronto": "Canada", "Nairobi": "Kenya", "Osaka": "Japan", "Tallinn": "Estonia"}
T = []
for p, (lang, lic, year, mts, deps) in pk.items():
    T += [(p, "written_in", lang), (p, "license", lic), (p, "first_release_year", year)]
    T += [(p, "maintained_by", m) for m in mts] + [(p, "depends_on", d) for d in deps]
for m, (emp, city) in people.items():
    T += [(m, "works_for", emp), (m, "lives_in", city)]
for c, (hq, uses) in companies.items():
    T += [(c, "headquartered_in", hq)] + [(c, "uses", u) for u in uses]
T += [(c, "located_in", k) for c, k in countries.items()]
Q = [
    ("Which language is Ferrite written in?", "Ferrite", [("written_in", ">")], "1-hop"),
    ("Who maintains Tidepool?", "Tidepool", [("maintained_by", ">")], "1-hop"),
    ("What does Quillstack depend on?", "Quillstack", [("depends_on", ">")], "1-hop"),
    ("Under which license is Corvid released?", "Corvid", [("license", ">")], "1-hop"),
    ("Where is Quay Robotics headquartered?", "Quay Robotics", [("headquartered_in", ">")], "1-hop"),
    ("Which packages does Bluefin Analytics use?", "Bluefin Analytics", [("uses", ">")], "1-hop"),
    ("In which year was Pylon first released?", "Pylon", [("first_release_year", ">")], "1-hop"),
    ("Which packages depend on Ferrite?", "Ferrite", [("depends_on", "<")], "1-hop"),
    (
        "Which languages are Quillstack's dependencies written in?",
        "Quillstack",
        [("depends_on", ">"), ("written_in", ">")],
        "2-hop",
    ),
    (
        "Who maintains the packages that Gantry depends on?",
        "Gantry",
        [("depends_on", ">"), ("maintained_by", ">")],
        "2-hop",
    ),
    (
        "Which company does the maintainer of Corvid work for?",
        "Corvid",
        [("maintained_by", ">"), ("works_for", ">")],
        "2-hop",
    ),
    (
        "In which country is Larchmont Systems headquartered?",
        "Larchmont Systems",
        [("headquartered_in", ">"), ("located_in", ">")],
        "2-hop",
    ),
    (
        "Which packages are maintained by people who work for Tundra Logistics?",
        "Tundra Logistics",
        [("works_for", "<"), ("maintained_by", "<")],
        "2-hop",
    ),
    ("Where does the maintainer of Lumen.js live?", "Lumen.js", [("maintained_by", ">"), ("lives_in", ">")], "2-hop"),
    (
        "Under which licenses are the packages used by Saffron Health released?",
        "Saffron Health",
        [("uses", ">"), ("license", ">")],
        "2-hop",
    ),
    (
        "Which companies use a package that Elif Yilmaz maintains?",
        "Elif Yilmaz",
        [("maintained_by", "<"), ("uses", "<")],
        "2-hop",
    ),
    (
        "In which city is the employer of Orbitron's maintainer headquartered?",
        "Orbitron",
        [("maintained_by", ">"), ("works_for", ">"), ("headquartered_in", ">")],
        "3-hop",
    ),
    (
        "Who maintains the dependencies of the packages that Saffron Health uses?",
        "Saffron Health",
        [("uses", ">"), ("depends_on", ">"), ("maintained_by", ">")],
        "3-hop",
    ),
]

# ------------------------------------------------------------------ pharmacy formulary
drugs = {  # drug: (ingredient, class, maker, approved, treats, may cause)
    "Calvorin": ("zelpromide", "beta blocker", "Helix Pharma", "2004", ["hypertension"], ["dizziness", "fatigue"]),
    "Norvastin": ("zelpromide", "beta blocker", "Moravia Labs", "2011", ["hypertension", "angina"], ["fatigue"]),
    "Dexaprine": ("artenazole", "triptan", "Sunridge Therapeutics", "2009", ["migraine"], ["nausea", "dizziness"]),
    "Elvotrax": ("artenazole", "triptan", "Helix Pharma", "2016", ["migraine", "cluster headache"], ["nausea"]),
    "Glimara": ("brevoxin", "biguanide", "Ostrava BioWorks", "2007", ["type 2 diabetes"], ["nausea", "diarrhoea"]),
    "Hystazol": (
        "quintafen",
        "antihistamine",
        "Moravia Labs",
        "2001",
        ["hay fever", "eczema"],
        ["drowsiness", "dry mouth"],
    ),
    "Ivorel": ("morsiclate", "inhaled corticosteroid", "Sunridge Therapeutics", "2013", ["asthma"], ["hoarseness"]),
    "Jentamide": ("pelanorin", "bronchodilator", "Ostrava BioWorks", "2018", ["asthma"], ["tremor", "headache"]),
    "Kolpraxin": ("tavuline", "hypnotic", "Helix Pharma", "2019", ["insomnia"], ["drowsiness", "headache"]),
    "Lunivex": ("tavuline", "hypnotic", "Sunridge Therapeutics", "2021", ["insomnia"], ["dry mouth", "drowsiness"]),
    "Miradol": ("ferulast", "NSAID", "Moravia Labs", "1998", ["arthritis", "back pain"], ["heartburn", "rash"]),
    "Sedrafin": ("ferulast", "NSAID", "Ostrava BioWorks", "2006", ["back pain"], ["heartburn"]),
}
interactions = [("Miradol", "Calvorin"), ("Kolpraxin", "Hystazol"), ("Glimara", "Norvastin"), ("Jentamide", "Calvorin")]
makers = {
    "Helix Pharma": "Basel",
    "Moravia Labs": "Brno",
    "Sunridge Therapeutics": "San Diego",
    "Ostrava BioWorks": "Ostrava",
}
P = []
for d, (ing, cls, mk, yr, treats, causes) in drugs.items():
    P += [(d, "active ingredient", ing), (d, "drug class", cls), (d, "made by", mk), (d, "approved in", yr)]
    P += [(d, "treats", c) for c in treats] + [(d, "may cause", s) for s in causes]
P += [(a, "interacts with", b) for a, b in interactions]
P += [(m, "based in", c) for m, c in makers.items()]
PQ = [
    ("What does Calvorin treat?", "Calvorin", [("treats", ">")], "1-hop"),
    ("Which drugs treat migraine?", "migraine", [("treats", "<")], "1-hop"),
    ("Who makes Elvotrax?", "Elvotrax", [("made by", ">")], "1-hop"),
    ("What is the active ingredient of Glimara?", "Glimara", [("active ingredient", ">")], "1-hop"),
    ("What side effects can Hystazol cause?", "Hystazol", [("may cause", ">")], "1-hop"),
    ("Which drug class does Jentamide belong to?", "Jentamide", [("drug class", ">")], "1-hop"),
    ("In what year was Miradol approved?", "Miradol", [("approved in", ">")], "1-hop"),
    ("Which drugs does Moravia Labs make?", "Moravia Labs", [("made by", "<")], "1-hop"),
    (
        "What side effects can the drugs that treat insomnia cause?",
        "insomnia",
        [("treats", "<"), ("may cause", ">")],
        "2-hop",
    ),
    ("Where is the maker of Miradol based?", "Miradol", [("made by", ">"), ("based in", ">")], "2-hop"),
    (
        "Which drugs have the same active ingredient as Calvorin?",
        "Calvorin",
        [("active ingredient", ">"), ("active ingredient", "<")],
        "2-hop",
        True,
    ),
    (
        "Which conditions are treated by drugs made by Helix Pharma?",
        "Helix Pharma",
        [("made by", "<"), ("treats", ">")],
        "2-hop",
    ),
    ("Which companies make drugs that treat asthma?", "asthma", [("treats", "<"), ("made by", ">")], "2-hop"),
    (
        "What does the drug that interacts with Hystazol treat?",
        "Hystazol",
        [("interacts with", "<"), ("treats", ">")],
        "2-hop",
    ),
    (
        "Which drug class do the drugs that cause heartburn belong to?",
        "heartburn",
        [("may cause", "<"), ("drug class", ">")],
        "2-hop",
    ),
    (
        "What are the active ingredients of the drugs that Ostrava BioWorks makes?",
        "Ostrava BioWorks",
        [("made by", "<"), ("active ingredient", ">")],
        "2-hop",
    ),
    (
        "In which cities are the makers of the drugs that treat back pain based?",
        "back pain",
        [("treats", "<"), ("made by", ">"), ("based in", ">")],
        "3-hop",
    ),
    (
        "What side effects can drugs made by the company based in Basel cause?",
        "Basel",
        [("based in", "<"), ("made by", "<"), ("may cause", ">")],
        "3-hop",
    ),
]

# ------------------------------------------------------------------ a bookshelf, camelCase relations
books = {  # book: (author, publisher, genres, year, original language, translators, awards, series)
    "The Salt Orchard": (
        "Mirela Voss",
        "Harrowgate Press",
        ["literary fiction"],
        "2011",
        "German",
        ["Paul Keane"],
        ["Brannock Medal"],
        None,
    ),
    "Winter of Glass": (
        "Mirela Voss",
        "Harrowgate Press",
        ["literary fiction", "historical fiction"],
        "2015",
        "German",
        ["Paul Keane"],
        [],
        None,
    ),
    "A Ledger of Tides": (
        "Tomasz Brel",
        "Kestrel Books",
        ["historical fiction"],
        "2009",
        "Polish",
        ["Anna Frey"],
        ["Corvina Award"],
        "Tidewater Trilogy",
    ),
    "The Drowned Archive": (
        "Tomasz Brel",
        "Kestrel Books",
        ["historical fiction", "mystery"],
        "2012",
        "Polish",
        ["Anna Frey"],
        [],
        "Tidewater Trilogy",
    ),
    "Harbour of Ash": (
        "Tomasz Brel",
        "Kestrel Books",
        ["mystery"],
        "2016",
        "Polish",
        ["Anna Frey"],
        [],
        "Tidewater Trilogy",
    ),
    "Signal Lost": (
        "Ines Okoro",
        "Meridian House",
        ["science fiction"],
        "2018",
        "English",
        [],
        ["Halvard Prize"],
        None,
    ),
    "The Quiet Engine": (
        "Ines Okoro",
        "Meridian House",
        ["science fiction", "thriller"],
        "2021",
        "English",
        [],
        [],
        None,
    ),
    "Paper Lanterns": (
        "Kenji Arata",
        "Harrowgate Press",
        ["literary fiction"],
        "2007",
        "Japanese",
        ["Ruth Molloy"],
        ["Brannock Medal"],
        None,
    ),
    "Night Ferry to Oslo": (
        "Sigrid Holm",
        "Nordlys Forlag",
        ["thriller", "mystery"],
        "2014",
        "Norwegian",
        ["Ruth Molloy"],
        [],
        "Holm Case Files",
    ),
    "The Fjord Witness": (
        "Sigrid Holm",
        "Nordlys Forlag",
        ["thriller"],
        "2017",
        "Norwegian",
        ["Ruth Molloy"],
        ["Corvina Award"],
        "Holm Case Files",
    ),
    "Gardens Under Snow": ("Lucía Ferrán", "Meridian House", ["poetry"], "2010", "Spanish", ["Paul Keane"], [], None),
    "The Cartographer's Daughter": (
        "Lucía Ferrán",
        "Kestrel Books",
        ["historical fiction"],
        "2019",
        "Spanish",
        ["Anna Frey"],
        ["Halvard Prize"],
        None,
    ),
    "Copper Sky": (
        "Daniel Achterberg",
        "Nordlys Forlag",
        ["science fiction"],
        "2020",
        "Dutch",
        ["Ruth Molloy"],
        [],
        None,
    ),
}
born = {
    "Mirela Voss": "Graz",
    "Tomasz Brel": "Kraków",
    "Ines Okoro": "Lagos",
    "Kenji Arata": "Kyoto",
    "Sigrid Holm": "Bergen",
    "Lucía Ferrán": "Valencia",
    "Daniel Achterberg": "Utrecht",
}
based = {
    "Harrowgate Press": "Edinburgh",
    "Kestrel Books": "London",
    "Meridian House": "Boston",
    "Nordlys Forlag": "Bergen",
}
in_country = {
    "Graz": "Austria",
    "Kraków": "Poland",
    "Lagos": "Nigeria",
    "Kyoto": "Japan",
    "Bergen": "Norway",
    "Valencia": "Spain",
    "Utrecht": "Netherlands",
    "Edinburgh": "United Kingdom",
    "London": "United Kingdom",
    "Boston": "United States",
}
B = []
for b, (author, publisher, genres, year, language, translators, awards, series) in books.items():
    B += [(b, "writtenBy", author), (b, "publishedBy", publisher), (b, "publicationYear", year)]
    B += [(b, "originalLanguage", language)] + [(b, "hasGenre", g) for g in genres]
    B += [(b, "translatedBy", t) for t in translators] + [(b, "wonAward", a) for a in awards]
    B += [(b, "partOfSeries", series)] if series else []
B += [(a, "bornIn", c) for a, c in born.items()] + [(p, "basedIn", c) for p, c in based.items()]
B += [(c, "inCountry", k) for c, k in in_country.items()]
BQ = [
    ("Who wrote The Quiet Engine?", "The Quiet Engine", [("writtenBy", ">")], "1-hop"),
    ("Which publisher published Paper Lanterns?", "Paper Lanterns", [("publishedBy", ">")], "1-hop"),
    ("Which genres does Night Ferry to Oslo belong to?", "Night Ferry to Oslo", [("hasGenre", ">")], "1-hop"),
    ("In what year was Copper Sky published?", "Copper Sky", [("publicationYear", ">")], "1-hop"),
    ("Who translated The Fjord Witness?", "The Fjord Witness", [("translatedBy", ">")], "1-hop"),
    ("Which books belong to the Tidewater Trilogy?", "Tidewater Trilogy", [("partOfSeries", "<")], "1-hop"),
    ("Which books won the Brannock Medal?", "Brannock Medal", [("wonAward", "<")], "1-hop"),
    ("Where was Sigrid Holm born?", "Sigrid Holm", [("bornIn", ">")], "1-hop"),
    (
        "What other books did the author of Harbour of Ash write?",
        "Harbour of Ash",
        [("writtenBy", ">"), ("writtenBy", "<")],
        "2-hop",
        True,
    ),
    (
        "In which city is the publisher of Signal Lost based?",
        "Signal Lost",
        [("publishedBy", ">"), ("basedIn", ">")],
        "2-hop",
    ),
    (
        "Who wrote the books that Anna Frey translated?",
        "Anna Frey",
        [("translatedBy", "<"), ("writtenBy", ">")],
        "2-hop",
    ),
    (
        "Which awards have books published by Kestrel Books won?",
        "Kestrel Books",
        [("publishedBy", "<"), ("wonAward", ">")],
        "2-hop",
    ),
    ("Where was the author of Copper Sky born?", "Copper Sky", [("writtenBy", ">"), ("bornIn", ">")], "2-hop"),
    ("Which genres do Lucía Ferrán's books have?", "Lucía Ferrán", [("writtenBy", "<"), ("hasGenre", ">")], "2-hop"),
    (
        "Which publishers publish books originally written in Norwegian?",
        "Norwegian",
        [("originalLanguage", "<"), ("publishedBy", ">")],
        "2-hop",
    ),
    (
        "In which country was the author of Winter of Glass born?",
        "Winter of Glass",
        [("writtenBy", ">"), ("bornIn", ">"), ("inCountry", ">")],
        "3-hop",
    ),
    (
        "Who translated the books published by the publisher based in Bergen?",
        "Bergen",
        [("basedIn", "<"), ("publishedBy", "<"), ("translatedBy", ">")],
        "3-hop",
    ),
    (
        "Which authors have written books for the publisher of The Salt Orchard?",
        "The Salt Orchard",
        [("publishedBy", ">"), ("publishedBy", "<"), ("writtenBy", ">")],
        "3-hop",
    ),
]

if __name__ == "__main__":
    write("software", T, Q)
    write("pharmacy", P, PQ)
    write("bookshelf", B, BQ)
