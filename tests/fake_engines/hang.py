"""Fake UCI engine for tests: mode 'hang' (see _fakeuci.py). Args: [--after N] [--once FILE]."""
import _fakeuci

_fakeuci.main('hang')
