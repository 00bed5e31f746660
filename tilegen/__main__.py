"""`python -m tilegen`: the same as the `tilegen` command."""
import sys

from .tools.cli import main

sys.exit(main())
