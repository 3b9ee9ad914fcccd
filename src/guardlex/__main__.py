"""``python -m guardlex``: the same as the ``guardlex`` command."""

import sys

from guardlex.cli import main

sys.exit(main())
