"""Parse the OKBQA NLQ benchmark (a JSON array of flat per-language entries) into a ``Dataset``.

Each entry is ``{id, lang, question, answer, type, sparql}``. Entries sharing an id are merged
into one question with one text per language. ``answer`` is a single label; the English entry's
label (else the first entry's) becomes the question's only answer, a plain string literal, and
the English entry's SPARQL (else the first one given) becomes ``Question.sparql``: the other
languages' labels and queries target other knowledge bases (e.g. Korean DBpedia). Entries with
an empty-string id cannot be merged or matched and are skipped with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyoxigraph import Literal

from evaluators.formats.parsing.diagnostics import Diagnostics
from evaluators.formats.parsing.jsonfield import (
    check_keys,
    expect_list,
    expect_object,
    identifier,
    item,
    opt_str,
    required,
)
from evaluators.formats.parsing.question_fields import TextCollector, is_out_of_scope, stripped
from evaluators.model import AnswerSet, Dataset, Question, SourceFormat

_KEYS = frozenset({"id", "lang", "question", "answer", "type", "sparql"})


@dataclass(slots=True)
class _Group:
    texts: TextCollector
    # (language, answer, sparql) per entry, in file order
    entries: list[tuple[str, str | None, str | None]] = field(default_factory=list)

    def pick(self, index: int) -> str | None:
        english = [e[index] for e in self.entries if e[0] == "en" and e[index] is not None]
        given = english or [e[index] for e in self.entries if e[index] is not None]
        return given[0] if given else None


def parse(doc: object, diag: Diagnostics) -> Dataset:
    """Parse a decoded NLQ document.

    Args:
        doc: the decoded JSON value (an array of entries).
        diag: the file's diagnostics.

    Returns:
        The dataset, one question per distinct id, in order of first appearance.

    Raises:
        DatasetFormatError: the document is not an array of entries, or an entry lacks an id.
    """
    groups: dict[str, _Group] = {}
    for i, entry in enumerate(expect_list(doc, "$", diag)):
        where = item("$", i)
        obj = expect_object(entry, where, diag)
        check_keys(obj, _KEYS, "NLQ entry", where, diag)
        raw_id = required(obj, "id", where, diag)
        if raw_id == "":
            diag.warn(f"skipped entries with a blank id (first at {where})", key=("blank-id",))
            continue
        qid = identifier(raw_id, where + ".id", diag)
        group = groups.setdefault(qid, _Group(TextCollector(diag, qid)))
        language = (opt_str(obj, "lang", where, diag) or "").strip() or "en"
        text = opt_str(obj, "question", where, diag)
        if text is not None:
            group.texts.add_text(language, text)
        answer = opt_str(obj, "answer", where, diag)
        group.entries.append((language, answer, stripped(opt_str(obj, "sparql", where, diag))))
    questions = tuple(_question(qid, group) for qid, group in groups.items())
    return Dataset(SourceFormat.NLQ, questions, warnings=diag.warnings())


def _question(qid: str, group: _Group) -> Question:
    answer = group.pick(1)
    sparql = group.pick(2)
    answers = None
    if answer is not None:
        label = answer.strip()
        answers = (AnswerSet((Literal(label),)) if label else AnswerSet(),)
    return Question(
        id=qid,
        texts=group.texts.build(),
        sparql=sparql,
        answers=answers,
        out_of_scope=is_out_of_scope(sparql),
    )
