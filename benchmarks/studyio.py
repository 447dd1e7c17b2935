"""What the study scripts of benchmarks/ share: their results file (imported as ``studyio`` when
a script runs as ``python benchmarks/NAME.py``, whose folder is then first on sys.path)."""
from __future__ import annotations

import json
import os
from pathlib import Path


class Results:
    """``OUT/results.json``: every finished measurement under its key (written after each, through
    a temporary file and a rename, so a killed study keeps what it finished)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = json.loads(path.read_text()) if path.exists() else {}

    def get(self, key: str):
        return self.data.get(key)

    def put(self, key: str, value) -> None:
        self.data[key] = value
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.path)
