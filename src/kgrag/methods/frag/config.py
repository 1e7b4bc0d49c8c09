"""FRAG's settings, with the paper's defaults and, where kgrag chose a value, the measurement that chose it."""

from __future__ import annotations

from typing import Annotated, Literal

from kgrag.methods.base import GrammarSetting, MethodConfig
from kgrag.methods.settings import ClientRange, ModelSetting, PathSetting


class FragConfig(MethodConfig):
    # (MethodConfig's) 0.5 chosen on frag's dev runs, the same replies re-read (WebQSP proxy first 100, renamed
    # MetaQA seeded 30 per hop, five user-style KGs): F1 +34 / -0 questions, Hit@1 unchanged by construction
    # (0.6: +39 / -1, 0.7: +46 / -6) (benchmarks/results/answer_spread.json)
    answer_spread: Annotated[float | None, ClientRange(0, 1)] = 0.5
    # "auto": the models `kgrag adapt` trained for this KG, else the shipped ones when this KG is the one they
    # were trained on (the MetaQA demo KB), else none; "builtin": the shipped ones on any KG; a .npz path; "none"
    router: PathSetting = "auto"
    patterns: PathSetting = "auto"
    hops: Annotated[int | None, ClientRange(1, 4)] = None  # fix the hop count instead of asking the router
    # path length searched when there is no router: the alignment score (``zero_shot_scoring``) picks the
    # length, so the search can reach 3-hop answers without drowning 1-hop questions in longer patterns
    zero_shot_hops: Annotated[int, ClientRange(1, 4)] = 3
    delta: Annotated[int, ClientRange(0, 4)] = 2  # simple if hops <= delta
    complex_paths: Literal["patterns", "shortest"] = "patterns"  # "shortest": the paper's choice for complex ones
    complex_subgraph_hops: Annotated[int, ClientRange(1, 4)] = 4  # k-hop ball with complex_paths="shortest"
    damping: Annotated[float, ClientRange(0, 0.99)] = 0.8  # PPR needs < 1
    ppr_max_iter: Annotated[int, ClientRange(1, 1000)] = 1000
    ppr_tol: Annotated[float, ClientRange(1e-8, 1)] = 1e-4  # PPR only breaks ties between endpoints of one pattern
    top_nodes: Annotated[int, ClientRange(1, 5000)] = 2000
    top_relations: Annotated[int, ClientRange(1, 200)] = 64
    # without a router the search goes 3 hops deep, whose subgraph holds many more relations on a big KG; only
    # hops from ``zero_shot_pruned_from`` on are limited to them: the first two keep every relation, as a 2-hop
    # search without pruning does, so pruning cannot drop the relation of a short answer (UN -> headquarters ->
    # city). WebQSP proxy dev, all 784 q: pruning every hop 0.791 keeping 128; pruning the third only 0.798
    # keeping 64 or 128 (64 is faster), 0.798 keeping 256
    zero_shot_relations: Annotated[int, ClientRange(1, 400)] = 64
    zero_shot_pruned_from: Annotated[int, ClientRange(1, 4)] = 3
    top_paths: Annotated[int, ClientRange(1, 100)] = 32
    # without a router the right length is open and the ranking less sure: spread wider, within a triple budget
    # (WebQSP proxy dev, 200 q: answer recall 0.75 with 32 paths, 0.80 with 60). A 3-hop answer costs up to
    # three triples, and "the films that share actors with X are directed by who" has forty of them: retrieval
    # only, renamed MetaQA dev 300/hop 1.000 / 0.981 / 0.936 with 60 triples, 1.000 / 0.982 / 0.960 with 80;
    # WebQSP proxy dev 784 q 0.801 -> 0.808 at 41 -> 45 triples a question on average
    zero_shot_paths: Annotated[int, ClientRange(1, 100)] = 60
    zero_shot_triples: Annotated[int, ClientRange(1, 300)] = 80
    # ... of which the answer call reads the paths chosen the same way within these smaller budgets (None: all
    # that were retrieved); the answer's evidence is what it read. 30 / 30, first 100 WebQSP proxy dev q: Hit@1
    # 0.69 vs 0.68, 5.9 vs 9.3 s median, 265 vs 455 prompt tokens read; renamed MetaQA first 30 per hop: 0.80 /
    # 0.77 / 0.77 vs 0.87 / 0.80 / 0.77, so not the default. (Showing no path longer than the best-ranked one
    # gave 0.93 / 0.47 / 0.53 there: the best-ranked pattern of a 2- or 3-hop question is often a short one.)
    answer_paths: Annotated[int | None, ClientRange(1, 100)] = None
    answer_triples: Annotated[int | None, ClientRange(1, 300)] = None
    # ... and only the patterns scoring within answer_margin of the best one (None: all). 0.1 keeps the answer
    # call's answer recall (renamed MetaQA 100/hop 1.000 / 0.992 / 0.954 either way, WebQSP proxy 300 q 0.812 ->
    # 0.805) with 9 / 24 / 10% and 25% fewer triples, ~65% fewer on the user-style KGs; end to end (dev, first 15
    # per hop / 15 each / first 100): renamed MetaQA 0.82 -> 0.80, university / family / catalogue 0.87 / 0.87 /
    # 0.80 -> 0.93 / 0.80 / 0.93 at 460 -> 295 prompt tokens, WebQSP proxy 0.67 either way at 599 -> 415
    answer_margin: Annotated[float | None, ClientRange(0, 10)] = 0.1
    # ... and no pattern that extends a pattern taken and scores more than extension_margin below it (None: no
    # such rule) when it would list more than extension_ends entities: the scorer found its extra hops unasked
    # for, and a list past the answer draws a small model away ("what films does X appear in" -> the films
    # sharing a genre with X's film). Not the default: paired on the same dev questions, 0 and 3 give renamed
    # MetaQA first 30 per hop 0.80 / 0.87 / 0.73 -> 0.87 / 0.87 / 0.70 at 546 -> 360 prompt tokens (1-hop), the
    # WebQSP proxy's first 100 0.70 either way, university / family / catalogue 0.87 / 0.80 / 0.93 -> 0.93 /
    # 0.73 / 0.93; with grounding="score" renamed MetaQA gets 0.90 / 0.93 / 0.83 but family 0.67 and the proxy
    # 0.68 (benchmarks/results/frag_extensions.json)
    extension_margin: Annotated[float | None, ClientRange(0, 10)] = None
    extension_ends: Annotated[int, ClientRange(0, 1000)] = 0
    # ... and no pattern takes more than this share of the paths still free, so one pattern with thousands of
    # endpoints (the films of a genre) cannot crowd out the next (renamed MetaQA dev, 300/hop: answer recall
    # 0.967 / 0.943 / 0.902 with all of it, 0.992 / 0.963 / 0.902 with 0.7; WebQSP proxy 0.808 -> 0.810)
    zero_shot_pattern_share: Annotated[float, ClientRange(0.01, 1)] = 0.7
    # entities with more edges are not walked through (topics always are); None: from the KG's degrees
    hub_degree: Annotated[int | None, ClientRange(1, 100_000)] = None
    # ... nor along a relation they have more than hub_fanout edges of (None: no such limit): "Actor" joins 90
    # people by profession on the WebQSP proxy, and "who is X's mom" then read their parents. Not the default:
    # 30, paired on dev, renamed MetaQA first 30 per hop 0.80 / 0.87 / 0.73 -> 0.83 / 0.90 / 0.70 at 546 / 472 /
    # 815 -> 516 / 369 / 663 prompt tokens, WebQSP proxy first 100 0.70 -> 0.69, user-style KGs unchanged (no
    # entity there has 30 edges); with the trained MetaQA scorer 3-hop recall 0.964 -> 0.917
    # (benchmarks/results/frag_hub_fanout.json)
    hub_fanout: Annotated[int | None, ClientRange(1, 100_000)] = None
    classifier_weight: Annotated[float, ClientRange(0, 10)] = 1.0
    embedding_weight: Annotated[float, ClientRange(0, 10)] = 0.3
    length_bonus: Annotated[float, ClientRange(0, 10)] = 0.1  # patterns exactly as long as the predicted hop count
    # relation/pattern similarity; "auto": static MiniLM next to trained models (what the shipped pattern scorer
    # was measured with on MetaQA), MiniLM without them (zero-shot answer recall on renamed MetaQA and the
    # WebQSP proxy: +0.04 / +0.04, see docs/DESIGN.md)
    embedder: ModelSetting = "auto"
    # zero-shot pattern score: "align" (each relation the pattern mentions aligned to its own span of the
    # question, less a cost per mention: methods/frag/alignment.py) or "mean" (mean similarity of the pattern's
    # relations to the whole question); both less a cost per hop, so a longer pattern must earn its hops
    zero_shot_scoring: Literal["align", "mean"] = "align"
    hop_cost: Annotated[float, ClientRange(0, 1)] = 0.02  # "mean"
    # "align" (renamed MetaQA dev 300/hop and WebQSP proxy dev 784 q: a hop at 0.02 and a mention at 0.25 gave
    # 0.992 / 0.963 / 0.902 and 0.783; 0.08 and 0.2 give 0.997 / 0.969 / 0.896 and 0.791)
    align_hop_cost: Annotated[float, ClientRange(0, 1)] = 0.08
    mention_cost: Annotated[float, ClientRange(0, 2)] = 0.2  # a relation must align better than this to pay
    extra_mention_cost: Annotated[float, ClientRange(0, 2)] = 0.15  # more for each mention beyond the second
    order_cost: Annotated[float, ClientRange(0, 2)] = 0.1  # per hop aligned nearer the topic than the one before
    # an out-and-back pair ("films that share actors with X") pays no hop cost where "share", "same", "together",
    # "also" or "co-" stands within three words of its best span (methods/frag/alignment.py; renamed MetaQA,
    # 90 random dev q per hop, paired: 3-hop +13 / -2, 2-hop +0 / -2, 1-hop, the WebQSP proxy's first 100 and
    # the user-style KGs unchanged; benchmarks/results/frag_shared_pairs.json). False: its hops cost as any
    shared_pairs: bool = True
    # "align" describes a relation by its words plus its most frequent named tails ("cast member" + "John Wayne,
    # Robert De Niro, ..."), their vector weighted relation_example_weight (methods/frag/alignment.py; renamed
    # MetaQA dev 300/hop 0.997 / 0.969 / 0.896 -> 1.000 / 0.981 / 0.936, WebQSP proxy dev 0.798 -> 0.801); 0: words only
    relation_examples: Annotated[int, ClientRange(0, 20)] = 5
    relation_example_weight: Annotated[float, ClientRange(0, 5)] = 0.5
    # ... plus, where `kgrag adapt --describe` ran on this KG, the vector of the words the LLM wrote for each
    # relation that few other relations' lines use ("which actor is in {x}" -> "actor" for `cast member`),
    # weighted phrasing_weight. No LLM at question time; the best pattern reaches a gold answer more often on
    # renamed MetaQA (first 100 per hop 0.96 / 0.58 / 0.54 -> 0.96 / 0.64 / 0.59 at 0.25, 0.15-0.35 alike;
    # questions 101-200, not used to choose: 0.98 / 0.56 / 0.45 -> 0.98 / 0.63 / 0.52), less on family (1-hop
    # 0.83 -> 0.50), and end to end it changed little (paired, renamed first 30 per hop 0.80 / 0.87 / 0.73 ->
    # 0.77 / 0.87 / 0.77, user-style KGs 0.87 / 0.80 / 0.93 -> 0.87 / 0.87 / 0.93), so it is off by default
    # (benchmarks/results/frag_relation_phrasings.json)
    relation_phrasings: bool = False
    phrasing_weight: Annotated[float, ClientRange(0, 5)] = 0.25
    # zero-shot with an LLM that can score text (local llama.cpp models): the question_fit best patterns are
    # written as queries and re-ordered by the log-probability of the question after each, times
    # question_fit_weight, added to their alignment scores (methods/frag/question_fit.py); 0: off. 5 and 0.01
    # were chosen on renamed MetaQA's first 20 dev questions per hop; its best pattern then reaches a gold
    # answer for 1.00 / 0.69 / 0.81 of questions 21-100 per hop (0.96 / 0.54 / 0.53 without). End to end, paired
    # (first 30 per hop / 15 each / first 100): renamed MetaQA 0.80 / 0.87 / 0.73 -> 0.87 / 0.87 / 0.87 (0.90 /
    # 0.90 / 0.97 with grounding="score"), university / family / catalogue 0.87 / 0.80 / 0.93 -> 0.87 / 0.87 /
    # 0.93, but the WebQSP proxy 0.70 -> 0.68, so it is off by default (benchmarks/results/frag_question_fit.json);
    # `kgrag adapt --llm` turns it on for a KG where it helps on the KG's own synthetic questions (fit_check.py)
    question_fit: Annotated[int, ClientRange(0, 10)] = 0
    question_fit_weight: Annotated[float, ClientRange(0, 1)] = 0.01
    # ... and where trained models rank (a kept `kgrag adapt` scorer, on its own 0-1 scale), the same re-reading
    # of their best patterns, weighted question_fit_trained_weight, when question_fit is set (it is never set
    # for them by default). Renamed MetaQA with models from `kgrag adapt --asked` (450 logged dev questions):
    # 0.05 chosen on 30 dev questions per hop (seed 8; 0.1 the same, 0.02 / 0.2 worse), where the best pattern
    # reaches a gold answer for 0.97 / 0.83 / 0.70 -> 1.00 / 0.97 / 0.77; on 30 others (seed 7) 0.87 / 0.87 /
    # 0.83 -> 0.93 / 0.93 / 0.90 (benchmarks/results/frag_adapt_asked.json)
    question_fit_trained_weight: Annotated[float, ClientRange(0, 1)] = 0.05
    # how the model's answers are tied to the paths: "pattern" (among the ends of the best path's relation
    # pattern), "paths" (middle nodes move to their paths' ends), "score" (all kept, ordered by the score of
    # the path ending at each), "none" (as the model wrote them, KG names first); "auto": "pattern" when
    # trained models rank the patterns, "score" when question_fit re-read the ranking (methods/frag/grounding.py),
    # else "none" — a zero-shot ranking's best pattern is too often not the question's (examples/university,
    # 15 q: Hit@1 0.33 with "pattern", 0.73 with "none", the same replies).
    # "score" is not the default either: paired on the same replies, renamed MetaQA first 30 per hop 0.80 / 0.87
    # / 0.73 -> 0.80 / 0.93 / 0.83, but the WebQSP proxy's first 100 0.70 -> 0.67 and family 0.80 -> 0.73
    # (benchmarks/results/frag_answer_order.json)
    grounding: Literal["auto", "pattern", "paths", "score", "none"] = "auto"
    # with grounding "pattern" (trained models; counts excepted): "all" puts the rest of the best pattern's ends
    # in the evidence after the ones the model named, "chosen" keeps only those. A trained scorer's best pattern
    # is the question's reading, and a grammar-held reply stops after a few names. MetaQA as shipped, seeded 30
    # per hop, the same replies: F1 0.94 / 0.81 / 0.83 -> 0.97 / 0.87 / 0.95 with lines, 0.94 / 0.81 / 0.77 ->
    # 0.97 / 0.87 / 0.95 with the tree; Hit@1 unchanged by construction (benchmarks/results/frag_tree_trained.json)
    answer_ends: Literal["chosen", "all"] = "all"
    # what the answer call reads under grounding "pattern" (trained models; counts excepted): "best" only the
    # best pattern's paths — the answers are its ends whatever the model names, so other patterns' paths are
    # read, not used — "all" every pattern retrieval kept. MetaQA as shipped, seeded 30 dev q per hop, fresh
    # calls: the same Hit@1 and answers on all 90 (0.97 / 0.87 / 0.97), evaluated prompt tokens 77 / 219 / 540
    # -> 36 / 52 / 177 and 5.1 / 7.0 / 17.5 -> 2.3 / 2.7 / 7.2 s median, back to back
    # (benchmarks/results/frag_pattern_reads.json)
    pattern_reads: Literal["best", "all"] = "best"
    # how the answer call reads the paths: "tree" writes each shared prefix once (retrieval/evidence_tree.py),
    # "lines" one full path per line, best first. "auto" is the tree. Zero-shot (WebQSP proxy, first 100 dev q):
    # Hit@1 0.68 either way, median prompt 606 vs 1,655 tokens, 8.0 vs 33.2 s. With trained models (MetaQA as
    # shipped) lines were the default until 2026-12-01: the tree with chosen answers had the same Hit@1 but
    # listed fewer of a 3-hop question's answers (F1 0.78 vs 0.87 on the seeded 100 per hop), which answer_ends
    # "all" mends; seeded 30 per hop, paired: the same Hit@1 on all 90 (0.97 / 0.87 / 0.97), F1 0.94 / 0.81 /
    # 0.83 (lines, chosen) -> 0.97 / 0.87 / 0.95 (tree, all), evaluated prompt tokens 143 / 637 / 1,104 -> 77 /
    # 219 / 540 median (benchmarks/results/frag_tree_trained.json)
    evidence_format: Literal["auto", "tree", "lines"] = "auto"
    # the answer call chooses among the named entities of the tree under a grammar instead of writing names:
    # "auto" where the tree is shown and the model enforces grammars (local llama.cpp models)
    choose_answers: GrammarSetting = "auto"
