"""Players and engines as the command line names them: ``SPEC[:WEIGHTS|NET]`` -> :class:`PlayerRef`.

The one parser of the grammar (docs/usage, "Players"): ``SPEC`` is an engine spec, a name under
``engines/`` or a ``.toml`` path (``reference``, the old spelling of ``shannon``, still reads as
it: :func:`old_spellings` names it for the command line's note); after ``:`` a file,
the spec's weights or, for a spec that evaluates with a net, a net file. A bare weights file
(``tuned.json``) means ``shannon:tuned.json``. :func:`parse_player_ref` reads a player
(``evotune match A B``, opponents); :func:`parse_engine_ref` reads ``--engine`` (a spec itself, as
:func:`~evotune.spec.file.resolve_engine_spec_path` finds one, or ``SPEC:FILE``). What the file is
(weights or a net) is the spec's to say: this module only splits the text and reads no file.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..paths import ENGINES_DIR
from .file import resolve_engine_spec_path

REFERENCE_ALIAS = "reference"
"""The old player name of the shannon spec at its reference values (before round 5 the built-in
engine as a player was called 'reference'; that word now means only a spec's reference values):
still read, the command line notes the new name."""
DEFAULT_SPEC = "shannon"
"""The spec of a bare weights file and of :data:`REFERENCE_ALIAS`."""
SYNTAX = ("give SPEC[:WEIGHTS]: an engine spec (shannon, a name under engines/ or a "
          ".toml path), optionally ':' and a weights file (.json, e.g. an 'evotune export "
          "--format json' output)")


@dataclass(frozen=True)
class PlayerRef:
    """A player or engine named on the command line: an engine spec and the file it plays."""

    text: str
    """The text as given."""
    spec: str
    """The spec token as given: a name under engines/, a .toml path, or 'reference'."""
    file: str | None = None
    """The file after ':' (weights, or a net for a net spec) or a bare weights file; None: the
    spec plays as it is."""

    @property
    def spec_name(self) -> str:
        """The spec to read (``reference`` is ``shannon``)."""
        return DEFAULT_SPEC if self.spec == REFERENCE_ALIAS else self.spec

    @property
    def is_reference(self) -> bool:
        """True when the spec was named by its alias ``reference``."""
        return self.spec == REFERENCE_ALIAS

    @property
    def bare_file(self) -> bool:
        """True when the text was a weights file alone (``shannon`` implied)."""
        return self.file is not None and self.file == self.text

    def as_pair(self) -> tuple[str, str | None]:
        """(spec token, file or None)."""
        return self.spec, self.file


def old_spellings(texts) -> tuple[str, ...]:
    """The notes for players in ``texts`` (``SPEC[:WEIGHTS]``, lists comma-separated) named by an
    old spelling: ``reference`` for ``shannon``. One note per old word, in a stable order."""
    heads = {t.strip().split(":", 1)[0] for text in texts for t in str(text).split(",")}
    if REFERENCE_ALIAS in heads and not Path(REFERENCE_ALIAS).exists():
        return (f"the player '{REFERENCE_ALIAS}' is now called '{DEFAULT_SPEC}' (the built-in "
                f"engine's spec name); '{REFERENCE_ALIAS}' still works",)
    return ()


def is_player_spec(token: str) -> bool:
    """True when ``token`` names an engine spec in a player: ``reference``, an existing .toml
    file, or a name (no '/') under engines/."""
    if token == REFERENCE_ALIAS:
        return True
    p = Path(token)
    if p.suffix.lower() == ".toml":
        return p.is_file()
    return bool(token) and "/" not in token and (ENGINES_DIR / f"{token}.toml").is_file()


def parse_player_ref(text: str) -> PlayerRef:
    """``SPEC[:WEIGHTS]`` -> PlayerRef; ConfigError with one line when neither a spec nor a file
    is named. The spec is the shortest head before a ':' that names one (a path may hold ':');
    a bare existing non-.toml file is ``shannon`` with that file."""
    if not text or not text.strip():
        raise ConfigError(f"empty player name; {SYNTAX}")
    if is_player_spec(text):
        return PlayerRef(text, text)
    p = Path(text)
    if p.is_file():
        if p.suffix.lower() == ".toml":
            return PlayerRef(text, text)
        return PlayerRef(text, DEFAULT_SPEC, text)
    for i, ch in enumerate(text):
        if ch == ":" and is_player_spec(text[:i]):
            file = text[i + 1:]
            if not file:
                raise ConfigError(f"player '{text}': nothing after ':'; give a weights file, "
                                  f"e.g. {text}tuned.json, or the bare spec {text[:i]}")
            return PlayerRef(text, text[:i], file)
    head = text.split(":", 1)[0]
    if ":" in text:
        raise ConfigError(f"player '{text}': '{head}' is not an engine spec; {SYNTAX}")
    raise ConfigError(f"player '{text}': no such file or engine spec; {SYNTAX}")


def parse_engine_ref(text: str) -> PlayerRef:
    """``--engine``: an engine spec itself (a path or a name under engines/: PlayerRef without a
    file) or ``SPEC:FILE`` (:func:`parse_player_ref`); the spec-not-found ConfigError when the
    text has no ':' and names no spec."""
    try:
        resolve_engine_spec_path(text)
    except ConfigError:
        if ":" not in text:
            raise
        return parse_player_ref(text)
    return PlayerRef(text, text)
