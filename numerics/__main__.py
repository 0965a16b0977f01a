"""``python -m numerics`` runs the ``attnflow`` command line."""
import sys

from numerics.cli import main

sys.exit(main())
