# Sphinx configuration of the cachebook book. The source directory is the repository
# root (so a chapter's literalinclude paths are relative to its own directory); only
# book/*.md and chapters/*/chapter.md are read. book/build.py runs sphinx-build.

import os
import sys
from pathlib import Path

BOOK = Path(__file__).resolve().parent
ROOT = BOOK.parent
sys.path.insert(0, str(BOOK))

from cachebook_results import load_substitutions  # noqa: E402

GENERATED = Path(os.environ.get("CACHEBOOK_GENERATED", ROOT / "build" / "book" / "generated"))
DOXYGEN_XML = Path(os.environ.get("CACHEBOOK_DOXYGEN_XML", ROOT / "build" / "book" / "doxygen" / "xml"))

project = "cachebook"
author = "the cachebook authors"
copyright = "the cachebook authors"
root_doc = "book/index"
language = "en"

extensions = ["myst_parser", "breathe", "cachebook_sphinx"]
include_patterns = ["book/*.md", "chapters/*/*.md"]
exclude_patterns = ["build*", ".git", "**/node_modules"]
source_suffix = {".md": "markdown"}

# MyST: substitutions carry the programs' results into the prose.
myst_enable_extensions = ["substitution", "colon_fence", "deflist"]
myst_heading_anchors = 3


# `{{ chNN.key }}`, `{{ machine.cpu }}`, `{{ cachesim.* }}` (book/cachesim.md; book/build.py runs it).
myst_substitutions = load_substitutions(GENERATED)
cachebook_generated = str(GENERATED)

# API reference: Breathe over Doxygen's XML of common/include.
breathe_projects = {"cachebook": str(DOXYGEN_XML)}
breathe_default_project = "cachebook"
breathe_domain_by_extension = {"hpp": "cpp"}
primary_domain = "cpp"
highlight_language = "cpp"
cpp_index_common_prefix = ["cachebook::"]

html_theme = "furo"
html_title = "cachebook"
html_static_path = [str(BOOK / "_static")]
html_css_files = ["cachebook.css"]
html_js_files = ["stepper.js", "search.js"]
html_show_sourcelink = False
# No page flips on the arrow keys: the steppers use them (and a reader may press them to
# scroll a wide block); Sphinx's key navigation ignores a handled key, so it stays off.
html_theme_options = {"navigation_with_keys": False}
