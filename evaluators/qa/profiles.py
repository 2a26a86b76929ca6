"""Scoring profiles: named, documented sets of matching and scoring rules.

``strict`` is the default; ``gerbil`` reproduces GERBIL QA as it behaves today, ``gerbil-legacy``
its answer matching from June 2019 to September 2024 (QALD-9-plus and QALD-10), ``gerbil-2018``
the counter of 2018 to June 2019 (the QALD-8 and QALD-9 challenges), ``qald-classic`` the
classic QALD evaluation script, ``text2sparql`` the official TEXT2SPARQL'25 evaluation,
``text2sparql-2026`` the official TEXT2SPARQL'26 evaluation (per-language averages changed) and
``text2sparql-corrected`` the same measures with their flaws fixed; ``execution-em`` (SciQA,
FIRESPARQL's rule) and ``mirage`` (MIRAGE's accuracy) are scored by families of their own.
docs/scoring.md lists every difference and which profile reproduces which published era.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pyoxigraph import NamedNode

from evaluators.errors import UnknownSubExperimentError
from evaluators.model import AnswerReading
from evaluators.qa.gerbil_counter import Era
from evaluators.qa.markings import MarkingMode
from evaluators.results import BIOASQ_PROFILE, QA, QA_TYPES
from vocab.project import QAB


class AnswerMatching(StrEnum):
    """How the answers of one question are compared."""

    STRICT = "strict"
    GERBIL = "gerbil"
    GERBIL_LEGACY = "gerbil-legacy"
    GERBIL_2018 = "gerbil-2018"
    QALD_CLASSIC = "qald-classic"
    TEXT2SPARQL = "text2sparql"
    TEXT2SPARQL_CORRECTED = "text2sparql-corrected"
    TEXT2SPARQL_2026 = "text2sparql-2026"
    # issue 39: scored by their own families (``family_scored``)
    EXECUTION_EM = "execution-em"
    MIRAGE = "mirage"


@dataclass(frozen=True, slots=True)
class Profile:
    """One scoring profile.

    Attributes:
        id: the stable id (``--profile``).
        label: a short human name.
        description: one sentence for listings.
        term: the profile's individual in the qabench vocabulary.
        answers: the answer-matching family.
        markings: how C2KB/P2KB/RE2KB/AIT2KB markings come from queries.
        experiment_types: the experiment types evaluated, in GERBIL's order.
        classify_emerging: C2KB-style sub-experiments split markings into InKB and EE, and any two
            EE markings match (GERBIL).
        gerbil_answer_type: read ``answertype`` as GERBIL does (upper-cased, "RESOUCE" fixed,
            anything else ignored) instead of the parsed answer type.
        classic_aggregation: also report the classic script's processed/global macro values.
        reading: which parts of an answer object count when it has both a boolean and bindings.
        beyond_strict: for a historical counter, one line on what it counts as right that
            ``strict`` does not (pages print it with the number of answers it changes).
    """

    id: str
    label: str
    description: str
    term: NamedNode
    answers: AnswerMatching
    markings: MarkingMode
    experiment_types: tuple[str, ...]
    classify_emerging: bool
    gerbil_answer_type: bool
    reading: AnswerReading
    classic_aggregation: bool = False
    beyond_strict: str = ""

    @property
    def is_text2sparql(self) -> bool:
        """Return whether answers are scored with the TEXT2SPARQL measures (trec_eval's)."""
        return self.answers in TEXT2SPARQL_MATCHING

    @property
    def family_scored(self) -> bool:
        """Return whether a family of its own scores this profile, not ``evaluators.qa``
        (``execution-em``: ``evaluators.sciqa``; ``mirage``: ``evaluators.mirage``)."""
        return self.answers in (AnswerMatching.EXECUTION_EM, AnswerMatching.MIRAGE)

    @property
    def is_gerbil(self) -> bool:
        """Return whether answers are matched by one of GERBIL's counters."""
        return self.answers in GERBIL_ERAS

    @property
    def era(self) -> Era:
        """Return which of GERBIL's counters matches the answers (``Era.Y2024`` for others).

        >>> profile("gerbil-2018").era
        <Era.Y2018: '2018'>
        """
        return GERBIL_ERAS.get(self.answers, Era.Y2024)


# The TEXT2SPARQL answer matchings (trec_eval's measures over result sets).
TEXT2SPARQL_MATCHING = frozenset(
    {
        AnswerMatching.TEXT2SPARQL,
        AnswerMatching.TEXT2SPARQL_CORRECTED,
        AnswerMatching.TEXT2SPARQL_2026,
    }
)

# The GERBIL counter each GERBIL answer matching reproduces.
GERBIL_ERAS = {
    AnswerMatching.GERBIL: Era.Y2024,
    AnswerMatching.GERBIL_LEGACY: Era.Y2019,
    AnswerMatching.GERBIL_2018: Era.Y2018,
}


PROFILES: dict[str, Profile] = {
    p.id: p
    for p in (
        Profile(
            "strict",
            "strict",
            "GERBIL's measures with its known defects fixed: typed literal matching, URI "
            "normalisation, owl:sameAs on both sides, rdf:type feeding AIT2KB, property paths.",
            QAB.StrictProfile,
            AnswerMatching.STRICT,
            MarkingMode.STRICT,
            QA_TYPES,
            classify_emerging=False,
            gerbil_answer_type=False,
            # a result is a SELECT result when it has bindings (SPARQL 1.1 JSON results)
            reading=AnswerReading.BINDINGS_FIRST,
        ),
        Profile(
            "gerbil",
            "GERBIL QA",
            "GERBIL QA as it behaves today (QuestionAnswering branch, 2024 matching).",
            QAB.GerbilProfile,
            AnswerMatching.GERBIL,
            MarkingMode.GERBIL,
            QA_TYPES,
            classify_emerging=True,
            gerbil_answer_type=True,
            reading=AnswerReading.UNION,  # NLIWOD's loader adds the boolean and the bindings
        ),
        Profile(
            "gerbil-legacy",
            "GERBIL QA 2019-2024",
            "GERBIL QA's matching from June 2019 to September 2024, which produced the "
            "published QALD-9-plus and QALD-10 numbers.",
            QAB.GerbilLegacyProfile,
            AnswerMatching.GERBIL_LEGACY,
            MarkingMode.GERBIL,
            QA_TYPES,
            classify_emerging=True,
            gerbil_answer_type=True,
            reading=AnswerReading.UNION,  # NLIWOD's loader adds the boolean and the bindings
            beyond_strict="any two answers outside the known knowledge bases match (a wrong "
            "literal, number, date or boolean against the gold one counts as right)",
        ),
        Profile(
            "gerbil-2018",
            "GERBIL QA 2017-2019",
            "GERBIL QA's counter from 2017 to June 2019 (versions 0.2.1 to 0.2.3), which "
            "produced the published QALD-8 and QALD-9 challenge numbers.",
            QAB.Gerbil2018Profile,
            AnswerMatching.GERBIL_2018,
            MarkingMode.GERBIL,
            QA_TYPES,
            classify_emerging=True,
            gerbil_answer_type=True,
            reading=AnswerReading.UNION,  # NLIWOD's loader adds the boolean and the bindings
            beyond_strict="a system answer outside the known knowledge bases (a literal, or an "
            "IRI of another namespace) matches any gold resource outside them",
        ),
        Profile(
            "qald-classic",
            "classic QALD script",
            "The classic QALD evaluation script (QALD-1 to QALD-6): macro P and R over "
            "processed and over all questions, F1 of the means.",
            QAB.QaldClassicProfile,
            AnswerMatching.QALD_CLASSIC,
            MarkingMode.STRICT,
            (QA,),
            classify_emerging=False,
            gerbil_answer_type=False,
            reading=AnswerReading.BINDINGS_FIRST,  # the script's rule (qald-classic.md)
            classic_aggregation=True,
        ),
        Profile(
            "text2sparql",
            "TEXT2SPARQL'25",
            "The official TEXT2SPARQL'25 evaluation (the challenge client, pytrec_eval 0.5): "
            "set P/R/F1 over flat result sets, nDCG on ordered questions, ranked by set_F_ndcg.",
            QAB.Text2SparqlProfile,
            AnswerMatching.TEXT2SPARQL,
            MarkingMode.STRICT,
            (QA,),
            classify_emerging=False,
            gerbil_answer_type=False,
            reading=AnswerReading.BINDINGS_FIRST,  # a result is an ASK or a SELECT result
        ),
        Profile(
            "text2sparql-2026",
            "TEXT2SPARQL'26",
            "The official TEXT2SPARQL'26 evaluation: the 2025 measures, plus an average object "
            "per language whose set_F_ndcg adds that language's mean nDCG once.",
            QAB.Text2Sparql2026Profile,
            AnswerMatching.TEXT2SPARQL_2026,
            MarkingMode.STRICT,
            (QA,),
            classify_emerging=False,
            gerbil_answer_type=False,
            reading=AnswerReading.BINDINGS_FIRST,  # a result is an ASK or a SELECT result
        ),
        Profile(
            "text2sparql-corrected",
            "TEXT2SPARQL corrected",
            "The TEXT2SPARQL measures with the official evaluation's flaws fixed: booleans by "
            "value, RDF terms, the system's row order, means over the questions asked.",
            QAB.Text2SparqlCorrectedProfile,
            AnswerMatching.TEXT2SPARQL_CORRECTED,
            MarkingMode.STRICT,
            (QA,),
            classify_emerging=False,
            gerbil_answer_type=False,
            reading=AnswerReading.BINDINGS_FIRST,
        ),
    )
}


# Issue 39: benchmarks scored by families of their own (``Profile.family_scored``).
PROFILES.update(
    {
        p.id: p
        for p in (
            Profile(
                "execution-em",
                "execution EM (FIRESPARQL)",
                "Execution-based exact match as FIRESPARQL scores SciQA: the set of result rows "
                "(datatype suffixes cut) equals the gold's; EM over successful queries and all.",
                QAB.ExecutionEmProfile,
                AnswerMatching.EXECUTION_EM,
                MarkingMode.STRICT,
                (QA,),
                classify_emerging=False,
                gerbil_answer_type=False,
                reading=AnswerReading.BINDINGS_FIRST,
            ),
            Profile(
                "mirage",
                "MIRAGE accuracy",
                "MIRAGE's accuracy: the chosen option (its answer-locating rule) against the "
                "gold option, per dataset and on average.",
                QAB.MirageProfile,
                AnswerMatching.MIRAGE,
                MarkingMode.STRICT,
                (QA,),
                classify_emerging=False,
                gerbil_answer_type=False,
                reading=AnswerReading.BINDINGS_FIRST,
            ),
        )
    }
)


def profile(profile_id: str) -> Profile:
    """Return the profile called ``profile_id``.

    Raises:
        UnknownSubExperimentError: for an unknown id; the message lists the known ones.

    >>> profile("gerbil").answers
    <AnswerMatching.GERBIL: 'gerbil'>
    """
    try:
        return PROFILES[profile_id]
    except KeyError:
        known = ", ".join(PROFILES)
        raise UnknownSubExperimentError(
            f"Unknown scoring profile {profile_id!r}; expected one of: {known}"
        ) from None


# Every profile id with its term in the qabench vocabulary: the one list of profile ids.
PROFILE_TERMS: dict[str, NamedNode] = {
    **{p.id: p.term for p in PROFILES.values()},
    BIOASQ_PROFILE: QAB.BioasqProfile,
}


def profile_order(profile: str) -> tuple[int, str]:
    """Return the sort key that lists profiles as the registry does: ``strict`` first, then
    GERBIL's eras newest first, the classic script, TEXT2SPARQL, BioASQ; unknown ones last.

    >>> sorted(["gerbil-legacy", "qald-classic", "strict", "custom"], key=profile_order)
    ['strict', 'gerbil-legacy', 'qald-classic', 'custom']
    """
    names = list(PROFILE_TERMS)
    return (names.index(profile), "") if profile in names else (len(names), profile)
