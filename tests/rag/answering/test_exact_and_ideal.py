"""Exact answers (factoid, list, yes/no) and ideal answers, on small cases and on BioASQ 2013.

The BioASQ test answers every distinct 2013 training question from its gold snippets (phase
B) and checks the targets of issue 24 against the baselines computed on the same snippets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.bioasq.scoring import evaluate_bioasq
from evaluators.formats import parse_bytes
from evaluators.model import Dataset
from rag.answering.answers import extractive_answers
from rag.answering.entities import factoid_answer, is_entity, list_answer
from rag.answering.exact import extractive_exact
from rag.answering.ideal import Sentence as IdealSentence
from rag.answering.ideal import clean, declarative, select, statement
from rag.answering.snippets import Snippet, bm25_scores
from rag.answering.yesno import weigh
from rag.models.dense import DenseScorer
from rag.models.generators import ExtractiveGenerator
from rag.pipeline import RagSystem
from rag.retrieval.index import make_tokenizer
from rag.run import RagSettings
from rag.text.sentences import sentence_spans
from server.ask.payloads import bioasq_question
from server.ask.qa_system import given_snippets

VELCADE = [
    ("1", "Bortezomib, a proteasome inhibitor, is effective against multiple myeloma."),
    ("2", "Patients with relapsed multiple myeloma (MM) received bortezomib."),
    ("3", "Bortezomib improved outcomes in multiple myeloma and mantle cell lymphoma."),
]
DELIRIUM = [
    (
        "1",
        "The interaction of paroxetine and flecainide via CYP2D6 raised the probability of "
        "delirium.",
    ),
    ("2", "Delirium was induced by famotidine and by cimetidine in elderly patients."),
    ("3", "Famotidine, cimetidine and paroxetine can induce delirium."),
]


def test_factoid_candidates_are_multi_word_names_ranked_by_evidence() -> None:
    found = factoid_answer("What disease is Velcade (bortezomib) mainly used for?", VELCADE)
    assert found[0] == "multiple myeloma" and len(found) <= 5
    assert "bortezomib" not in {f.lower() for f in found}  # the question's own words


def test_list_answers_keep_entities_only() -> None:
    found = list_answer("Which drugs can induce delirium?", DELIRIUM)
    assert {"famotidine", "cimetidine"} <= {f.lower() for f in found}
    assert not {"interaction", "probability"} & {f.lower() for f in found}
    assert all(is_entity(f) for f in found)


def _snippets(texts: list[tuple[str, str]]) -> list[Snippet]:
    return [
        Snippet(f"d{p}", t, "abstract", "abstract", 0, len(t) - 1, p, 1, 1.0, 1.0) for p, t in texts
    ]


NMS = [
    ("1", "Neuroleptic malignant syndrome induced by ziprasidone on the second day of treatment."),
    ("2", "A case of neuroleptic malignant syndrome associated with the use of ziprasidone."),
    ("3", "Dantrolene is the treatment of choice for neuroleptic malignant syndrome."),
    ("4", "Dantrolene shortened neuroleptic malignant syndrome in most patients."),
]


def test_a_treatment_is_never_a_drug_the_snippets_name_as_the_cause() -> None:
    treatment = extractive_exact(
        "What is the treatment for neuroleptic malignant syndrome?", "factoid", _snippets(NMS)
    )
    names = [n.lower() for n in treatment.values()]
    assert names and names[0] == "dantrolene"
    assert "ziprasidone" not in names  # both its mentions name it as the cause
    # asked what causes it, the same snippets name ziprasidone
    cause = extractive_exact(
        "Which drug induces neuroleptic malignant syndrome?", "factoid", _snippets(NMS)
    )
    assert "ziprasidone" in [n.lower() for n in cause.values()]


def test_a_name_is_put_into_the_question_s_frame_only_where_a_snippet_states_it_so() -> None:
    question = "What is the antidote for heparin?"
    mentioned = _snippets(
        [
            ("1", "Heparin-induced thrombocytopenia is a serious adverse effect."),
            ("2", "Thrombocytopenia was seen in 4% of patients given heparin."),
        ]
    )
    answers = extractive_answers(question, "factoid", mentioned)
    assert [n.lower() for n in answers.exact.values()[:1]] == ["thrombocytopenia"]  # the best ...
    stated = "thrombocytopenia is the antidote for heparin."
    assert stated not in answers.short.lower()  # ... is not stated as the antidote
    assert all(stated not in s.text.lower() for s in answers.cited.sentences)
    # and the run says so: the candidates are mentioned, none is stated
    assert answers.warnings == (
        'no sentence read states a name as the answer ("… is the antidote for heparin"), so '
        "none is stated; the exact answer's candidates are only mentioned with the question's "
        "words",
    )
    given = _snippets([("3", "Protamine is the antidote for heparin in an overdose.")])
    answers = extractive_answers(question, "factoid", given)
    assert answers.warnings == ()
    assert answers.short.startswith("Protamine is the antidote for heparin.")
    assert answers.cited.sentences[0].text == "Protamine is the antidote for heparin."


# PMID 12905102 of the CDR corpus: clozapine is the exposure, delirium what was found
CLOZAPINE = [
    (
        "12905102",
        "METHODS: We used computerized pharmacy records to identify all adult psychiatric "
        "inpatients treated with clozapine (1995-96), reviewed their medical records to score "
        "incidence and severity of delirium, and tested associations with potential risk factors.",
    ),
    (
        "12905102",
        "CONCLUSIONS: Delirium was found in 10 % of clozapine-treated inpatients, particularly "
        "in older patients exposed to other central anticholinergics.",
    ),
]


@pytest.mark.parametrize("kind", ["factoid", "list"])
def test_a_remedy_is_stated_only_where_a_sentence_names_it_the_remedy(kind: str) -> None:
    question = "What drugs are used to treat delirium?"
    answers = extractive_answers(question, kind, _snippets(CLOZAPINE))
    assert "clozapine" in [n.lower() for n in answers.exact.values()]  # a candidate ...
    said = [answers.short.lower(), *(s.text.lower() for s in answers.cited.sentences)]
    assert all("used to treat delirium" not in text for text in said)  # ... stated as no remedy
    remedy = ("7", "Haloperidol was used to treat delirium in the intensive care unit.")
    answers = extractive_answers(question, kind, _snippets([*CLOZAPINE, remedy]))
    assert answers.short.lower().startswith("haloperidol is used to treat delirium.")
    assert "clozapine" not in answers.short.lower().split(".")[0]
    assert answers.cited.sentences[0].text == "Haloperidol is used to treat delirium."


def test_numbers_are_answers_to_how_many() -> None:
    texts = [
        ("1", "The human genome encodes 25 selenoproteins."),
        ("2", "Twenty-five selenoproteins (25) were found in humans."),
    ]
    assert factoid_answer("How many selenoproteins are encoded in the human genome?", texts)[
        0
    ].startswith("25")


# (question, snippets, answer): the evidence for and against the claim decides
YESNO = [
    (
        "Does dronedarone affect T3 and T4 levels?",
        [
            "Dronedarone did not alter the T3 and T4 levels.",
            "Thyroid levels were similar with dronedarone.",
            "Amiodarone increased T4.",
        ],
        "no",
    ),
    (
        "Is survivin expressed in normal adult tissues?",
        [
            "Survivin is not expressed in normal adult tissues.",
            "Survivin is undetectable in normal differentiated adult tissues.",
        ],
        "no",
    ),
    (
        "Does metformin lower blood glucose?",
        [
            "Metformin lowered blood glucose in 1,204 adults.",
            "No hypoglycaemia occurred.",
            "Blood glucose fell with metformin.",
        ],
        "yes",
    ),
    (
        "Does clonidine increase agitation?",
        ["Clonidine decreased agitation in children.", "Agitation was reduced by clonidine."],
        "no",
    ),
    ("Is TREM2 associated with Alzheimer's disease?", [], "yes"),
]


@pytest.mark.parametrize(("question", "texts", "expected"), YESNO)
def test_yes_no_follows_the_evidence(question: str, texts: list[str], expected: str) -> None:
    assert weigh(question, texts).answer() == expected


def test_the_answer_is_stated_first_as_a_sentence() -> None:
    assert declarative("Is imatinib an antidepressant drug", negated=True) == (
        "imatinib is not an antidepressant drug"
    )
    assert statement("Which drug reverses opioid overdose?", "factoid", None, ["naloxone"]) == (
        "naloxone."
    )
    assert statement("What is the vector of louping ill virus?", "factoid", None, ["Ixodes"]) == (
        "Ixodes is the vector of louping ill virus."
    )


def test_labels_statistics_and_reporting_openings_are_dropped() -> None:
    assert clean("OBJECTIVE: To assess X.") == "To assess X."
    assert clean("RESULTS: In conclusion, we found that X was lower (p < 0.01) [12].") == (
        "X was lower."
    )


def test_sentences_come_from_several_articles() -> None:
    sentences = [IdealSentence("1", f"Aspirin lowers infarction risk in trial {n}.") for n in "ab"]
    sentences += [IdealSentence("2", "Aspirin lowers the risk of infarction in adults.")]
    chosen = select("Does aspirin lower infarction risk?", sentences, budget=14)
    assert {s.pmid for s in chosen} == {"1", "2"}


def test_tables_ran() -> None:
    assert len(YESNO) == 5


def _two_best(question: str, texts: list[str]) -> str:
    tokenize = make_tokenizer()
    sentences = [t[b:e] for t in texts for b, e in sentence_spans(t)]
    scores = bm25_scores(tokenize(question), [tokenize(s) for s in sentences])
    order = sorted(range(len(sentences)), key=lambda i: -scores[i])
    return " ".join(sentences[i] for i in order[:2])


@pytest.mark.slow  # about 5 s idle: 306 questions answered and scored twice
def test_phase_b_on_bioasq_2013_meets_the_targets(shared_data: Path) -> None:
    source = next((shared_data / "bioasq").rglob("BioASQ-trainingDataset2b.json"))
    gold = parse_bytes(source.read_bytes(), source=source.name)
    questions = list(gold.by_id().values())
    system = RagSystem(lambda: None, ExtractiveGenerator(), RagSettings())  # type: ignore[arg-type,return-value]
    tokenize = make_tokenizer()
    ours, baseline = [], []
    for q in questions:
        kind = q.bioasq.question_type if q.bioasq else None
        run = system.answer_given(
            q.text("en") or "", given_snippets(q), kind=kind, tokenize=tokenize
        )
        entry = bioasq_question(run, q.id)
        ours.append({k: v for k, v in entry.items() if k not in ("documents", "snippets")})
        texts = [s.text for s in q.bioasq.snippets] if q.bioasq else []
        baseline.append(
            {"id": q.id, "ideal_answer": _two_best(q.text("en") or "", texts)}
            | ({"exact_answer": "yes"} if kind == "yesno" else {})
        )

    def measures(answers: list[dict[str, object]]) -> dict[tuple[str, str], float | None]:
        response = parse_bytes(json.dumps({"questions": answers}).encode(), source="test")
        result = evaluate_bioasq(Dataset(gold.format, tuple(questions)), response)
        return {(p.experiment_type, m.measure): m.value for p in result.results for m in p.measures}

    mine, theirs = measures(ours), measures(baseline)
    assert len(questions) == 306
    assert mine[("factoid", "mrr")] >= 0.25
    assert mine[("list", "mean_f1")] >= 0.25
    assert mine[("yesno", "accuracy")] >= 0.80
    assert mine[("yesno", "macro_f1")] > theirs[("yesno", "macro_f1")]  # not "always yes"
    # +0.03 before names were stated in the question's frame only where a snippet states them
    # so (0.170 -> 0.166 here: the frame's words, true or not, overlap these short ideal
    # answers; on 7b-8b and 9b-11b the same change gains 0.007): docs/rag-answering.md
    assert mine[("ideal", "rouge2_f1")] >= theirs[("ideal", "rouge2_f1")] + 0.025
    assert mine[("ideal", "rouge2_recall")] >= theirs[("ideal", "rouge2_recall")] + 0.03


@pytest.mark.slow
def test_with_the_sentence_model_the_ideal_answer_prefers_the_sentence_that_means_the_answer() -> (
    None
):
    # the packaged MiniLM model (the models extra): closeness in meaning outweighs shared words
    question = "Which drugs are used to treat high blood pressure?"
    words = IdealSentence("1", "Blood pressure was high in drug users who used cannabis.")
    meant = IdealSentence(
        "2", "Hypertension is treated with ACE inhibitors, beta blockers and diuretics."
    )
    assert select(question, [words, meant], 8) == [words]
    assert select(question, [words, meant], 8, meaning=DenseScorer.load()) == [meant]
    # and through the pipeline: phase B with the model chooses it for the ideal answer
    given = [
        Snippet(s.pmid, s.text, "abstract", "abstract", 0, len(s.text) - 1, s.pmid, 0, 0.0, 0.0)
        for s in (words, meant)
    ]
    system = RagSystem(
        lambda: None, ExtractiveGenerator(), RagSettings(), meaning=DenseScorer.load()
    )  # type: ignore[arg-type,return-value]
    run = system.answer_given(question, given, kind="summary")
    assert run.short_answer.startswith("Hypertension is treated"), run.short_answer
