"""``python -m attnflow`` runs the ``attnflow`` command line (the same as the ``attnflow`` script)."""
import sys

from numerics.cli import main

sys.exit(main())
