"""Griffe extension for the API reference (mkdocs.yml): Sphinx roles in docstrings as code.

The docstrings cross-reference with Sphinx roles (``:class:`~ene_core.engine.necessity.NecessityEngine```,
``:func:`prune```), which Markdown would print as written. This turns each into inline code of
the name (the last part only after ``~``, as Sphinx shows it).
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

_ROLE = re.compile(
    r":(?:py:)?(?:class|func|meth|mod|attr|exc|data|obj):`(?P<tilde>~?)(?P<name>[^`]+)`"
)


def roles_as_code(text: str) -> str:
    """``:class:`~a.b.C``` -> ```C```; ``:func:`a.f``` -> ```a.f```."""
    return _ROLE.sub(
        lambda m: f"`{m['name'].rsplit('.', 1)[-1] if m['tilde'] else m['name']}`", text
    )


class RstToMarkdown(Extension):
    """Rewrite the Sphinx roles of every docstring once the object tree is loaded."""

    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = roles_as_code(obj.docstring.value)
