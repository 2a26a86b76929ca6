"""The answering pipeline over the 200-article fixture index: extractive, and with a stub model."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from rag.answering.answers import Answers
from rag.answering.citations import AnswerSentence, CitedAnswer
from rag.answering.exact import ExactAnswer
from rag.answering.extraction import StageOutput
from rag.answering.snippets import Snippet
from rag.errors import QuerySyntaxError, QueryTooBroadError, QuestionError
from rag.models.generators import ExtractiveGenerator
from rag.models.openai_http import OpenAIGenerator, OpenAISettings
from rag.pipeline import RagSystem
from rag.retrieval.expansion import Expansion
from rag.retrieval.index import open_index
from rag.retrieval.retrievers import RankedDocument, question_query
from rag.run import ProgressEvent, RagRun, RagSettings
from rag.stages import STAGES, Stages, default_stages
from tests.plugins.llm_stub import LlmReply, LlmRequest, LlmStub, Script

ASPIRIN = "Does aspirin reduce recurrent myocardial infarction?"
MakeSystem = Callable[..., RagSystem]
MakeStub = Callable[[Callable[[LlmRequest], LlmReply]], LlmStub]


@pytest.fixture
def extractive(make_rag_system: MakeSystem) -> RagSystem:
    return make_rag_system(ExtractiveGenerator())


@pytest.fixture
def openai_system(make_rag_system: MakeSystem) -> Iterator[Callable[[LlmStub], RagSystem]]:
    made: list[OpenAIGenerator] = []

    def make(stub: LlmStub, timeout: float = 5.0) -> RagSystem:
        made.append(OpenAIGenerator(OpenAISettings(stub.base_url, "stub", None, timeout)))
        return make_rag_system(made[-1])

    yield make
    for generator in made:
        generator.close()


def assert_offsets_match_the_index(run: RagRun, index_dir: Path) -> int:
    checked = 0
    with open_index(index_dir) as index:
        for snippet in run.snippets:
            article = index.document(snippet.pmid)
            assert article is not None
            section = article.title if snippet.begin_section == "title" else article.abstract
            assert section[snippet.offset_begin : snippet.offset_end + 1] == snippet.text
            checked += 1
    return checked


def assert_citations_come_from_snippets(run: RagRun) -> None:
    shown = {s.pmid for s in run.snippets}
    for sentence in run.cited_answer.sentences:
        assert set(sentence.citations) <= shown
        assert sentence.flagged == (bool(sentence.removed) or not sentence.citations)


# ---------------------------------------------------------------------------- extractive


def test_extractive_run_records_every_stage(extractive: RagSystem, rag_index_dir: Path) -> None:
    run = extractive.ask(ASPIRIN)
    assert [t.stage for t in run.timings] == list(STAGES)
    assert all(t.millis >= 0 for t in run.timings)
    assert run.question_type == "yesno"
    assert run.expanded_query == question_query(ASPIRIN) and not run.query_edited
    assert run.documents[0].pmid == "1000001"
    assert [d.rank for d in run.documents] == list(range(1, len(run.documents) + 1))
    assert run.exact_answer.yesno == "yes"
    # the answer first, as a claim, then the sentences that address the question
    assert run.short_answer.startswith("Yes, aspirin does reduce recurrent myocardial infarction.")
    assert "Aspirin lowered the rate of recurrent myocardial infarction" in run.short_answer
    assert run.generator.name == "extractive"
    assert ("top_k", "50") in run.settings
    assert not run.warnings
    assert assert_offsets_match_the_index(run, rag_index_dir) == len(run.snippets) > 0


def test_extractive_cited_answer_cites_each_sentences_own_article(extractive: RagSystem) -> None:
    run = extractive.ask(ASPIRIN)
    first, *rest = run.cited_answer.sentences
    # the stated answer cites the articles of the sentences that follow it, and is checked
    assert first.text.startswith("Yes, ") and first.supported is True
    assert set(first.citations) == {s.citations[0] for s in rest[:3]}
    texts = {s.text: s.pmid for s in run.snippets}
    for sentence in rest:
        (pmid,) = sentence.citations
        assert any(sentence.text in t and p == pmid for t, p in texts.items())
        assert not sentence.flagged and sentence.supported is True
    assert "[1000001]." in run.cited_answer.text
    assert_citations_come_from_snippets(run)


def test_extractive_runs_are_deterministic(extractive: RagSystem) -> None:
    first, second = extractive.ask(ASPIRIN), extractive.ask(ASPIRIN)
    assert first.run_id != second.run_id
    assert (first.snippets, first.cited_answer, first.short_answer) == (
        second.snippets,
        second.cited_answer,
        second.short_answer,
    )


def test_given_query_skips_expansion_and_is_marked_edited(extractive: RagSystem) -> None:
    run = extractive.ask(ASPIRIN, query='"heart attack" OR clopidogrel')
    assert run.query_edited and run.expanded_query == '"heart attack" OR clopidogrel'
    assert run.timings[0].stage == "expand" and run.timings[0].note.startswith("skipped")
    assert run.documents[0].pmid == "1000002"
    unchanged = extractive.ask(ASPIRIN, query="aspirin", edited=False)
    assert not unchanged.query_edited


def test_malformed_query_raises_with_its_position(extractive: RagSystem) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        extractive.ask(ASPIRIN, query="aspirin AND (infarction")
    assert caught.value.position == 12


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("", "the question is empty"),
        ("   \n\t ", "the question is empty"),
        ("x" * 2001, "2001 characters; at most 2000"),
        ("What is it?", "no content words"),
    ],
)
def test_unusable_questions_are_refused(extractive: RagSystem, question: str, message: str) -> None:
    with pytest.raises(QuestionError, match=message):
        extractive.ask(question)


def test_an_enormous_edited_query_is_refused_before_searching(extractive: RagSystem) -> None:
    with pytest.raises(QuestionError, match="query has 2399 characters; at most 2000"):
        extractive.ask(ASPIRIN, query="aspirin " * 300)
    assert extractive.ask(ASPIRIN, query="aspirin " * 250).documents


def test_no_hits_gives_empty_answers_and_says_so(extractive: RagSystem) -> None:
    run = extractive.ask("Does zorblaxine cure quuxitis?")
    assert run.documents == () and run.snippets == ()
    assert run.short_answer == "" and run.cited_answer.sentences == ()
    assert "no documents were found" in " ".join(run.warnings)
    assert "nothing to answer from" in " ".join(run.warnings)


def test_retrieval_fallback_is_reported(extractive: RagSystem) -> None:
    run = extractive.ask(ASPIRIN, query="+aspirin +zorblaxine")
    assert run.fallback == "broadened" and run.query_run == "aspirin zorblaxine"
    assert any("broadened fallback query" in w for w in run.warnings)
    assert run.documents


def test_progress_reports_each_stage_start_and_end(extractive: RagSystem) -> None:
    events: list[ProgressEvent] = []
    extractive.ask(ASPIRIN, progress=events.append)
    assert [(e.stage, e.state) for e in events] == [
        (stage, state) for stage in STAGES for state in ("started", "finished")
    ]
    assert all(e.millis is not None for e in events if e.state == "finished")


def test_every_stage_can_be_replaced(make_rag_system: MakeSystem) -> None:
    calls: list[str] = []

    def expand(question: str) -> Expansion:
        calls.append("expand")
        return Expansion("clopidogrel", "identity")

    def extract(
        q: str, docs: Sequence[RankedDocument], tok: Callable[[str], list[str]]
    ) -> StageOutput:
        calls.append("extract")
        doc = docs[0]
        text = doc.article.title
        return StageOutput(
            (Snippet("d", text, "title", "title", 0, len(text) - 1, doc.pmid, 1, 1.0, 1.0),)
        )

    def rerank(q: str, snippets: Sequence[Snippet], limit: int) -> StageOutput:
        calls.append("rerank")
        return StageOutput(tuple(snippets), ("custom rerank",))

    def answer(q: str, kind: str, snippets: Sequence[Snippet], on_text: object) -> Answers:
        calls.append("answer")
        cited = CitedAnswer((AnswerSentence("Custom.", (snippets[0].pmid,)),))
        return Answers("custom short", cited, ExactAnswer(kind, yesno="no"))

    system = make_rag_system(ExtractiveGenerator(), stages=Stages(expand, extract, rerank, answer))
    # asked about what the custom query finds (asked about aspirin and myocardial infarction,
    # the run would abstain: no document found by "clopidogrel" names both)
    run = system.ask("Does clopidogrel prevent a second heart attack?")
    assert calls == ["expand", "extract", "rerank", "answer"]
    assert run.expanded_query == "clopidogrel" and run.documents[0].pmid == "1000002"
    assert run.short_answer == "custom short" and run.exact_answer.yesno == "no"
    # "Custom." is not in the abstract it cites: the citation check marks it
    assert run.warnings[0] == "custom rerank" and "not supported" in run.warnings[1]
    assert run.cited_answer.sentences[0].supported is False


def test_phase_b_reranks_and_answers_the_given_snippets_and_checks_their_citations() -> None:
    calls: list[str] = []

    def never(*_args: object) -> StageOutput:
        raise AssertionError("phase B neither expands nor extracts")

    def rerank(q: str, snippets: Sequence[Snippet], limit: int) -> StageOutput:
        calls.append("rerank")
        return StageOutput(tuple(snippets[:limit]), ("custom rerank",))

    def answer(q: str, kind: str, snippets: Sequence[Snippet], on_text: object) -> Answers:
        calls.append("answer")
        assert on_text is None and len(snippets) == 2  # every given snippet, the kept one first
        cited = CitedAnswer((AnswerSentence("Kidney stones dissolve in vinegar.", ("43",)),))
        return Answers("no", cited, ExactAnswer(kind, yesno="no"))

    texts = ("Aspirin reduces recurrent myocardial infarction.", "Statins lower cholesterol.")
    given = [
        Snippet(f"d{n}", t, "abstract", "abstract", 0, len(t) - 1, str(42 + n), 1, 0.0, 0.0)
        for n, t in enumerate(texts)
    ]
    stages = Stages(never, never, rerank, answer)  # type: ignore[arg-type]
    system = RagSystem(lambda: None, ExtractiveGenerator(), RagSettings(snippets=1), stages=stages)  # type: ignore[arg-type,return-value]
    run = system.answer_given(ASPIRIN, given, kind="yesno")
    assert calls == ["rerank", "answer"]
    assert [t.stage for t in run.timings] == list(STAGES)
    assert [d.pmid for d in run.documents] == ["42", "43"]
    assert run.snippets[0].pmid == "42" and run.snippets[0].score == 1.0  # the best match
    assert dict(run.settings)["phase"] == "b" and run.expanded_query == ""
    assert run.cited_answer.sentences[0].supported is False
    assert run.warnings[0] == "custom rerank"
    assert run.warnings[1].startswith("citation check: 1 cited sentence(s) are not supported")


def test_settings_limit_documents_and_snippets(make_rag_system: MakeSystem) -> None:
    system = make_rag_system(ExtractiveGenerator(), RagSettings(top_k=2, snippets=1))
    run = system.ask("Is the heart rate affected after heart surgery?")
    assert len(run.documents) == 2 and len(run.snippets) == 1


# ---------------------------------------------------------------------------- with a model


def test_model_pipeline_uses_its_query_verbatim_snippets_and_checked_citations(
    llm_stub: LlmStub, openai_system: Callable[[LlmStub], RagSystem], rag_index_dir: Path
) -> None:
    run = openai_system(llm_stub).ask(ASPIRIN)
    assert run.expanded_query == 'aspirin AND ("myocardial infarction" OR "heart attack")'
    assert run.generator.name == "openai-http"
    assert run.snippets, "the model's verbatim sentences become snippets"
    assert assert_offsets_match_the_index(run, rag_index_dir) == len(run.snippets)
    assert any("do not occur verbatim" in w for w in run.warnings)
    assert run.short_answer == "Aspirin lowers the risk of another infarction."
    first, invented, uncited = run.cited_answer.sentences
    assert first.citations and not first.flagged
    assert invented.citations == () and invented.removed == ("99999999",) and invented.flagged
    assert uncited.citations == () and uncited.removed == () and uncited.flagged
    assert "99999999" not in run.cited_answer.text
    assert run.cited_answer.text.count("[") == 1
    assert any("2 sentence(s) flagged" in w for w in run.warnings)
    assert run.exact_answer.yesno == "yes"
    assert_citations_come_from_snippets(run)
    stages = [r.prompt.split(" ", 3)[:3] for r in llm_stub.received()]
    assert stages[0] == ["Write", "a", "search"]


EXPANSION_FAULTS = {
    "no-markers": (LlmReply(content="aspirin OR heart"), "no ##query## marker"),
    "malformed": (LlmReply(content="##aspirin AND (heart##"), "is malformed"),
    "http-500": (LlmReply(kind="status", status=500, body=b"x"), "did not answer"),
    "timeout": (LlmReply(kind="hang"), "did not answer"),
}


@pytest.mark.parametrize("fault", sorted(EXPANSION_FAULTS))
def test_failed_expansion_falls_back_to_the_questions_words(
    llm_stubs: MakeStub, openai_system: Callable[..., RagSystem], fault: str
) -> None:
    reply, reason = EXPANSION_FAULTS[fault]
    stub = llm_stubs(Script(expand=lambda p: reply))
    run = openai_system(stub, timeout=0.5).ask(ASPIRIN)
    assert run.expanded_query == question_query(ASPIRIN)
    note = next(w for w in run.warnings if w.startswith("query expansion failed"))
    assert reason in note and "searched for the question's words instead" in note
    assert run.documents[0].pmid == "1000001"


def test_a_models_query_too_broad_for_the_index_falls_back_to_the_questions_words(
    llm_stubs: MakeStub,
    openai_system: Callable[..., RagSystem],
    extractive: RagSystem,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rag.retrieval import index as index_module

    monkeypatch.setattr(index_module, "MAX_EXPANDED_TERMS", 3)  # the fixture index is small
    stub = llm_stubs(Script(expand=lambda p: LlmReply(content="##aspirin OR infarct* OR m*##")))
    run = openai_system(stub).ask(ASPIRIN)
    assert run.expanded_query == run.query_run == question_query(ASPIRIN)
    note = next(w for w in run.warnings if w.startswith("query expansion failed"))
    assert "'m*' matches too many index terms" in note and "question's words instead" in note
    assert run.documents[0].pmid == "1000001"
    # the same query typed by the user is theirs to narrow: refused with its column
    with pytest.raises(QueryTooBroadError) as caught:
        extractive.ask(ASPIRIN, query="aspirin OR infarct* OR m*")
    assert caught.value.position == 23


def test_a_model_failing_everywhere_still_gives_extractive_answers(
    llm_stubs: MakeStub,
    openai_system: Callable[..., RagSystem],
    extractive: RagSystem,
) -> None:
    stub = llm_stubs(lambda r: LlmReply(kind="status", status=500, body=b"down"))
    run = openai_system(stub).ask(ASPIRIN)
    plain = extractive.ask(ASPIRIN)
    assert run.snippets == plain.snippets
    assert run.cited_answer == plain.cited_answer and run.short_answer == plain.short_answer
    assert run.exact_answer == plain.exact_answer
    text = " | ".join(run.warnings)
    for part in ("query expansion failed", "snippet extraction", "short answer", "cited answer"):
        assert part in text
    assert all(not s.flagged for s in run.cited_answer.sentences)


def test_cited_answer_without_any_verifiable_citation_is_replaced(
    llm_stubs: MakeStub, openai_system: Callable[..., RagSystem]
) -> None:
    stub = llm_stubs(Script(cited=lambda p: LlmReply(content="A bold claim [12345678].")))
    run = openai_system(stub).ask(ASPIRIN)
    assert any("no sentence of the model's answer carried a citation" in w for w in run.warnings)
    assert run.cited_answer.sentences and all(not s.flagged for s in run.cited_answer.sentences)
    assert "12345678" not in run.cited_answer.text


def test_malformed_model_json_falls_back_per_stage(
    llm_stubs: MakeStub, openai_system: Callable[..., RagSystem]
) -> None:
    broken = LlmReply(content='{"snippets": [')
    stub = llm_stubs(
        Script(
            extract=lambda p: broken,
            rerank=lambda p: LlmReply(content="first one, then the other"),
            exact=lambda p: LlmReply(content="I think so"),
        )
    )
    run = openai_system(stub).ask(ASPIRIN)
    text = " | ".join(run.warnings)
    assert "the model gave no verbatim snippet; used the extractive snippets" in text
    assert 'reranking: the reply was not JSON {"ranking": [...]}' in text
    assert "exact answer: the model's reply 'I think so' is not the requested JSON" in text
    assert run.snippets and run.exact_answer.yesno == "yes"


def test_streamed_answers_are_reported_while_written(
    llm_stub: LlmStub, openai_system: Callable[[LlmStub], RagSystem]
) -> None:
    events: list[ProgressEvent] = []
    openai_system(llm_stub).ask(ASPIRIN, progress=events.append)
    writing = [e for e in events if e.state == "writing"]
    assert {e.part for e in writing} == {"short", "cited"}
    shorts = [e.text for e in writing if e.part == "short"]
    assert shorts[-1] == "Aspirin lowers the risk of another infarction."
    assert len(shorts) >= 2
    streamed = [r for r in llm_stub.received() if r.stream]
    assert len(streamed) == 2


def test_default_stages_follow_the_generator() -> None:
    stages = default_stages(ExtractiveGenerator(), RagSettings())
    assert stages.expand(ASPIRIN) == Expansion(question_query(ASPIRIN), "identity")


def test_a_bare_yes_or_no_reply_is_accepted_as_the_exact_answer(
    llm_stubs: MakeStub, openai_system: Callable[..., RagSystem]
) -> None:
    stub = llm_stubs(Script(exact=lambda p: LlmReply(content="No. The snippets disagree.")))
    run = openai_system(stub).ask(ASPIRIN)
    assert run.exact_answer.yesno == "no"
    assert not any(w.startswith("exact answer") for w in run.warnings)
    short_prompts = [r.prompt for r in stub.received() if r.prompt.startswith("Answer concisely")]
    assert len(short_prompts) == 1
    short_request = next(r for r in stub.received() if r.prompt.startswith("Answer concisely"))
    assert len(short_request.body["messages"]) == 2  # no worked example for the short answer
