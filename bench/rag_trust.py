"""What ``bench/rag.py`` measures of knowing when not to answer, and of later BioASQ years.

* **Held-out phase B** (``held_out_phase_b``): the BioASQ task b golden files of 2019-2023
  (7b-11b, 2,310 questions with gold snippets, as the MIRAGE repository ships them under
  ``rawdata/bioasq/Task{7..11}BGoldenEnriched``; give their folder with ``--held-out``).
  Years 7b and 8b are where rules were chosen (``tune``); 9b, 10b and 11b were never used to
  choose anything (``held``). Scored like ``rag_quality.phase_b`` (official semantics) beside
  the same baselines, with yes/no per class: precision and recall of "yes" and of "no" against
  each class's share (its base rate).
* **Abstention** (``abstention``): the full pipeline (extractive, retrieval included) asked
  questions an index does not hold and questions it does. Indexes: the BioASQ 2013 corpus
  rebuilt from its gold snippets, the corpus rebuilt from the 9b-11b gold snippets, and the
  1,500 CDR abstracts. Sets, each a ``tune`` or ``held`` part:

  =====================  ==================  ============================================  ====
  set                    index               questions                                     part
  =====================  ==================  ============================================  ====
  in: 2013               2013 snippets       BioASQ 2013 (their documents are in it)       tune
  off: 7b-8b             2013 snippets       BioASQ 7b-8b (their documents are not)        tune
  off: QALD-9 train      2013 snippets       QALD-9 train, English (another field)         tune
  off: CDR 7b-8b         CDR                 300 BioASQ 7b-8b questions                    tune
  in: 9b-11b             9b-11b snippets     BioASQ 9b-11b                                 held
  off: 9b-11b            2013 snippets       BioASQ 9b-11b (their documents are not)       held
  off: QALD-9 test       9b-11b snippets     QALD-9 test, English                          held
  off: CDR 9b-11b        CDR                 300 BioASQ 9b-11b questions                   held
  =====================  ==================  ============================================  ====

  For an "off" set every answer is a confident wrong answer (the index lacks the question's
  documents; a few BioASQ questions of one year may still be answered by another year's
  abstracts, which counts against qabench here). The 2013 questions are not asked of the
  9b-11b corpus: at 2,600 abstracts of 2021-2023 on every topic BioASQ asks about, it answers
  many of them (rheumatoid arthritis, malaria, myotonic dystrophy …), so absence of the gold
  documents does not make a question unanswerable there. For an "in" set: the share answered, among the
  questions whose gold documents the run read, and the answered questions' BioASQ scores
  beside all questions' (an abstention scores as a missing answer).

Loaded by ``bench/rag.py`` by file path (that script's directory is kept off ``sys.path``).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluators.formats import parse_bytes
from rag.corpus.bioasq_snippets import read_bioasq_snippets
from rag.corpus.reader import read_corpus
from rag.models.dense import DenseScorer
from rag.models.generators import ExtractiveGenerator
from rag.models.reader import YesNoReader
from rag.pipeline import RagSystem
from rag.retrieval.index import open_index, write_manifest
from rag.retrieval.retrievers import Retriever, WhooshRetriever
from rag.run import RagRun, RagSettings
from server.ask.payloads import bioasq_question

CDR = "pubmed/cryptoradon_biomedRelExt/CDR_Data/CDR.Corpus.v010516"
QALD9 = "qald/ag-sc_QALD/9/data/qald-9-{}-multilingual.json"
TUNE_YEARS = ("7", "8")
HELD_YEARS = ("9", "10", "11")


def year_files(held_dir: Path, years: tuple[str, ...]) -> list[Path]:
    """Return the golden files of the given BioASQ years (``Task9BGoldenEnriched/…``)."""
    files = [f for y in years for f in sorted(held_dir.glob(f"Task{y}BGoldenEnriched/*.json"))]
    if not files:
        raise SystemExit(f"no BioASQ golden files for years {years} under {held_dir}")
    return files


def distinct(files: list[Path]) -> list[dict[str, Any]]:
    """Return the questions of the files, each id once."""
    out: dict[str, dict[str, Any]] = {}
    for path in files:
        for q in json.loads(path.read_bytes())["questions"]:
            out.setdefault(q["id"], q)
    return list(out.values())


def as_gold(quality: Any, questions: list[dict[str, Any]]) -> Any:
    """Wrap raw BioASQ questions as ``rag_quality.Gold`` (every question in part ``all``)."""
    blob = json.dumps({"questions": questions}).encode()
    return quality.Gold(
        parse_bytes(blob, source="held-out"), {q["id"]: q for q in questions}, frozenset()
    )


def yesno_classes(gold: Any, runs: list[tuple[str, RagRun]]) -> dict[str, Any]:
    """Per yes/no class: its base rate, and the precision and recall of answering it."""
    pairs = []
    for run_id, run in runs:
        expected = gold.raw[run_id].get("exact_answer")
        if gold.raw[run_id]["type"] == "yesno" and expected in ("yes", "no"):
            pairs.append((expected, run.exact_answer.yesno))
    out: dict[str, Any] = {"questions": len(pairs)}
    for label in ("yes", "no"):
        said = [g for g, p in pairs if p == label]
        truly = [p for g, p in pairs if g == label]
        out[label] = {
            "base rate": round(len(truly) / len(pairs), 4) if pairs else None,
            "precision": round(said.count(label) / len(said), 4) if said else None,
            "recall": round(truly.count(label) / len(truly), 4) if truly else None,
        }
    return out


READER_KEY = "phase B: yes/no reader trained on"


def held_out_phase_b(
    quality: Any, held_dir: Path, *, words_only: bool = False, reader: Path | None = None
) -> dict[str, Any]:
    """Phase B on BioASQ 7b-8b (tune) and 9b-11b (held) beside the baselines, with the sentence
    model choosing the ideal answers' sentences too unless ``words_only``, and the yes/no
    reader of the directory ``reader`` reading yes/no questions beside the word rules."""
    meaning = None if words_only else DenseScorer.load()
    read = None if reader is None else YesNoReader.load(reader)
    report: dict[str, Any] = {}
    if read is not None:
        report[READER_KEY] = read.manifest.get("sources", {})
    for part, years in (("tune 7b-8b", TUNE_YEARS), ("held 9b-11b", HELD_YEARS)):
        gold = as_gold(quality, distinct(year_files(held_dir, years)))
        started = time.perf_counter()
        ours, runs = quality.phase_b(gold, "all", meaning, read)
        ours["ms/question"] = (time.perf_counter() - started) * 1000 / max(1, len(runs))
        ids = [q.id for q in gold.part("all")]
        report[f"phase B {part}: qabench"] = ours
        report[f"phase B {part}: baselines"] = quality.baselines(gold, "all")
        report[f"phase B {part}: yes/no classes"] = yesno_classes(
            gold, list(zip(ids, runs, strict=True))
        )
        print(f"  phase B {part}: {len(runs)} questions", flush=True)
    return report


def build_index(directory: Path, name: str, sources: list[Path], snippets: bool) -> Path:
    """Build (once) an index from BioASQ gold snippets or from corpus files."""
    if directory.exists():
        return directory
    with open_index(directory, create=True) as index:
        for source in sources:
            index.add(read_bioasq_snippets(source) if snippets else read_corpus(source))
    write_manifest(directory, name)
    return directory


def system_over(directory: Path, meaning: DenseScorer | None = None) -> RagSystem:
    """The extractive RAG system over an index directory (weighing meaning with ``meaning``,
    as ``qabench ask`` does when the sentence model is installed)."""

    @contextlib.contextmanager
    def opened() -> Iterator[Retriever]:
        with open_index(directory) as index:
            yield WhooshRetriever(index)

    return RagSystem(opened, ExtractiveGenerator(), RagSettings(), meaning=meaning)


def qald_questions(path: Path) -> list[dict[str, Any]]:
    """The English questions of a QALD-JSON file, as BioASQ-like records without a type."""
    out = []
    for q in json.loads(path.read_bytes())["questions"]:
        text = next((x["string"] for x in q["question"] if x["language"] == "en"), None)
        if text:
            out.append({"id": f"qald-{q['id']}", "body": text, "type": None, "documents": []})
    return out


def ask_set(system: RagSystem, questions: list[dict[str, Any]]) -> list[tuple[str, RagRun]]:
    """Ask every question (with its BioASQ type when it has one)."""
    return [(q["id"], system.ask(q["body"], kind=q.get("type"))) for q in questions]


def set_report(
    quality: Any, runs: list[tuple[str, RagRun]], questions: list[dict[str, Any]], inside: bool
) -> dict[str, Any]:
    """Answered shares (per type), and for an in-corpus set the scores answered and overall."""
    by_type: Counter[str] = Counter()
    answered_by_type: Counter[str] = Counter()
    for _, run in runs:
        by_type[run.question_type] += 1
        answered_by_type[run.question_type] += run.answered
    answered = sum(answered_by_type.values())
    row: dict[str, Any] = {
        "questions": len(runs),
        "answered": answered,
        "answered share": round(answered / len(runs), 4) if runs else None,
        "per type": {k: f"{answered_by_type[k]}/{by_type[k]}" for k in sorted(by_type)},
    }
    if not inside:
        return row
    raw = {q["id"]: q for q in questions}
    read_gold = [
        (qid, run)
        for qid, run in runs
        if {s.pmid for s in run.snippets}
        & {u.rsplit("/", 1)[-1] for u in raw[qid].get("documents", [])}
    ]
    got = sum(run.answered for _, run in read_gold)
    row["gold documents read"] = len(read_gold)
    row["answered of those"] = round(got / len(read_gold), 4) if read_gold else None
    gold = as_gold(quality, questions)
    everything = [bioasq_question(run, qid) for qid, run in runs]
    kept = [bioasq_question(run, qid) for qid, run in runs if run.answered]
    kept_ids = {e["id"] for e in kept}
    row["scores, all"] = quality.score(gold, gold.part("all"), everything)
    row["scores, answered only"] = quality.score(
        gold, [q for q in gold.part("all") if q.id in kept_ids], kept
    )
    return row


def abstention(
    quality: Any,
    data: Path,
    held_dir: Path,
    work: Path,
    *,
    words_only: bool = False,
    parts: tuple[str, ...] = ("tune", "held"),
    stride: int = 1,
) -> dict[str, Any]:
    """The abstention sets (see the module docstring), each asked through the full pipeline,
    with the sentence model weighing meaning (``rag.meaning_check``) unless ``words_only``."""
    meaning = None if words_only else DenseScorer.load()
    b2013 = data / quality.TRAINING
    tune_files = year_files(held_dir, TUNE_YEARS)
    held_files = year_files(held_dir, HELD_YEARS)
    index_2013 = build_index(work / "index-2013", "BioASQ 2013 snippets", [b2013], True)
    index_held = build_index(work / "index-9b-11b", "BioASQ 9b-11b snippets", held_files, True)
    cdr = sorted((data / CDR).glob("*.tsv"))
    index_cdr = build_index(work / "index-cdr", "CDR abstracts", cdr, False)
    q2013 = distinct([b2013])
    q_tune, q_held = distinct(tune_files), distinct(held_files)
    sets = (
        ("tune", "in: 2013", index_2013, q2013, True),
        ("tune", "off: 7b-8b", index_2013, q_tune, False),
        (
            "tune",
            "off: QALD-9 train",
            index_2013,
            qald_questions(data / QALD9.format("train")),
            False,
        ),
        ("tune", "off: CDR 7b-8b", index_cdr, q_tune[:300], False),
        ("held", "in: 9b-11b", index_held, q_held, True),
        ("held", "off: 9b-11b", index_2013, q_held, False),
        (
            "held",
            "off: QALD-9 test",
            index_held,
            qald_questions(data / QALD9.format("test")),
            False,
        ),
        ("held", "off: CDR 9b-11b", index_cdr, q_held[:300], False),
    )
    report: dict[str, Any] = {}
    for part, name, index, questions, inside in sets:
        if part not in parts:
            continue
        # every stride-th question of the set (in the set's order): a shorter run, same kinds
        questions = questions[::stride]
        started = time.perf_counter()
        runs = ask_set(system_over(index, meaning), questions)
        row = set_report(quality, runs, questions, inside)
        row["ms/question"] = round((time.perf_counter() - started) * 1000 / max(1, len(runs)), 1)
        row["evidence check"] = "words only" if words_only else "words and meaning"
        report[f"{part} | {name}"] = row
        print(f"  {part} {name}: {row['answered']}/{row['questions']} answered", flush=True)
    return report


def print_trust(report: dict[str, Any]) -> None:
    """Print the held-out phase B and the abstention tables."""
    trained_on = report.get(READER_KEY)
    phase_b = {k: v for k, v in report.items() if k.startswith("phase B") and k != READER_KEY}
    if trained_on is not None:
        print(f"\nyes/no reader trained on: {json.dumps(trained_on)}")
    if phase_b:
        labels = ["yes/no acc", "yes/no F1", "factoid MRR", "list F1", "R-2 rec", "R-2 F1"]
        print("\nPhase B from gold snippets, BioASQ 7b-8b (tune) and 9b-11b (held out)")
        print(f"| system | {' | '.join(labels)} |")
        print("|" + "---|" * (len(labels) + 1))
        for name, row in phase_b.items():
            if name.endswith("yes/no classes"):
                continue
            cells = ["-" if row.get(k) is None else f"{row[k]:.3f}" for k in labels]
            print(f"| {name} | {' | '.join(cells)} |")
        for name, row in phase_b.items():
            if name.endswith("yes/no classes"):
                print(f"{name}: {json.dumps(row)}")
    rows = {k: v for k, v in report.items() if " | " in k}
    if rows:
        print("\nAbstention: the full pipeline on indexes that do (in) and do not (off) hold")
        print("| part | set | questions | answered | per type | gold read: answered | ms/q |")
        print("|---|---|---|---|---|---|---|")
        for name, row in rows.items():
            part, label = name.split(" | ")
            read = row.get("answered of those")
            read_cell = "-" if read is None else f"{read:.3f} of {row['gold documents read']}"
            print(
                f"| {part} | {label} | {row['questions']} | {row['answered share']:.3f} | "
                f"{row['per type']} | {read_cell} | {row['ms/question']} |"
            )
        for part in dict.fromkeys(name.split(" | ")[0] for name in rows):
            off = [r for n, r in rows.items() if n.startswith(f"{part} | off")]
            asked = sum(r["questions"] for r in off)
            kept = asked - sum(r["answered"] for r in off)
            if asked:
                print(
                    f"{part}: off-corpus questions abstained {kept} of {asked} "
                    f"({100 * kept / asked:.1f} %; each one answered is a confident wrong answer)"
                )
        for name, row in rows.items():
            if "scores, all" in row:
                print(f"{name} scores, all questions: {json.dumps(row['scores, all'])}")
                print(f"{name} scores, answered only: {json.dumps(row['scores, answered only'])}")
