"""One module per ``qabench`` subcommand group; each exposes ``register(subparsers)``.

To add a group, write ``server/commands/<group>.py`` and list it in ``COMMAND_MODULES``.
"""

from __future__ import annotations

from server.commands import (
    answer,
    ask,
    datasets,
    evaluate,
    experiment,
    kb,
    rag_index,
    serve,
    storeio,
)

COMMAND_MODULES = [datasets, storeio, evaluate, kb, rag_index, serve, experiment, ask, answer]
