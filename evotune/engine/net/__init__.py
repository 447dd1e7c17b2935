"""A net (NNUE) at the engine's boundary: its value, files and numpy reference (``network``), its
inputs and buckets (``inputs``), the bytes of its files (``fileformat``), its output layer as
weights (``outputlayer``) and its place in the core's state (``corestate``). The core's
incremental evaluation is ``engine/core/nnue.py``. Import from the modules."""
