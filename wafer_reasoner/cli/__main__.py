"""``python -m wafer_reasoner.cli`` = the ``wafer-reasoner`` command."""

from wafer_reasoner.cli import main

raise SystemExit(main())
