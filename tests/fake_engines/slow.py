"""Fake UCI engine for tests: mode 'slow' (see _fakeuci.py). Args: [--after N] [--once FILE]."""
import _fakeuci

_fakeuci.main('slow')
