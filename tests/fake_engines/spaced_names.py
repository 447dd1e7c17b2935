"""Fake UCI engine for tests: mode 'random' with option names holding spaces and parentheses
(SPACED_OPTIONS in _fakeuci.py). Args: [--after N] [--once FILE]."""
import _fakeuci

_fakeuci.main('random', _fakeuci.SPACED_OPTIONS, _fakeuci.SPACED_STRINGS)
