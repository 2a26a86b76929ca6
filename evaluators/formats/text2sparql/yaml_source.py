"""Read a YAML document into plain values, safely: one document, no aliases, bounded depth.

YAML's anchors and aliases let a few bytes stand for a very large value (the "billion laughs"
document); no TEXT2SPARQL file uses them, so a document that does is refused. Scalars are read
with YAML 1.1's safe schema (``id: 1`` is an integer, ``en: yes`` would be a boolean), anything
else is a mapping (keys as written) or a list. Every problem is a ``DatasetFormatError``
with the line and column. The positions of the items of the top-level ``questions`` list are
kept so that errors about an entry can name its line.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from evaluators.formats.parsing.diagnostics import Diagnostics

# Deeper documents are refused (a TEXT2SPARQL file nests four levels).
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class YamlDocument:
    """A decoded document and the line (1-based) of each item of its ``questions`` list."""

    value: object
    question_lines: tuple[int, ...] = ()


def _loader() -> type[yaml.SafeLoader]:
    # libyaml's loader when PyYAML was built with it (much faster), the pure one otherwise
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # type: ignore[no-any-return]


def load_yaml(text: str, diag: Diagnostics) -> YamlDocument:
    """Decode one YAML document.

    Args:
        text: the decoded file.
        diag: the file's diagnostics (its source names the file in errors).

    Returns:
        The value and the lines of the ``questions`` items.

    Raises:
        DatasetFormatError: the text is not YAML, holds more than one document, uses anchors
            or aliases, or nests deeper than ``MAX_DEPTH``.
    """
    try:
        root = yaml.compose(text, Loader=_loader())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        column = mark.column + 1 if mark is not None else None
        problem = exc.problem or exc.context or "not YAML"
        raise diag.error(
            f"invalid YAML: {problem}; expected a TEXT2SPARQL questions file",
            line=line,
            column=column,
        ) from exc
    except (yaml.YAMLError, RecursionError) as exc:
        raise diag.error(f"invalid YAML ({str(exc)[:200]}); expected one YAML document") from exc
    if root is None:
        raise diag.error("the YAML document is empty; expected a TEXT2SPARQL questions file")
    value = _plain(root, diag)
    return YamlDocument(value, _question_lines(root))


def _plain(root: Node, diag: Diagnostics) -> object:
    """Return the node's value; refuses a node met twice (an alias) and deep nesting."""
    seen: set[int] = set()
    constructor = SafeConstructor()

    def visit(node: Node, depth: int) -> object:
        if id(node) in seen:
            raise diag.error(
                "YAML anchors and aliases are not accepted; write every value out",
                line=node.start_mark.line + 1,
            )
        seen.add(id(node))
        if depth > MAX_DEPTH:
            raise diag.error(
                f"the YAML nests deeper than {MAX_DEPTH} levels", line=node.start_mark.line + 1
            )
        if isinstance(node, ScalarNode):
            return _scalar(constructor, node, diag)
        if isinstance(node, SequenceNode):
            return [visit(child, depth + 1) for child in node.value]
        if isinstance(node, MappingNode):
            out: dict[str, object] = {}
            for key, child in node.value:
                # keys as written: a language key "no" stays "no", not YAML 1.1's false
                name = key.value if isinstance(key, ScalarNode) else visit(key, depth + 1)
                out[str(name)] = visit(child, depth + 1)
            return out
        raise diag.error("unexpected YAML node", line=node.start_mark.line + 1)

    return visit(root, 0)


def _scalar(constructor: SafeConstructor, node: ScalarNode, diag: Diagnostics) -> object:
    try:
        return constructor.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, OverflowError) as exc:
        raise diag.error(
            f"unreadable YAML value {node.value[:40]!r}", line=node.start_mark.line + 1
        ) from exc


def _question_lines(root: Node) -> tuple[int, ...]:
    if not isinstance(root, MappingNode):
        return ()
    for key, value in root.value:
        if (
            isinstance(key, ScalarNode)
            and key.value == "questions"
            and isinstance(value, SequenceNode)
        ):
            return tuple(item.start_mark.line + 1 for item in value.value)
    return ()
