"""The move model at the engine's boundary: its value, files and numpy reference of its scores
(``modelfile``), the python-chess reference of its features and scores and the ordering prior
(``chessref``), and its features and scores from the core (``corescores``). The core's jitted
scorer is ``engine/core/movemodel.py``: the same concept at the layer below. Import from the
modules."""
