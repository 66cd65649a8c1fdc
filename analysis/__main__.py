"""`python3 -m analysis ...` from the repository root, or `python3 PATH/TO/analysis ...` from
anywhere (run as a directory or file, there is no package context, so the repository root is
put on sys.path first)."""
import os
import sys

if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from analysis.cli import main  # noqa: E402

sys.exit(main())
