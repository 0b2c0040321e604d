"""Sphinx configuration of jaxtree's documentation (offline: no intersphinx, no network).

Build: ``pip install ".[docs]" && python -m sphinx -W -b html docs docs/_build/html``.
"""

import os
import pathlib
import sys

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jaxtree  # noqa: E402

project = "jaxtree"
author = "jaxtree contributors"
copyright = "jaxtree contributors"
release = version = getattr(jaxtree, "__version__", "0.1.0")

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
    "matplotlib.sphinxext.plot_directive",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# examples/ holds the gallery's sources (sphinx-gallery turns them into auto_examples/).
exclude_patterns = ["_build", "examples", "Thumbs.db", ".DS_Store", "sg_execution_times.rst"]
templates_path = ["_templates"]

# Markdown pages (myst-parser).
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# API reference: autodoc + autosummary + napoleon (the docstrings are Google style).
autosummary_generate = True
autosummary_ignore_module_all = False  # a module's page lists its __all__
autosummary_imported_members = True
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True  # "Attributes:" as fields: no duplicate entries beside autodoc's members
strip_signature_backslash = True  # napoleon then writes a trailing "_" (model_) as "\\_", so the name keeps its underscore
add_module_names = False

# Gallery (sphinx-gallery): scripts docs/examples/plot_*.py, written to docs/auto_examples/.
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"plot_",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "backreferences_dir": None,
    "download_all_examples": False,
    "write_computation_times": False,
    "remove_config_comments": True,
}

# Figures drawn when the docs are built (model.md's ``.. plot::`` blocks, inside {eval-rst}:
# myst's own {plot} form fails, its mock state machine has no insert_input; each block needs
# its own :filename-prefix:, as every {eval-rst} block restarts the plot counter). The code
# shown above each figure is what drew it; PNG only, no links to the source or other formats.
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]

html_theme = "pydata_sphinx_theme"
html_title = "jaxtree"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "use_edit_page_button": False,
}
html_static_path = []

# BENCHMARKS.md and REPRODUCTION.md are included as pages (benchmarks.md, reproduction.md).
# Their links between the repository's files are written for GitHub; on this site they point
# to the pages that include those files (or name a file of the repository that is not a page).
INCLUDED_LINKS = {
    "](REPRODUCTION.md)": "](reproduction.md)",
    "](BENCHMARKS.md)": "](benchmarks.md)",
    "](docs/decisions.md)": "](decisions.md)",  # a page beside benchmarks.md on the site
    "[`benchmarks/results/real_data.md`](benchmarks/results/real_data.md)":
        "`benchmarks/results/real_data.md`",
}


def _site_links(app, relative_path, parent_docname, content):
    text = content[0]
    for old, new in INCLUDED_LINKS.items():
        text = text.replace(old, new)
    content[0] = text


def setup(app):
    app.connect("include-read", _site_links)
