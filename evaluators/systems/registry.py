"""Built-in systems: the ``gold`` sanity system and the registry ``server`` adds its own to.

``evaluators`` never imports ``rag``, so the RAG system is registered by ``server.ask.qa_system``
at start-up; a registry is built per runner, never kept at module level.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evaluators.errors import UnknownSystemError
from evaluators.model import Question
from evaluators.systems.protocol import QASystem


class GoldSystem:
    """The ``gold`` sanity system: answers every question with its gold data."""

    def answer(self, question: Question, language: str) -> Question:
        """Return the gold question itself."""
        return question


SystemFactory = Callable[[], QASystem]


@dataclass(frozen=True, slots=True)
class BuiltinInfo:
    """A registered built-in system."""

    name: str
    description: str
    concurrency: int


class SystemRegistry:
    """Built-in systems by name; ``server/`` adds factories (e.g. the RAG system) at start-up."""

    def __init__(self) -> None:
        self._factories: dict[str, tuple[BuiltinInfo, SystemFactory]] = {}

    def register(
        self, name: str, factory: SystemFactory, *, description: str = "", concurrency: int = 1
    ) -> None:
        """Add a built-in system.

        Args:
            name: the name used on the command line and in the store.
            factory: builds the system when a task needs it (may load models).
            description: one line for listings and the system's ``dct:description``.
            concurrency: how many questions may be asked at the same time.

        Raises:
            ValueError: if the name is taken or ``concurrency`` is below 1.
        """
        if name in self._factories:
            raise ValueError(f"A built-in system called {name!r} is already registered")
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self._factories[name] = (BuiltinInfo(name, description, concurrency), factory)

    def names(self) -> tuple[str, ...]:
        """Return the registered names, sorted."""
        return tuple(sorted(self._factories))

    def info(self, name: str) -> BuiltinInfo:
        """Return what is known about a built-in system.

        Raises:
            UnknownSystemError: if no system of that name is registered.
        """
        try:
            return self._factories[name][0]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise UnknownSystemError(
                f"No built-in system called {name!r}; registered: {known}"
            ) from None

    def create(self, name: str) -> QASystem:
        """Build the named system.

        Raises:
            UnknownSystemError: if no system of that name is registered.
        """
        self.info(name)
        return self._factories[name][1]()


def builtin_registry() -> SystemRegistry:
    """Return a registry holding the systems ``evaluators`` itself provides (``gold``)."""
    registry = SystemRegistry()
    registry.register(
        "gold", GoldSystem, description="Answers with the gold data (sanity check).", concurrency=8
    )
    return registry
