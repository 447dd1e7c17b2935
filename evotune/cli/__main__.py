"""``python -m evotune.cli``: the console entry point."""
from . import main

main()
