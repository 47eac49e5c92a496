"""``python -m cuda2nki``: the same as the ``cuda2nki`` command."""

import sys

from cuda2nki.cli.main import main

sys.exit(main())
