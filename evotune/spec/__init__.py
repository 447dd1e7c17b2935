"""The engine spec: what a player is, as data.

One package for the concept (issue 36): :mod:`~evotune.spec.model` (EngineSpec and WeightParam,
the spec as values), :mod:`~evotune.spec.file` (the TOML reader of spec files, the only one),
:mod:`~evotune.spec.start` (a spec started from earlier weights and its checksum),
:mod:`~evotune.spec.searchsettings` (SearchSettings: the built-in engine's search and its weights),
:mod:`~evotune.spec.features` (the feature sets' names, sizes and layout; constants the numba
core compiles in) and :mod:`~evotune.spec.player` (the player grammar ``SPEC[:WEIGHTS|NET]``,
parsed once into a typed reference).

This ``__init__`` imports nothing: the numba core imports :mod:`~evotune.spec.features` alone.
"""
