"""Fake UCI engine for tests: mode 'random' declaring every option type (spin, check, combo,
string, button), tunables among options that are not (EVERY_OPTIONS and EVERY_DECLARED in
_fakeuci.py). Args: [--after N] [--once FILE]."""
import _fakeuci

_fakeuci.main('random', _fakeuci.EVERY_OPTIONS, (), _fakeuci.EVERY_DECLARED)
