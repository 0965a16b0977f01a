"""``python -m numerics`` runs the ``attnflow`` command line."""
import sys

from .cli import main

sys.exit(main())
