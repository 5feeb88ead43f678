"""MkDocs hooks: the README is the site's home page; repository files the pages link are in it.

The pages are written to read on GitHub: they link each other and files of the repository with
relative paths (``../README.md``, ``../examples/tracing_phoenix.md``). These hooks make the same
links work in the built site, so ``mkdocs build --strict`` checks every one of them:

* the README becomes the site's ``index.md`` (unless ``docs/index.md`` exists);
* every repository file outside ``docs/`` that a page links to (followed through the Markdown
  files it adds) joins the site under its repository path, e.g.
  ``ene_core/models/ene-nli-mini/MODEL_CARD.md``;
* each such link is rewritten to where its target is in the site.

A link to a file that does not exist is left as written, so MkDocs reports it (with
``--strict``, the build fails). Links inside fenced code blocks are not links and stay.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

# ](target) or ](target "title"), the target without its #anchor
_LINK = re.compile(r"(?P<head>\]\()(?P<target>[^)\s#]+)(?P<tail>(?:#[^)\s]*)?(?:\s+\"[^\"]*\")?\))")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _prose(markdown: str) -> Iterator[tuple[bool, str]]:
    """The text in pieces: (False, fenced code block line) or (True, anything else)."""
    fenced = False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
            yield False, line
        else:
            yield not fenced, line


def _roots(config: MkDocsConfig) -> tuple[Path, Path]:
    repo = Path(config.config_file_path).resolve().parent
    return repo, Path(config.docs_dir).resolve()


def _site_uri(real: Path, config: MkDocsConfig) -> str | None:
    """Where the repository file ``real`` is in the site, or None (not a file of the repo)."""
    repo, docs = _roots(config)
    if not real.is_file() or not real.is_relative_to(repo):
        return None
    if real.is_relative_to(docs):
        return real.relative_to(docs).as_posix()
    if real == repo / "README.md":
        return "index.md"
    return real.relative_to(repo).as_posix()


def _linked_files(markdown: str, source: Path) -> Iterator[Path]:
    for is_prose, line in _prose(markdown):
        if is_prose:
            for match in _LINK.finditer(line):
                target = match["target"]
                if "://" not in target and not target.startswith(("/", "mailto:")):
                    yield (source.parent / target).resolve()


def _nav_uris(nav: object) -> set[str]:
    """Every page path in ``nav`` (the mkdocs.yml form: lists of strings and dicts)."""
    if isinstance(nav, str):
        return {nav}
    items = nav.values() if isinstance(nav, dict) else nav if isinstance(nav, list) else []
    return set().union(*(_nav_uris(item) for item in items))


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the README as the home page and every outside file the pages link to."""
    repo, docs = _roots(config)
    todo = [Path(f.abs_src_path) for f in files.documentation_pages() if f.abs_src_path]
    if files.get_file_from_path("index.md") is None:
        files.append(File.generated(config, "index.md", abs_src_path=str(repo / "README.md")))
        todo.append(repo / "README.md")
    seen = set(todo)
    while todo:
        source = todo.pop()
        for real in _linked_files(source.read_text(encoding="utf-8"), source):
            uri = _site_uri(real, config)
            if real in seen or uri is None or real.is_relative_to(docs):
                continue
            seen.add(real)
            if files.get_file_from_path(uri) is None:
                # in the site, out of the nav unless mkdocs.yml lists it
                listed = uri in _nav_uris(config.nav)
                inclusion = InclusionLevel.INCLUDED if listed else InclusionLevel.NOT_IN_NAV
                files.append(
                    File.generated(config, uri, abs_src_path=str(real), inclusion=inclusion)
                )
            if real.suffix == ".md":
                todo.append(real)
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Rewrite each link to a repository file to that file's place in the site."""
    source = Path(page.file.abs_src_path or "")
    here = posixpath.dirname(page.file.src_uri)

    def relink(match: re.Match[str]) -> str:
        target = match["target"]
        if "://" in target or target.startswith(("/", "mailto:")):
            return match[0]
        uri = _site_uri((source.parent / target).resolve(), config)
        if uri is None:
            return match[0]  # MkDocs reports it
        return f"{match['head']}{posixpath.relpath(uri, here or '.')}{match['tail']}"

    return "".join(
        _LINK.sub(relink, text) if is_prose else text for is_prose, text in _prose(markdown)
    )
