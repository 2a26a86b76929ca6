"""Allow ``python -m server`` to run the ``qabench`` command line."""

from server.cli import main

raise SystemExit(main())
