"""What ``bench/rag.py`` measures of the answers: phase B from gold snippets, baselines, claims.

* **Phase B** (``phase_b``): every distinct BioASQ 2013 training question answered from its
  own gold snippets (``RagSystem.answer_given``, as ``qabench answer --phase b``), scored with
  the official semantics (``evaluate_bioasq``, version 8), per part: ``tune`` (batches 0-2,
  where weights and thresholds were chosen) and ``held`` (test batch 3, never used to choose).
* **Baselines** on the same snippets (``baselines``): an n-gram counter (the 1-3-word n-grams of
  the snippets without a question word or a stop word at either end, by count: five for a
  factoid, the five best for a list), "always yes", and "the two best sentences" (BM25 over the
  snippets' sentences) as the ideal answer.
* **Yes/no on PubMedQA** (``pubmedqa_yesno``): the evidence weigher on the 1000 expert-labelled
  PubMedQA questions (yes/no only), from the abstract without its conclusion (``contexts``)
  and from the conclusion (``conclusion``), against "always yes": data never used for tuning.
* **False claims** (``claim_set``, ``catch_rates``): true sentences with the article they come
  from, then the same made false (``rag.answering.perturb``: number changed, negation flipped,
  direction reversed, name swapped for one from another article or one from the same text,
  unrelated citation), checked by ``rag.answering.support``. Sources: sentences copied from
  PubMedQA abstracts and from BioASQ snippets (as the extractive answers cite them), and
  paraphrases: PubMedQA conclusions citing their abstract, BioASQ ideal answers citing the
  question's three best-matching gold documents.

Loaded by ``bench/rag.py`` by file path (that script's directory is kept off ``sys.path``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.bioasq.scoring import evaluate_bioasq
from evaluators.formats import parse_bytes
from evaluators.model import Dataset, Question
from rag.answering import perturb
from rag.answering.citations import AnswerSentence, CitedAnswer
from rag.answering.snippets import bm25_scores
from rag.answering.support import support_scores
from rag.answering.yesno import weigh
from rag.corpus.article import Article
from rag.models.generators import ExtractiveGenerator
from rag.pipeline import RagSystem
from rag.retrieval.index import make_tokenizer
from rag.run import RagRun, RagSettings
from rag.text.phrases import FUNCTION_WORDS, stem, words
from rag.text.sentences import sentence_spans
from server.ask.payloads import bioasq_question
from server.ask.qa_system import given_snippets

BIOASQ = "bioasq/balikasg_BioASQParticipantsArea/TrainingData2014/BioASQ_2013_TaskB.zip.d/BioASQ_2013_TaskB"
TRAINING = f"{BIOASQ}/BioASQ-trainingDataset2b.json"
HELD_BATCH = f"{BIOASQ}/phaseB-testsets/BioASQ-task1bPhaseB-testset3"
PUBMEDQA = "pubmed/pubmedqa_pubmedqa/data/ori_pqal.json"
PHASE_B_COLUMNS = (
    ("yesno", "accuracy", "yes/no acc"),
    ("yesno", "macro_f1", "yes/no F1"),
    ("factoid", "mrr", "factoid MRR"),
    ("list", "mean_f1", "list F1"),
    ("ideal", "rouge2_recall", "R-2 rec"),
    ("ideal", "rouge2_f1", "R-2 F1"),
)
FALSE_KINDS = ("number", "negation", "direction", "entity", "unrelated")


@dataclass(frozen=True, slots=True)
class Gold:
    """The BioASQ 2013 training questions (distinct ids), parsed, and the held-out ids."""

    dataset: Dataset
    raw: dict[str, dict[str, Any]]
    held: frozenset[str]

    def part(self, name: str) -> list[Question]:
        """Return the questions of a part: ``tune``, ``held`` or ``all``."""
        questions = list(self.dataset.by_id().values())
        if name == "all":
            return questions
        return [q for q in questions if (q.id in self.held) == (name == "held")]


def load_gold(data: Path) -> Gold:
    """Read the BioASQ 2013 training file and the ids of test batch 3 (held out)."""
    raw_bytes = (data / TRAINING).read_bytes()
    raw: dict[str, dict[str, Any]] = {}
    for q in json.loads(raw_bytes)["questions"]:
        raw.setdefault(q["id"], q)
    held = {q["id"] for q in json.loads((data / HELD_BATCH).read_bytes())["questions"]}
    return Gold(parse_bytes(raw_bytes, source=TRAINING), raw, frozenset(held))


def score(gold: Gold, questions: list[Question], answers: list[dict[str, Any]]) -> dict[str, Any]:
    """Score phase B answers (BioASQ JSON entries) with the official semantics."""
    dataset = Dataset(gold.dataset.format, tuple(questions))
    response = parse_bytes(json.dumps({"questions": answers}).encode(), source="bench")
    result = evaluate_bioasq(dataset, response)
    values = {(p.experiment_type, m.measure): m.value for p in result.results for m in p.measures}
    return {label: values.get((kind, measure)) for kind, measure, label in PHASE_B_COLUMNS}


def phase_b(
    gold: Gold, part: str, meaning: Any = None, reader: Any = None
) -> tuple[dict[str, Any], list[RagRun]]:
    """Answer the part's questions from their gold snippets (with the sentence model
    ``meaning``, a ``DenseScorer``, and the yes/no ``reader``, a ``YesNoReader``, when given);
    return the scores and the runs."""
    system = RagSystem(
        _no_index, ExtractiveGenerator(), RagSettings(), meaning=meaning, reader=reader
    )
    tokenize = make_tokenizer()
    questions = gold.part(part)
    runs, answers = [], []
    for q in questions:
        kind = q.bioasq.question_type if q.bioasq else None
        run = system.answer_given(
            q.text("en") or "", given_snippets(q), kind=kind, tokenize=tokenize
        )
        entry = bioasq_question(run, q.id)
        entry.pop("documents")
        entry.pop("snippets")
        runs.append(run)
        answers.append(entry)
    return score(gold, questions, answers), runs


def _no_index() -> Any:
    raise AssertionError("phase B opens no index")


def baselines(gold: Gold, part: str) -> dict[str, Any]:
    """Score the n-gram counter, always-yes and two-best-sentences baselines on a part."""
    tokenize = make_tokenizer()
    questions = gold.part(part)
    answers = []
    for q in questions:
        raw = gold.raw[q.id]
        texts = [s["text"] for s in raw.get("snippets", [])]
        entry: dict[str, Any] = {"id": q.id, "ideal_answer": two_best(raw["body"], texts, tokenize)}
        kind = raw["type"]
        if kind == "yesno":
            entry["exact_answer"] = "yes"
        elif kind in ("factoid", "list"):
            entry["exact_answer"] = [[g] for g in ngram_answer(raw["body"], texts)[:5]]
        answers.append(entry)
    return score(gold, questions, answers)


def ngram_answer(question: str, texts: Iterable[str]) -> list[str]:
    """The 1-3-word n-grams of the texts by count (no question word, no stop word at an end).

    >>> ngram_answer("Which gene?", ["BRCA1 mutations.", "BRCA1 carriers.", "BRCA1 mutations."])[:2]
    ['brca1', 'mutations']
    """
    asked = {w.lower for w in words(question)}
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for text in texts:
        tokens = [w.lower for w in words(text)]
        for n in (1, 2, 3):
            for i in range(len(tokens) - n + 1):
                gram = tokens[i : i + n]
                if gram[0] in FUNCTION_WORDS or gram[-1] in FUNCTION_WORDS:
                    continue
                if any(t in asked for t in gram) or any(len(t) < 2 for t in gram):
                    continue
                key = " ".join(gram)
                counts[key] += 1
                first.setdefault(key, len(first))
    return sorted(counts, key=lambda k: (-counts[k], first[k]))


def two_best(question: str, texts: Iterable[str], tokenize: Any) -> str:
    """The two sentences of the texts with the best BM25 against the question, joined."""
    sentences = [t[b:e] for t in texts for b, e in sentence_spans(t)]
    if not sentences:
        return ""
    scores = bm25_scores(tokenize(question), [tokenize(s) for s in sentences])
    order = sorted(range(len(sentences)), key=lambda i: -scores[i])
    return " ".join(sentences[i] for i in order[:2])


def pubmedqa_yesno(data: Path) -> dict[str, dict[str, float]]:
    """Yes/no accuracy and macro F1 on PubMedQA (yes/no questions), against always-yes."""
    records = json.loads((data / PUBMEDQA).read_bytes())
    rows = [r for r in records.values() if r["final_decision"] in ("yes", "no")]
    out = {}
    for name, texts in (
        ("contexts", lambda r: r["CONTEXTS"]),
        ("conclusion", lambda r: [r["LONG_ANSWER"]]),
    ):
        predicted = [weigh(r["QUESTION"], texts(r)).answer() for r in rows]
        out[name] = _yesno_scores([r["final_decision"] for r in rows], predicted)
    out["always yes"] = _yesno_scores([r["final_decision"] for r in rows], ["yes"] * len(rows))
    out["questions"] = {"yes": sum(r["final_decision"] == "yes" for r in rows), "all": len(rows)}
    return out


def _yesno_scores(gold: list[str], predicted: list[str]) -> dict[str, float]:
    f1 = {}
    for label in ("yes", "no"):
        tp = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
        fp = sum(g == label != p for g, p in zip(gold, predicted, strict=True))
        fn = sum(g != label and p != g for g, p in zip(gold, predicted, strict=True))
        f1[label] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    accuracy = sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold)
    return {"accuracy": accuracy, "macro_f1": (f1["yes"] + f1["no"]) / 2}


Case = tuple[str, str, str, str, dict[str, Article]]  # part, source, kind, claim, cited


def claim_set(data: Path, gold: Gold) -> list[Case]:
    """Build the true and false cited claims (see the module docstring)."""
    cases = _pubmedqa_claims(data)
    cases.extend(_bioasq_claims(gold))
    return cases


def _sentences(text: str, least: int = 6) -> list[str]:
    return [text[b:e] for b, e in sentence_spans(text) if len(text[b:e].split()) >= least]


def _variants(
    part: str,
    source: str,
    claim: str,
    cited: dict[str, Article],
    others: list[str],
    within: list[str],
    unrelated: dict[str, Article],
) -> list[Case]:
    made = [(part, source, "true", claim, cited)]
    for kind, fake in (
        ("number", perturb.change_number(claim)),
        ("negation", perturb.flip_negation(claim)),
        ("direction", perturb.reverse_direction(claim)),
        ("entity", perturb.swap_entity(claim, others)),
        ("entity-within", perturb.swap_entity(claim, within)),
    ):
        if fake is not None:
            made.append((part, source, kind, fake, cited))
    made.append((part, source, "unrelated", claim, unrelated))
    return made


def _pubmedqa_claims(data: Path) -> list[Case]:
    records = json.loads((data / PUBMEDQA).read_bytes())
    pmids = sorted(records)
    articles = {p: Article(p, "", " ".join(records[p]["CONTEXTS"])) for p in pmids}
    cases: list[Case] = []
    for index, pmid in enumerate(pmids):
        part = "tune" if index % 2 == 0 else "held"
        article = articles[pmid]
        other = articles[pmids[(index * 7 + 3) % len(pmids)]]
        text = article.abstract.lower()
        others = [n for n in perturb.names_in(other.abstract) if n.lower() not in text]
        within = perturb.names_in(article.abstract)[::-1]
        for source, claims in (
            ("copied", _sentences(article.abstract)[:2]),
            ("paraphrase", _sentences(records[pmid]["LONG_ANSWER"])[:2]),
        ):
            for claim in claims:
                cases.extend(
                    _variants(
                        part,
                        f"pubmedqa {source}",
                        claim,
                        {pmid: article},
                        others,
                        [n for n in within if n not in claim],
                        {other.pmid: other},
                    )
                )
    return cases


def _bioasq_claims(gold: Gold) -> list[Case]:
    questions = [gold.raw[q.id] for q in gold.part("all")]
    cases: list[Case] = []
    for index, q in enumerate(questions):
        part = "held" if q["id"] in gold.held else "tune"
        documents: dict[str, list[str]] = {}
        for s in q.get("snippets", []):
            documents.setdefault(s["document"].rsplit("/", 1)[-1], []).append(s["text"])
        other_q = questions[(index * 7 + 3) % len(questions)]
        other_docs = [s for s in other_q.get("snippets", []) if s["text"].strip()]
        ideal = q.get("ideal_answer")
        ideal = ideal[0] if isinstance(ideal, list) and ideal else ideal
        if not documents or not other_docs or not isinstance(ideal, str):
            continue
        articles = {p: Article(p, "", "\n\n".join(t)) for p, t in documents.items()}
        pmid = other_docs[0]["document"].rsplit("/", 1)[-1]
        unrelated = Article(
            pmid, "", "\n\n".join(s["text"] for s in other_docs if s["document"].endswith(pmid))
        )
        names = [n for a in articles.values() for n in perturb.names_in(a.abstract)][::-1]
        copied = [
            (s, {p: articles[p]}) for p, a in articles.items() for s in _sentences(a.abstract)[:1]
        ][:2]
        paraphrases = [(s, _best_documents(s, articles)) for s in _sentences(ideal)[:2]]
        for source, claims in (("bioasq copied", copied), ("bioasq paraphrase", paraphrases)):
            for claim, cited in claims:
                text = " ".join(a.abstract for a in cited.values()).lower()
                others = [n for n in perturb.names_in(unrelated.abstract) if n.lower() not in text]
                cases.extend(
                    _variants(
                        part,
                        source,
                        claim,
                        cited,
                        others,
                        [n for n in names if n not in claim],
                        {pmid: unrelated},
                    )
                )
    return cases


def _best_documents(claim: str, articles: dict[str, Article], count: int = 3) -> dict[str, Article]:
    """The articles sharing most words with the claim (the ideal answer's citations)."""
    mine = {stem(w.lower) for w in words(claim)}
    ranked = sorted(
        articles, key=lambda p: -len(mine & {stem(w.lower) for w in words(articles[p].abstract)})
    )
    return {p: articles[p] for p in ranked[:count]}


def catch_rates(
    cases: list[Case], threshold: float | None = None
) -> dict[tuple[str, str, str], tuple[int, int]]:
    """Check every claim; return (flagged, total) per (part, source, kind)."""
    tokenize = make_tokenizer()
    settings = RagSettings()
    limit = settings.support_threshold if threshold is None else threshold
    counts: dict[tuple[str, str, str], list[int]] = {}
    for part, source, kind, claim, cited in cases:
        answer = CitedAnswer((AnswerSentence(claim, tuple(cited)),))
        checked = support_scores(answer, cited, tokenize, threshold=limit).sentences[0]
        slot = counts.setdefault((part, source, kind), [0, 0])
        slot[0] += checked.supported is False
        slot[1] += 1
    return {key: (a, b) for key, (a, b) in counts.items()}


def own_citations(runs: Iterable[RagRun]) -> tuple[int, int]:
    """(flagged, checked) over the cited sentences of the system's own answers."""
    sentences = [s for r in runs for s in r.cited_answer.sentences if s.supported is not None]
    return sum(s.supported is False for s in sentences), len(sentences)
