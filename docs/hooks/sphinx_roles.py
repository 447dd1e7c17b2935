"""mkdocs hook: show the Sphinx roles of evotune's docstrings as plain code.

Docstrings are written as plain text with Sphinx roles (``:class:`Store```, ``:func:`~a.b.f```).
mkdocstrings renders the role's name in front of the code span; this hook drops it (and the
module path of a ``~`` reference), so ``:class:`~evotune.errors.ConfigError``` reads
``ConfigError``. It changes no link and resolves nothing, so it cannot break the strict build.
"""
import re

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):<code>(~?)([^<]*)</code>")


def _plain(match: re.Match) -> str:
    tilde, target = match.group(1), match.group(2)
    return f"<code>{target.rsplit('.', 1)[-1] if tilde else target}</code>"


def on_page_content(html, page, config, files):
    return _ROLE.sub(_plain, html)
