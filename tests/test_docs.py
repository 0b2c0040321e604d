"""The documentation: every public name has a docstring, and the Sphinx site builds.

* :func:`test_public_names_have_docstrings` (fast, no Sphinx): every function and class in
  ``jaxtree.__all__`` and in the ``__all__`` of every public module listed there has a
  docstring of its own (a NamedTuple's generated ``Name(a, b)`` does not count).
* :func:`test_top_level_functions_document_their_parameters` (fast): the functions of
  ``jaxtree.__all__`` itself name each of their parameters in their docstring.
* :func:`test_public_api_documents_its_parameters` (fast): the same rule for the whole public
  API: the functions of every public module's ``__all__`` and the public methods of every
  public class (those defined in jaxtree, inherited ones included; properties and methods
  inherited from outside jaxtree, such as ``tuple.count``, are not checked).
* :func:`test_docs_build` (slow): ``python -m sphinx -W -b html docs <tmp>`` passes (warnings
  are errors: a broken cross-reference, a malformed docstring, a page outside the toctree)
  and every link of the built HTML to a local file points to a file that exists.
"""

import importlib.util
import inspect
import os
import pathlib
import re
import subprocess
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

import pytest

import jaxtree

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _public_objects():
    """``{qualified name: object}`` of the functions and classes of the public API."""
    found = {}
    for name in jaxtree.__all__:
        obj = getattr(jaxtree, name)
        if inspect.ismodule(obj):
            assert hasattr(obj, "__all__"), f"public module jaxtree.{name} has no __all__"
            for member in obj.__all__:
                found[f"jaxtree.{name}.{member}"] = getattr(obj, member)
        else:
            found[f"jaxtree.{name}"] = obj
    return {q: o for q, o in found.items() if inspect.isclass(o) or callable(o)}


def _own_doc(obj) -> str:
    doc = obj.__doc__ or ""
    if inspect.isclass(obj) and doc.startswith(obj.__name__ + "("):
        return ""  # the signature NamedTuple and dataclass write when there is no docstring
    return doc.strip()


def test_public_names_have_docstrings():
    objects = _public_objects()
    assert len(objects) > 100, len(objects)
    missing = sorted(q for q, o in objects.items() if not _own_doc(o))
    assert not missing, f"public names without a docstring: {missing}"


def _named_parameters(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.name not in ("self", "cls")
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def test_top_level_functions_document_their_parameters():
    undocumented = {}
    for name in jaxtree.__all__:
        fn = getattr(jaxtree, name)
        if inspect.ismodule(fn) or inspect.isclass(fn):
            continue
        doc = _own_doc(fn)
        missing = [p for p in _named_parameters(fn) if not re.search(rf"\b{re.escape(p)}\b", doc)]
        if missing:
            undocumented[name] = missing
    assert not undocumented, f"parameters not named in the docstring: {undocumented}"


def _missing_parameters(fn):
    doc = _own_doc(fn)
    return [p for p in _named_parameters(fn) if not re.search(rf"\b{re.escape(p)}\b", doc)]


def _public_methods(cls):
    """``{name: function}`` of the public methods of ``cls`` defined in jaxtree, inherited ones
    included; those inherited from outside jaxtree (``object``, ``tuple``, exceptions) and
    properties (no parameters) are left out."""
    methods = {}
    for name in dir(cls):
        if name.startswith("_"):
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner is None or not owner.__module__.startswith("jaxtree"):
            continue
        raw = vars(owner)[name]
        if isinstance(raw, (classmethod, staticmethod)):
            raw = raw.__func__
        if inspect.isfunction(raw):
            methods[name] = raw
    return methods


def test_public_api_documents_its_parameters():
    """The rule above for the whole public API: every function of ``jaxtree.__all__`` and of
    the ``__all__`` of each public module, and every public method of every public class."""
    undocumented = {}
    seen = set()
    for qual, obj in _public_objects().items():
        if inspect.isclass(obj):
            if obj in seen:
                continue
            seen.add(obj)
            for name, fn in _public_methods(obj).items():
                missing = _missing_parameters(fn)
                if missing:
                    undocumented[f"{qual}.{name}"] = missing
        else:
            missing = _missing_parameters(obj)
            if missing:
                undocumented[qual] = missing
    assert not undocumented, (f"{len(undocumented)} functions and methods do not name these "
                              f"parameters in their docstring: {undocumented}")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("href", "src") and value:
                self.links.append(value)


def _broken_local_links(html_dir: pathlib.Path):
    broken = []
    for page in html_dir.rglob("*.html"):
        if page.relative_to(html_dir).parts[0] in ("_static", "_sources", "_images"):
            continue  # the theme's own templates and assets, not pages
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("#", "mailto:", "javascript:")):
                continue  # external, or an anchor of the page itself
            if not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.exists():
                broken.append(f"{page.relative_to(html_dir)} -> {link}")
    return broken


@pytest.mark.slow
def test_docs_build(tmp_path):
    for module in ("sphinx", "pydata_sphinx_theme", "sphinx_gallery", "myst_parser"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: pip install '.[docs]'")
    out = tmp_path / "html"
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert (out / "index.html").exists()
    assert (out / "api.html").exists()
    pages = {p.name for p in (out / "generated").glob("*.html")}
    for name in jaxtree.__all__:
        assert f"jaxtree.{name}.html" in pages, f"no API page for jaxtree.{name}"
    broken = _broken_local_links(out)
    assert not broken, "links to missing files:\n" + "\n".join(broken[:50])
