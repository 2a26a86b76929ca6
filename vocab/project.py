"""The qabench vocabulary (namespace ``https://w3id.org/qabench/vocab#``, prefix ``qab``).

The closed term list below must match ``vocab/project.ttl`` exactly; a test checks both ways.
Where GERBIL's vocabulary already has a term that means the same, we use GERBIL's term
(``vocab.standard.GERBIL``) and ``project.ttl`` states the alignment.
"""

from __future__ import annotations

from vocab.namespaces import Namespace

QAB_IRI = "https://w3id.org/qabench/vocab#"

CLASSES = [
    # benchmark data
    "Dataset", "DatasetVersion", "Question", "AnswerSet", "Annotation", "KnowledgeBase",
    "AnswerType", "AnswerTypeCount", "Snippet", "AnswerEntity", "CheckReport", "CheckFinding",
    # experiments
    "Experiment", "Task", "System", "Profile", "ExperimentType", "TaskState", "Measure",
    "UndefinedValue", "QuestionResult", "MatchedPair", "SoftwareRelease",
    # retrieval-augmented answering
    "RagRun", "RetrievedDocument", "Citation", "AnswerSentence",
    # problems (RFC 9457 problem types)
    "Problem",
]

PROPERTIES = [
    # datasets and versions
    "version", "versionNumber", "sha256", "sourceFormat", "sourcePath", "questionCount",
    "answerTypeCount", "count", "knowledgeBase", "kbVersion", "split", "catalogName",
    "officialLocation", "checkReport", "finding", "severity", "code", "message", "line",
    "column", "warning", "graph",
    # questions
    "question", "questionId", "position", "text", "keywords", "answerType", "answerTypeLabel",
    "aggregation", "onlyDbo", "hybrid", "outOfScope", "sparql", "pseudoQuery",
    "schemalessQuery", "hasGoldAnswers", "answerSet", "answer", "booleanAnswer",
    "answerVariable", "answerItemType", "annotation", "charBegin", "charEnd", "annotationType",
    "annotatedText", "resource", "confidence", "inLanguage",
    # BioASQ task b
    "bioasqType", "relevantDocument", "snippet", "document", "beginSection", "endSection",
    "offsetInBeginSection", "offsetInEndSection", "concept", "exactAnswer", "answerEntity",
    "synonym", "idealAnswer", "rank",
    # experiments and tasks
    "task", "system", "systemKind", "endpointUrl", "owner", "datasetVersion", "profile",
    "experimentType", "state", "stateMessage", "stateCode", "published", "publishedAt",
    "accessTokenHash", "qabenchVersion", "gitRevision", "measure", "reason", "questionResult",
    "goldValue", "systemValue", "matchedPair", "matchRule", "kbEndpoint", "kbGraph",
    "timeoutSeconds", "concurrency",
    # retrieval-augmented answering
    "expandedQuery", "queryEdited", "queryRun", "retrievedDocument", "pmid", "score",
    "shortAnswer", "citedAnswer", "sentence", "cites", "flagged", "generator", "model",
    "settings", "stageMillis",
    # measures that GERBIL's vocabulary does not have
    "processedCount", "processedMacroPrecision", "processedMacroRecall", "processedF1",
    "globalMacroPrecision", "globalMacroRecall", "globalF1", "inKbMicroF1", "inKbMacroF1",
    "eeMicroF1", "eeMacroF1", "macroF1CiLow", "macroF1CiHigh", "meanAveragePrecision",
    "geometricMeanAveragePrecision", "meanPrecision", "meanRecall", "meanF1",
    "averagePrecision", "accuracy", "f1Yes", "f1No", "strictAccuracy", "lenientAccuracy",
    "meanReciprocalRank", "reciprocalRank", "rouge2Recall", "rouge2F1", "rougeSU4Recall",
    "rougeSU4F1", "questionsEvaluated",
]

INDIVIDUALS = [
    # answer types (QALD "answertype")
    "Resource", "String", "Number", "Date", "Boolean",
    # task states
    "Queued", "Running", "Finished", "Failed", "Interrupted", "Aborted",
    # scoring profiles
    "StrictProfile", "GerbilProfile", "GerbilLegacyProfile", "QaldClassicProfile",
    "BioasqProfile",
    # problem types
    "MalformedQuery", "MalformedDataset", "NotFound", "MethodNotAllowed", "NotAcceptable",
    "Conflict", "UnsupportedMediaType", "QueryTimeout", "PayloadTooLarge", "Forbidden",
    "InternalError", "BadRequest",
]

QAB = Namespace(QAB_IRI, [*CLASSES, *PROPERTIES, *INDIVIDUALS])
