"""`python -m engine.cli`: the same as the `engine` command (older installed
hook commands run it this way)."""

import sys

from .main import main

sys.exit(main())
