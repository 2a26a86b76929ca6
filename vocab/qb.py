"""The RDF Data Cube terms qabench uses (W3C Recommendation, 2014)."""

from __future__ import annotations

from vocab.namespaces import Namespace

QB = Namespace(
    "http://purl.org/linked-data/cube#",
    [
        "DataSet",
        "Observation",
        "DataStructureDefinition",
        "ComponentSpecification",
        "DimensionProperty",
        "MeasureProperty",
        "AttributeProperty",
        "ComponentProperty",
        "dataSet",
        "structure",
        "component",
        "dimension",
        "measure",
        "attribute",
        "measureType",
        "componentProperty",
        "order",
        "componentRequired",
        "codeList",
        "componentAttachment",
        "Slice",
        "slice",
        "observation",
        "CodedProperty",
    ],
)
