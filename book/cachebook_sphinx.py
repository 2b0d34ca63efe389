"""Sphinx directives and roles of the cachebook book.

- ``program-output PROGRAM``: the saved stdout of a chapter program's build-time run,
  as a literal block; ``:section: N`` (the part that starts with the line "N. ..."),
  ``:start-after: TEXT`` / ``:end-before: TEXT`` (the first line containing TEXT, left
  out), ``:start-at: TEXT`` / ``:end-at: TEXT`` (the same, kept),
  ``:lines: 1-3,5`` (applied last), ``:caption: TEXT``; a block of more than FOLD_LINES
  lines, or one with ``:fold:``, is folded (a click shows it).
- ``chart chNN NAME``: the SVG that book/plots/chNN.py drew as NAME, with the content
  as caption and a sentence naming the machine that produced the data (``:simulated:``:
  a sentence saying the counts are the cache model's, the same on every machine).
- ``stepper chNN KEY``: an interactive stepper over the list of walks at ``chNN[KEY]``
  (see book/_static/stepper.js for the fields it reads).
- ``model-question``: a question on the model with an answer box the page checks on the model
  (book/_static/questions.js), and its worked count on request.
- ``chapter-list``: the chapters in order, one line each; links where a page exists.
- ``fold SUMMARY``: the content folded under the summary line (<details>); source listings
  of more than FOLD_LISTING_LINES lines are folded the same way. The output block that
  answers a "Predict first" prompt (an admonition of class cb-predict) is folded too, so
  the answer waits for a click.
- ``{{ expr }}`` in the prose (MyST substitutions over the programs' JSON): each inline value
  is wrapped in ``<span class="cb-value" data-expr="expr">`` so that book/check_rendered.py can
  evaluate it again against the build's JSON; a ``<`` in a value is escaped (it would be read as
  an HTML tag), and the filter ``code`` shows a value as inline code.
- roles ``{notes}`` and ``{given}``: a number quoted from the course notes, or a number the
  prose chooses (not a result of the program); the check of hand-typed numbers skips them.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.directives.code import container_wrapper
from sphinx.util.docutils import SphinxDirective

import book_chapters
import exercise_table
from exercise_table import exercise_points, exercises_of
import results_gallery
from cachebook_results import escape_tags, render_substitution


def _generated(env) -> Path:
    return Path(env.config.cachebook_generated)


def select_output(text: str, section=None, start_after=None, end_before=None, lines=None,
                  start_at=None, end_at=None) -> list[str]:
    """The part of a program's output a chapter asks for; raises ValueError if it is not there."""
    out = text.splitlines()
    if section is not None:
        heads = [k for k, line in enumerate(out) if re.match(r"\d+\. ", line)]
        start = next((k for k in heads if out[k].startswith(f"{section}. ")), None)
        if start is None:
            raise ValueError(f"no section '{section}. ' (a line starting with it) in the output")
        end = next((k for k in heads if k > start), len(out))
        out = out[start:end]
    for option, text_, skip in (("start-after", start_after, 1), ("start-at", start_at, 0)):
        if text_ is not None:
            k = next((k for k, line in enumerate(out) if text_ in line), None)
            if k is None:
                raise ValueError(f"{option} text {text_!r} not found in the output")
            out = out[k + skip:]
    for option, text_, keep in (("end-before", end_before, 0), ("end-at", end_at, 1)):
        if text_ is not None:
            k = next((k for k, line in enumerate(out) if text_ in line), None)
            if k is None:
                raise ValueError(f"{option} text {text_!r} not found in the output")
            out = out[:k + keep]
    if lines is not None:
        picked = []
        for part in lines.split(","):
            a, _, b = part.strip().partition("-")
            first, last = int(a), int(b) if b else int(a)
            if first < 1 or last > len(out) or first > last:
                raise ValueError(f"lines {part!r} outside 1-{len(out)}")
            picked += out[first - 1:last]
        out = picked
    while out and not out[-1].strip():
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    if not out:
        raise ValueError("the selection is empty")
    return out


# An output block longer than this is folded (<details>); `:fold:` folds a shorter one.
FOLD_LINES = 30


class ProgramOutput(SphinxDirective):
    required_arguments = 1
    has_content = False
    option_spec = {
        "section": directives.unchanged_required,
        "start-after": directives.unchanged_required,
        "end-before": directives.unchanged_required,
        "start-at": directives.unchanged_required,
        "end-at": directives.unchanged_required,
        "lines": directives.unchanged_required,
        "caption": directives.unchanged_required,
        "fold": directives.flag,
    }

    def run(self):
        program = self.arguments[0]
        path = _generated(self.env) / f"{program}.txt"
        if not path.exists():
            raise self.error(f"program-output: no saved output of {program} ({path}); book/build.py runs it")
        self.env.note_dependency(str(path))
        try:
            picked = select_output(
                path.read_text(),
                section=self.options.get("section"),
                start_after=self.options.get("start-after"),
                end_before=self.options.get("end-before"),
                lines=self.options.get("lines"),
                start_at=self.options.get("start-at"),
                end_at=self.options.get("end-at"),
            )
        except ValueError as e:
            raise self.error(f"program-output {program}: {e}")
        text = textwrap.dedent("\n".join(picked))
        literal = nodes.literal_block(text, text, classes=["program-output", f"cb-output-{program}"])
        literal["language"] = "text"
        self.set_source_info(literal)
        caption = self.options.get("caption", f"Output of {program}, run when this book was built")
        count = text.count("\n") + 1
        if "fold" not in self.options and count <= FOLD_LINES:
            return [container_wrapper(self, literal, caption)]
        # A long block is folded: its caption is the summary line; a click shows the lines.
        holder = nodes.container(classes=["cb-folded"])
        holder.extend(_fold(literal, caption, f"{count} lines"))
        return [holder]


# A figure wider than this (in CSS px at its own size) is shown wider on a phone.
WIDE_FIGURE_PX = 640


class Chart(SphinxDirective):
    """``:simulated:``: the figure plots the cache model, the same on every machine, so its caption
    says so instead of naming the machine that built the book."""

    required_arguments = 2
    has_content = True
    option_spec = {"simulated": directives.flag}

    def run(self):
        key, name = self.arguments
        svg = _generated(self.env) / "plots" / f"{key}_{name}.svg"
        if not svg.exists():
            raise self.error(f"chart: {svg} was not drawn; does book/plots/{key}.py return a figure named {name!r}?")
        self.env.note_dependency(str(svg))
        docdir = Path(self.env.doc2path(self.env.docname)).parent
        uri = Path(__import__("os").path.relpath(svg, docdir)).as_posix()
        # A figure drawn wider than most (chapter 5's three panels, chapter 9's bars) gets a wider
        # phone form, so that its smallest text keeps the others' size there (cachebook.css).
        width = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg.read_text()[:2000])
        wide = width is not None and float(width.group(1)) * 4 / 3 > WIDE_FIGURE_PX
        figure = nodes.figure(classes=["cachebook-chart"] + (["cb-chart-wide"] if wide else []))
        # The alt text says what the figure plots, with its extreme values (book/plots/__init__.py,
        # describe); the caption, which a screen reader reads next, is not repeated.
        alt = svg.with_suffix(".alt.txt")
        if alt.exists():
            self.env.note_dependency(str(alt))
        image = nodes.image(uri=uri, alt=(alt.read_text().strip() if alt.exists() else "") or f"figure: {name}")
        # A tap or click opens the SVG at its own size (Sphinx copies it to _images/).
        up = "../" * self.env.docname.count("/")
        link = nodes.reference("", "", refuri=f"{up}_images/{svg.name}", classes=["cb-chart-link"],
                               reftitle="open the figure at full size")
        link += image
        figure += link
        caption = nodes.caption()
        self.state.nested_parse(self.content, self.content_offset, caption)
        para = caption.children[0] if caption.children and isinstance(caption.children[0], nodes.paragraph) else None
        machine = self.env.config.myst_substitutions.get("machine")
        summary = machine.summary if machine is not None else "an unknown machine"
        text = (" Simulated: the cache model's counts, the same on every machine."
                if "simulated" in self.options else f" Data from {summary}.")
        note = nodes.inline("", text, classes=["machine-note"])
        if para is not None:
            caption = nodes.caption("", "", *para.children, note)
        else:
            caption = nodes.caption("", "", note)
        figure += caption
        return [figure]


class Stepper(SphinxDirective):
    required_arguments = 2
    has_content = False

    def run(self):
        key, field = self.arguments
        data = self.env.config.myst_substitutions.get(key)
        if data is None or field not in data._plain:
            raise self.error(f"stepper: no {key}[{field!r}] in the chapter's results")
        runs = data._plain[field]
        if not isinstance(runs, list) or not runs or "steps" not in runs[0]:
            raise self.error(f"stepper: {key}[{field!r}] is not a list of walks with steps")
        payload = html.escape(json.dumps(runs, separators=(",", ":")), quote=True)
        raw = (f'<div class="cb-stepper" data-runs="{payload}">'
               '<p class="cb-stepper-noscript">This stepper needs JavaScript; '
               'the same walks are printed in the output above.</p></div>')
        return [nodes.raw("", raw, format="html")]


class ModelQuestion(SphinxDirective):
    """``model-question``: a question on the model (how many misses does this walk cause in
    that cache), its text the content. The options name the walk and the cache as
    Model.walk() and Model.cache() take them (book/model/model_api.js); the page's
    questions.js runs them on the model, checks the reader's answer and shows the worked count.
    Every number option may be a substitution, quoted for the options' YAML,
    ``:rows: "{{ ch01.stepper[0].rows }}"``, read from the
    chapter's results; ``:expect:`` (a substitution, never typed) is the chapter program's own
    count, which the page compares with the model's."""

    has_content = True
    NUMBERS = ("n", "rows", "cols", "leading", "elem", "tile", "seed", "sets", "ways", "line", "expect")
    option_spec = {**{name: directives.unchanged for name in NUMBERS},
                   "walk": directives.unchanged_required, "order": directives.unchanged,
                   "policy": directives.unchanged, "ask": directives.unchanged}
    ASK = ("misses", "hits", "evictions")
    WALKS = ("row", "column", "matmul", "tiled", "transpose", "chase")

    def number(self, name, default=None):
        """The option as a whole number, its `{{ expr }}` substitutions rendered first."""
        raw = self.options.get(name)
        if raw is None:
            return default
        values = dict(self.env.config.myst_substitutions)
        try:
            text = re.sub(r"\{\{(.+?)\}\}", lambda m: render_substitution(m.group(1), values), raw).strip()
        except Exception as error:
            raise self.error(f"model-question: :{name}: {raw}: {error}")
        if not re.fullmatch(r"[0-9]+", text):
            raise self.error(f"model-question: :{name}: {raw!r} gives {text!r}, not a whole number")
        return int(text)

    def spec(self):
        o = self.options
        if o.get("walk") not in self.WALKS:
            raise self.error(f"model-question: :walk: one of {', '.join(self.WALKS)} is required")
        if o.get("ask", "misses") not in self.ASK:
            raise self.error(f"model-question: :ask: one of {', '.join(self.ASK)}")
        walk = {"kind": o["walk"], "elem": self.number("elem", 8), "tile": self.number("tile", 0),
                "order": o.get("order", "ijk"), "seed": self.number("seed", 1), "lineBytes": self.number("line", 64)}
        if "rows" in o or "cols" in o:
            if o["walk"] not in ("row", "column") or "rows" not in o or "cols" not in o:
                raise self.error("model-question: :rows: and :cols: go together, on a row or column walk")
            walk.update(rows=self.number("rows"), cols=self.number("cols"),
                        leading=self.number("leading", self.number("cols")))
        elif "n" in o:
            walk["n"] = self.number("n")
        else:
            raise self.error("model-question: :n:, or :rows: and :cols:, are required")
        cache = {"sets": self.number("sets", 1), "ways": self.number("ways", 1), "lineBytes": self.number("line", 64),
                 "policy": o.get("policy", "lru")}
        spec = {"walk": walk, "cache": cache, "ask": o.get("ask", "misses")}
        if "expect" in o:
            if "{{" not in o["expect"]:
                raise self.error("model-question: :expect: is the chapter's own count, a {{ }} substitution")
            spec["expect"] = self.number("expect")
        return spec

    def run(self):
        spec = html.escape(json.dumps(self.spec()), quote=True)
        open_ = nodes.raw("", f'<div class="cb-question" data-spec="{spec}">', format="html")
        body = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, body)
        note = nodes.raw("", '<p class="cb-question-noscript">The answer is checked on the model in the page, '
                         'which needs JavaScript; the playground and the chapter\'s program compute the '
                         'same count.</p></div>', format="html")
        return [open_, *body.children, note]


class ChapterList(SphinxDirective):
    has_content = False

    def run(self):
        lines = []
        pages = {ch.name: ch for ch in book_chapters.chapters() if ch.page.exists()}
        for name in sorted(set(pages) | set(book_chapters.SUMMARIES)):
            summary = book_chapters.SUMMARIES.get(name, "")
            if name in pages:
                ch = pages[name]
                title = _title(ch.page) or name
                lines.append(f"- **{int(name[:2])}** · {{doc}}`{title} </{ch.docname}>`" + (f": {summary}" if summary else ""))
            else:
                lines.append(f"- **{int(name[:2])}** · {summary[:1].upper() + summary[1:]} *(not in this build yet)*")
        node = nodes.container(classes=["chapter-list"])
        self.state.nested_parse(StringList(lines, source="chapter-list"), self.content_offset, node)
        return [node]


class ExerciseList(SphinxDirective):
    """Every chapter's exercises: the doc comment and declarations from exercises/exercise.hpp,
    goal, time, difficulty and rubric from exercises/exercises.json, points from the graders."""

    has_content = False

    def run(self):
        sections = []
        rows = exercise_table.exercise_rows()
        for ch in book_chapters.chapters():
            found = exercises_of(ch)
            if not found:
                continue
            ex = ch.dir / "exercises"
            for f in ("exercise.hpp", "exercises.json", "grader.cpp", "held_back.cpp"):
                self.env.note_dependency(str(ex / f))
            meta = {e["number"]: e for e in json.loads((ex / "exercises.json").read_text())["exercises"]} \
                if (ex / "exercises.json").exists() else {}
            points = exercise_points(ch)
            title = _title(ch.page) if ch.page.exists() else ch.name
            number = int(ch.name[:2])
            nn = ch.name[:2]
            link = f"{{doc}}`{title} </{ch.docname}>`" if ch.page.exists() else title
            lines = [f"{link}. Hand out with `make handout CH={nn}`; grade a class "
                     f"with `make grade-all CH={nn} DIR=submissions/`.", ""]
            for k, (doc, decl) in enumerate(found, start=1):
                lines += [f"- {doc}", "", "  ```cpp"] + ["  " + d for d in decl.splitlines()] + ["  ```", ""]
                m = meta.get(k)
                if m:
                    shown, held = points.get(k, (0, 0))
                    row = next(r for r in rows if r["id"] == f"{nn}.{k}")
                    speed = f", {row['speed']} for speed" if row["speed"] else ""
                    lines += [f"  **Goal**: {m['goal']}", "",
                              f"  **Time**: about {m['minutes']} minutes. **Difficulty**: {m['difficulty']}. "
                              f"**Points**: {row['total']} ({shown} from the handout's cases, {held} held back"
                              f"{speed}, {row['rubric']} by the rubric).", "",
                              f"  **Rubric**, {row['rubric']} point{'s' if row['rubric'] > 1 else ''} "
                              f"(what the grader cannot judge): {m['rubric']}", ""]
            # A section of its own per chapter (a heading inside a nested parse would
            # become a rubric, and MyST warns of it).
            section = nodes.section(ids=[f"exercises-chapter-{number}"])
            section += nodes.title("", f"Chapter {number}")
            self.state.nested_parse(StringList(lines, source="exercise-list"), self.content_offset, section)
            sections.append(section)
        if not sections:
            node = nodes.paragraph("", "No chapter has exercises yet.")
            return [node]
        return sections


def api_entries(xml_dir: Path) -> list[tuple[str, str, list[str]]]:
    """(header, its brief, Breathe directives for what it declares) for every header of the
    Doxygen XML: its classes, and the functions, enums, typedefs and variables of namespace
    cachebook declared in it. An overloaded function is named with its arguments."""
    import xml.etree.ElementTree as ET

    namespace = ET.parse(xml_dir / "namespacecachebook.xml").getroot()
    members = [m for m in namespace.iter("memberdef")]
    overloaded = {n for n in (m.findtext("name") for m in members)
                  if sum(1 for o in members if o.findtext("name") == n) > 1}
    kinds = {"function": "doxygenfunction", "enum": "doxygenenum", "typedef": "doxygentypedef",
             "variable": "doxygenvariable"}
    entries = []
    for path in sorted(xml_dir.glob("*_8hpp.xml")):
        compound = ET.parse(path).getroot().find("compounddef")
        header = compound.findtext("compoundname")
        brief = " ".join("".join(compound.find("briefdescription").itertext()).split())
        found = []
        for inner in compound.findall("innerclass"):
            name = inner.text
            if name.count("::") == 1:  # nested classes come with their outer class
                kind = "doxygenstruct" if inner.get("refid", "").startswith("struct") else "doxygenclass"
                found.append(f"{kind} {name}\n:members:\n:undoc-members:")
        for m in members:
            if m.find("location").get("file", "").split("/")[-1] != header or m.get("kind") not in kinds:
                continue
            name = "cachebook::" + m.findtext("name")
            if m.findtext("name") in overloaded:
                name += m.findtext("argsstring")
            found.append(f"{kinds[m.get('kind')]} {name}")
        entries.append((header, brief, found))
    return entries


class ApiByHeader(SphinxDirective):
    """The API reference, one section per header of common/include/cachebook, titled by the
    header's name and its brief description."""

    has_content = False

    def run(self):
        xml_dir = Path(self.env.config.breathe_projects["cachebook"])
        sections = []
        for header, brief, found in api_entries(xml_dir):
            section = nodes.section(ids=[f"api-{header.replace('.', '-').replace('_', '-')}"])
            section += nodes.title("", "", nodes.literal("", header))
            lines = [brief, ""] if brief else []
            for directive in found:
                lines += ["```{" + directive.split(" ", 1)[0] + "} " + directive.split(" ", 1)[1], "```", ""]
            self.state.nested_parse(StringList(lines, source="api-by-header"), self.content_offset, section)
            sections.append(section)
        return sections


def _title(page: Path) -> str:
    for line in page.read_text().splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


# What a marked number is, shown when the pointer rests on it (and read by screen readers).
NUMBER_TITLES = {"notes-quote": "the course notes' own measurement"}


def _number_role(kind):
    def role(name, rawtext, text, lineno, inliner, options=None, content=None):
        title = NUMBER_TITLES.get(kind)
        if title:
            return [nodes.raw(rawtext, f'<span class="{kind}" title="{html.escape(title)}">{html.escape(text)}</span>',
                              format="html")], []
        return [nodes.inline(rawtext, text, classes=[kind])], []

    return role


def _optional_pages(app, docname, source):
    # The landing page's toctree names pages that arrive later (book/cachesim.md);
    # drop an entry whose page does not exist yet.
    if docname != "book/index":
        return
    for page in ("cachesim", "instructors"):
        if not (Path(app.srcdir) / "book" / f"{page}.md").exists():
            source[0] = source[0].replace(f"\n{page}\n", "\n")


def sub_page_number(chapter_md: Path, page: str) -> str | None:
    """"6.2" for the first page that chapters/06_*/chapter.md's toctree names, "6.3" for the
    next; None for a page it does not name."""
    pages, inside = [], False
    for line in chapter_md.read_text().splitlines():
        if line.startswith("```{toctree}"):
            inside = True
        elif inside and line.startswith("```"):
            inside = False
        elif inside and line.strip() and not line.startswith(":"):
            pages.append(line.strip())
    if page not in pages:
        return None
    return f"{int(chapter_md.parent.name[:2])}.{pages.index(page) + 2}"


def _number_sub_pages(app, docname, source):
    # A chapter's further pages carry its number in their titles (tab, sidebar, search,
    # links): "6.2 Measuring false sharing on a real machine".
    m = re.fullmatch(r"chapters/(\d\d_[^/]+)/([^/]+)", docname)
    if not m or m.group(2) == "chapter":
        return
    number = sub_page_number(Path(app.srcdir) / "chapters" / m.group(1) / "chapter.md", m.group(2))
    if number:
        source[0] = re.sub(r"^# ", f"# {number} ", source[0], count=1, flags=re.M)


def _repair_debian_furo(app, exception):
    """Debian's furo ships its sources, not its bundle: furo.css imports normalize.css from
    /javascript/ (a web-server alias) and furo.js is an ES module that the page loads as
    a plain script. Make both self-contained in the built site; upstream furo needs nothing."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    css = static / "styles" / "furo.css"
    if css.exists():
        text = css.read_text()
        imp = "@import url(/javascript/normalize.css/normalize.css);"
        if imp in text:
            normalize = Path("/usr/share/javascript/normalize.css/normalize.css")
            css.write_text(text.replace(imp, normalize.read_text() if normalize.exists() else ""))
    js, gumshoe = static / "scripts" / "furo.js", static / "scripts" / "gumshoe-patched.js"
    if js.exists() and gumshoe.exists():
        text = js.read_text()
        imp = 'import Gumshoe from "./gumshoe-patched.js";'
        if text.startswith(imp):
            # gumshoe-patched.js is a UMD bundle: as a plain script it defines window.Gumshoe.
            js.write_text(gumshoe.read_text() + "\n" + text[len(imp):])


# A source listing longer than this is folded too, its caption or first line shown.
FOLD_LISTING_LINES = 30  # as output blocks (FOLD_LINES): a listing of 38 lines is two screens on a phone

# Scripts Sphinx 5 loads on every page for older themes; neither the theme, Sphinx's own search
# nor the book's scripts use them (358 KB a page).
UNUSED_SCRIPTS = ("jquery.js", "underscore.js", "_sphinx_javascript_frameworks_compat.js")


def _drop_unused_scripts(app):
    if app.builder.format == "html" and hasattr(app.builder, "script_files"):
        app.builder.script_files[:] = [js for js in app.builder.script_files
                                       if Path(str(js.filename or "")).name not in UNUSED_SCRIPTS]


def _remove_unused_files(app, exception):
    if exception is None and app.builder.format == "html":
        for name in UNUSED_SCRIPTS:
            (Path(app.outdir) / "_static" / name).unlink(missing_ok=True)


def _fold(node, summary: str, note: str | None = None, classes: str = "") -> list:
    """`node` folded under `summary`; with `note` ("64 lines"), the summary line reads
    "summary (64 lines: show)", and "hide" once open."""
    text = html.escape(summary)
    if note is not None:
        text += (f' <span class="cb-fold-note">({html.escape(note)}: <span class="cb-show">show</span>'
                 '<span class="cb-hide">hide</span>)</span>')
    return [nodes.raw("", f'<details class="cb-fold{" " + classes if classes else ""}"><summary>{text}</summary>',
                      format="html"),
            node, nodes.raw("", "</details>", format="html")]


def _fold_long_listings(app, doctree, docname):
    """Folds every source listing (literalinclude, code fence) of more than FOLD_LISTING_LINES."""
    for block in list(doctree.findall(nodes.literal_block)):
        if "program-output" in block["classes"] or block.astext().count("\n") + 1 <= FOLD_LISTING_LINES:
            continue
        target = block.parent if isinstance(block.parent, nodes.container) and \
            block.parent.get("literal_block") else block
        if isinstance(target.parent, nodes.container) and "cb-folded" in target.parent["classes"]:
            continue
        lines = block.astext().count("\n") + 1
        source = Path(block.get("source", "")).name if block.get("source") else ""
        holder = nodes.container(classes=["cb-folded"])
        target.replace_self(holder)
        holder.extend(_fold(target, f"Listing{' from ' + source if source else ''}", f"{lines} lines"))


def _is_output(node) -> bool:
    """An output block as the page shows it: a program-output with its caption, or folded."""
    if not isinstance(node, nodes.container):
        return False
    if "cb-folded" in node["classes"] or node.get("literal_block"):
        return any("program-output" in b["classes"] for b in node.findall(nodes.literal_block))
    return False


def _is_predict(node) -> bool:
    return isinstance(node, nodes.Admonition) and "cb-predict" in node["classes"]


def _fold_answers(app, doctree):
    """Everything after a "Predict first" prompt (an admonition of class cb-predict) up to the
    next heading or the next prompt (the output that answers it, the paragraphs that read it,
    the figure that plots it) is folded into one reveal, so that no answer is in view while
    the reader predicts."""
    for box in list(doctree.findall(_is_predict)):
        parent = box.parent
        at = parent.index(box)
        answer = []
        for node in parent.children[at + 1:]:
            if isinstance(node, nodes.section) or any(True for _ in node.findall(_is_predict)):
                break
            # A stepper is for the reader to work with, not an answer to hide: the fold ends
            # at the paragraph that introduces it.
            if any('class="cb-stepper"' in r.astext() for r in node.findall(nodes.raw)):
                if answer and isinstance(answer[-1], nodes.paragraph):
                    answer.pop()
                break
            answer.append(node)
        if not answer:
            continue
        for node in answer:
            parent.remove(node)
        body = nodes.container(classes=["cb-fold-body", "cb-answer-body"])
        body.extend(answer)
        holder = nodes.container(classes=["cb-answer"])
        holder.extend(_fold(body, "The answer, and what it shows", _answer_note(answer), classes="cb-reveal"))
        parent.insert(at + 1, holder)


def _answer_note(answer) -> str:
    """"2 paragraphs, 1 figure, 1 output block": what the reveal holds."""
    counts = {"paragraph": 0, "figure": 0, "output block": 0, "listing": 0}
    for node in answer:
        counts["paragraph"] += sum(1 for _ in node.findall(nodes.paragraph) if not _ancestor_of(_, nodes.Admonition))
        counts["figure"] += sum(1 for _ in node.findall(nodes.figure))
        for block in node.findall(nodes.literal_block):
            counts["output block" if "program-output" in block["classes"] else "listing"] += 1
    parts = [f"{n} {what}{'s' if n > 1 else ''}" for what, n in counts.items() if n]
    return ", ".join(parts) or "the discussion"


def _ancestor_of(node, kind) -> bool:
    return any(isinstance(a, kind) for a in _ancestors(node))


def _reveal_predicted_outputs(app, doctree):
    """The output block that answers a "Predict first" prompt (an admonition of class
    cb-predict: the first output block after it) is folded behind "show", so the answer is
    not in view while the reader predicts. A block folded already stays folded, and one inside
    the prompt's reveal (_fold_answers) is not folded twice."""
    found = [n for n in doctree.findall(lambda n: (isinstance(n, nodes.Admonition) and "cb-predict" in n["classes"])
                                        or _is_output(n))]
    # An output block inside another (a folded one holds its captioned block) counts once.
    found = [n for n in found if not (_is_output(n) and any(_is_output(a) for a in _ancestors(n)))]
    waiting = False
    for node in found:
        if not _is_output(node):
            waiting = True
            continue
        if not waiting:
            continue
        waiting = False
        if any("cb-answer" in a.get("classes", []) for a in _ancestors(node) if isinstance(a, nodes.Element)):
            continue
        if "cb-folded" in node["classes"]:
            node["classes"].append("cb-reveal")
            continue
        literal = next(b for b in node.findall(nodes.literal_block) if "program-output" in b["classes"])
        caption = next((c.astext() for c in node.findall(nodes.caption)), "Output")
        lines = literal.astext().count("\n") + 1
        holder = nodes.container(classes=["cb-folded", "cb-reveal"])
        node.replace_self(holder)
        literal.parent.remove(literal)
        holder.extend(_fold(literal, f"The answer: {caption[:1].lower() + caption[1:]}",
                            f"{lines} line{'s' if lines > 1 else ''}", classes="cb-reveal"))


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


class Fold(SphinxDirective):
    """```{fold} Summary line``` : the content, folded under the summary (a click shows it)."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = True

    def run(self):
        body = nodes.container(classes=["cb-fold-body"])
        self.state.nested_parse(self.content, self.content_offset, body)
        return _fold(body, self.arguments[0])


class substituted_value(nodes.inline):
    """The text of one `{{ expr }}` of the prose; node["expr"] is the expression."""


def _visit_substituted_value(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="cb-value", **{"data-expr": node["expr"]}))


def _depart_substituted_value(self, node):
    self.body.append("</span>")


class _AsRendered:
    """A substitution's syntax node whose expression is the text it rendered to (a Jinja string)."""

    def __init__(self, node, content: str):
        self._node, self.content = node, content

    def __getattr__(self, name):
        return getattr(self._node, name)


def _render_marked_substitution(self, token, inline: bool) -> None:
    """MyST's renderer, for an inline `{{ expr }}`: the value marked, its `<` escaped. A block
    substitution is rendered by the book's environment too (its filters), then given to MyST as
    the string it rendered to."""
    from myst_parser.mdit_to_docutils.base import token_line

    line = token_line(token)
    try:
        text = render_substitution(token.content, dict(self.md_config.substitutions))
    except Exception as error:
        self.current_node += [self.reporter.error(f"Substitution error: {error.__class__.__name__}: {error}", line=line)]
        return
    if not inline:
        return _MYST_RENDER_SUBSTITUTION(self, _AsRendered(token, json.dumps(text)), inline)
    value = substituted_value(expr=token.content.strip())
    with self.current_node_context(value, append=True):
        self.nested_render_text(escape_tags(text), line, inline=True)


_MYST_RENDER_SUBSTITUTION = None


def _mark_substitutions() -> None:
    global _MYST_RENDER_SUBSTITUTION
    from myst_parser.mdit_to_docutils.base import DocutilsRenderer

    if _MYST_RENDER_SUBSTITUTION is None:
        _MYST_RENDER_SUBSTITUTION = DocutilsRenderer.render_substitution
        DocutilsRenderer.render_substitution = _render_marked_substitution


def setup(app):
    _mark_substitutions()
    app.add_node(substituted_value, html=(_visit_substituted_value, _depart_substituted_value))
    app.add_config_value("cachebook_generated", "", "env")
    app.add_directive("program-output", ProgramOutput)
    app.add_directive("chart", Chart)
    app.add_directive("stepper", Stepper)
    app.add_directive("chapter-list", ChapterList)
    app.add_directive("exercise-list", ExerciseList)
    app.add_directive("exercise-summary", exercise_table.directive())
    app.add_directive("fold", Fold)
    app.add_directive("model-question", ModelQuestion)
    app.add_directive("api-by-header", ApiByHeader)
    app.add_directive("results-gallery", results_gallery.ResultsGallery)
    app.connect("env-get-outdated", results_gallery.pages_to_reread)
    app.connect("doctree-read", _fold_answers)
    app.connect("doctree-read", _reveal_predicted_outputs)
    app.connect("doctree-resolved", _fold_long_listings)
    app.add_role("notes", _number_role("notes-quote"))
    app.add_role("given", _number_role("given-number"))
    app.connect("source-read", _optional_pages)
    app.connect("source-read", _number_sub_pages)
    app.connect("build-finished", _repair_debian_furo)
    app.connect("builder-inited", _drop_unused_scripts)
    app.connect("build-finished", _remove_unused_files)
    # What the widgets share, first: the widgets (these and conf.py's stepper.js) use it as they load.
    app.add_js_file("dom.js")
    # The model in the page (book/model, shipped at _static/model/ by book/build.py) and its widgets.
    app.add_js_file("live.js")
    app.add_js_file("playground.js")
    app.add_js_file("stepper_live.js")
    app.add_js_file("questions.js")
    app.add_js_file("outputs.js")
    # env_version: raised when the pages' scripts or markup change, so that an incremental build
    # writes every page again (pages whose source did not change would keep the old script list).
    return {"version": "1", "env_version": 3, "parallel_read_safe": True, "parallel_write_safe": True}
