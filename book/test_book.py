#!/usr/bin/python3
"""Unit tests of the book's machinery (ctest: book.pipeline). Run: /usr/bin/python3 book/test_book.py"""

import html
import json
import pickle
import sys
import unittest
from pathlib import Path

BOOK = Path(__file__).resolve().parent
sys.path.insert(0, str(BOOK))

import jinja2  # noqa: E402

import book_chapters  # noqa: E402
import book_machine  # noqa: E402
from cachebook_results import Results  # noqa: E402
from cachebook_sphinx import select_output  # noqa: E402
from exercise_table import exercises_of  # noqa: E402

OUTPUT = """Chapter 9 · Title

1. First part
  a = 1
  b = 2

2. Second part
  row walk, cache of 2 lines
  grid A
  row walk, cache of 4 lines
  grid B
"""


class SelectOutput(unittest.TestCase):
    def test_section_runs_to_the_next_section(self):
        self.assertEqual(select_output(OUTPUT, section="1"), ["1. First part", "  a = 1", "  b = 2"])

    def test_last_section_runs_to_the_end(self):
        self.assertEqual(select_output(OUTPUT, section="2")[-1], "  grid B")

    def test_start_and_end_markers(self):
        self.assertEqual(select_output(OUTPUT, section="2", end_before="cache of 4"),
                         ["2. Second part", "  row walk, cache of 2 lines", "  grid A"])
        self.assertEqual(select_output(OUTPUT, start_at="cache of 4"), ["  row walk, cache of 4 lines", "  grid B"])
        self.assertEqual(select_output(OUTPUT, start_after="cache of 4"), ["  grid B"])
        self.assertEqual(select_output(OUTPUT, section="1", end_at="a = 1"), ["1. First part", "  a = 1"])

    def test_lines_after_the_other_selections(self):
        self.assertEqual(select_output(OUTPUT, section="1", lines="1,3"), ["1. First part", "  b = 2"])

    def test_what_is_not_there_is_an_error(self):
        for kwargs in ({"section": "3"}, {"start_after": "nowhere"}, {"end_before": "nowhere"},
                       {"section": "1", "lines": "2-9"}, {"start_after": "grid B"}):
            with self.subTest(kwargs=kwargs), self.assertRaises(ValueError):
                select_output(OUTPUT, **kwargs)


class Substitutions(unittest.TestCase):
    data = {"walk": {"line": 139, "count": 3, "items": [1, 2]}, "stepper": [{"misses": 8}, {"misses": 32}]}

    def render(self, expr, value=None):
        env = jinja2.Environment(undefined=jinja2.StrictUndefined)  # as MyST renders substitutions
        return env.from_string("{{ " + expr + " }}").render(ch01=value or Results(self.data))

    def test_dotted_and_indexed_access(self):
        self.assertEqual(self.render("ch01.walk.line"), "139")
        self.assertEqual(self.render("ch01.stepper[1].misses"), "32")
        self.assertEqual(self.render("ch01.stepper[1].misses - ch01.stepper[0].misses"), "24")

    def test_keys_win_over_dict_and_str_methods(self):
        self.assertEqual(self.render("ch01.walk.count"), "3")
        self.assertEqual(self.render("ch01.walk['items'][1]"), "2")

    def test_a_missing_key_is_an_error(self):
        for expr in ("ch01.walk.nope", "ch01.nope", "ch01.stepper[5].misses", "ch01.walk.keys", "ch01.split"):
            with self.subTest(expr=expr), self.assertRaises(jinja2.exceptions.UndefinedError):
                self.render(expr)

    def test_survives_pickling_and_compares_by_content(self):
        r = Results(self.data)
        again = pickle.loads(pickle.dumps(r))
        self.assertEqual(again, r)
        self.assertEqual(again.walk.line, 139)
        self.assertNotEqual(Results({"walk": {"line": 140}}), r)

    def test_myst_accepts_it_globally_and_with_front_matter(self):
        from myst_parser.config.main import MdParserConfig, merge_file_level

        config = MdParserConfig(substitutions={"ch01": Results(self.data)})
        merged = merge_file_level(config, {"myst": {"substitutions": {"x": "1"}}}, lambda *a: self.fail(a))
        self.assertEqual(merged.substitutions["ch01"].walk.line, 139)


class Chapters(unittest.TestCase):
    def test_chapters_in_order_with_their_keys(self):
        chapters = book_chapters.chapters()
        self.assertEqual([c.name for c in chapters], sorted(c.name for c in chapters))
        first = chapters[0]
        self.assertEqual((first.key, first.program, first.docname),
                         ("ch01", "ch01_row_major", "chapters/01_row_major/chapter"))

    def test_exercises_read_from_the_header(self):
        found = exercises_of(book_chapters.chapters()[0])
        self.assertGreaterEqual(len(found), 1)
        for doc, decl in found:
            self.assertTrue(doc.startswith("Exercise "), doc)
            self.assertTrue(decl.rstrip().endswith(";"), decl)


class CheckNumbers(unittest.TestCase):
    def test_the_rule_cases(self):
        import check_numbers

        self.assertEqual(check_numbers.self_test(), 0)

    def test_json_values_skip_bulk_lists(self):
        import check_numbers

        values = {v for v, _ in check_numbers.json_values({"a": 5, "bulk": list(range(100, 140)), "h": "0x10"})}
        self.assertEqual(values, {5, 16})


def page(body: str) -> str:
    """A built page as furo lays it out: the text in <article>, sections with headings."""
    return ('<html><body><nav>{{ menu }}</nav><article role="main"><section id="t"><h1>Title</h1>'
            f"<p>Intro.</p>{body}</section></article></body></html>")


class CheckRendered(unittest.TestCase):
    """book/check_rendered.py on small pages: a clean one passes, each defect fails."""

    subs = {"ch07": Results({"perf": {"state": "perf reports the event as <not supported>"}, "n": 512,
                             "ratio_text": "1.99", "flag": "--D1=49152,12,64",
                             "won": "the formula's tile -- here"})}
    outputs = {"ch07_measurement": "Chapter 7\n\n1. The clock\n  threads  ms\n  1        20\n  2        11\n"}

    def defects(self, body):
        import check_rendered

        return check_rendered.page_defects(page(body), self.subs, self.outputs)

    def value(self, expr, shown):
        return f'<span class="cb-value" data-expr="{html.escape(expr)}">{html.escape(shown)}</span>'

    def output(self, text, program="ch07_measurement"):
        return (f'<div class="program-output cb-output-{program} highlight-text notranslate">'
                f'<div class="highlight"><pre><span></span>{html.escape(text)}</pre></div></div>')

    def test_a_clean_page_passes(self):
        body = (f"<p>It was {self.value(' ch07.ratio_text ', '1.99')} on 2 threads; "
                f"{self.value('ch07.perf.state', 'perf reports the event as <not supported>')}. Why? "
                f"With {self.value('ch07.n * 4', '2048')} bytes; "
                f"{self.value('ch07.flag | code', '--D1=49152,12,64')}; "
                f"{self.value('ch07.won', 'the formula’s tile – here')} (smart quotes and dashes), empty by choice"
                + self.value('"" if ch07.n else "x"', "") + ".</p>"
                + self.output("threads  ms\n1        20\n2        11\n")
                + '<section id="s"><h2>Sub</h2><div class="highlight-cpp notranslate"><pre>x ? a : b; {{1}}</pre></div>'
                "</section>")
        self.assertEqual(self.defects(body), [])

    def test_each_defect_fails(self):
        cases = {
            "template leftover": "<p>the flag `--cache-sim=yes {{ ch07.counters.d1_flag }}`</p>",
            "printed as written": "<p>a tile of {given}`64` bytes</p>",
            "<measured>": "<p>it took &lt;measured&gt; ms</p>",
            "'?' in place of a figure": "<p>the chase costs ? ns per access</p>",
            "nan or inf": "<p>a speed-up of inf times</p>",
            "empty section": '<section id="e"><h2>Results</h2></section>',
            "is empty on the page": f"<p>perf reports the event as {self.value('ch07.perf.state', '')}.</p>",
            "this build's JSON gives": f"<p>it was {self.value('ch07.ratio_text', '2.10')} on 2 threads</p>",
            "cannot be evaluated": f"<p>it was {self.value('ch07.nope', '3')}</p>",
            "is not what it printed": self.output("threads  ms\n1        21\n"),
            "is not folded": '<div class="admonition cb-predict"><p>Which?</p></div>'
                             + self.output("threads  ms\n1        20\n"),
            # the appendix's claims table as it once rendered: dashes made typographic
            "raw Markdown table": "<p>| claim | at least | held on | | |\u2014|\u2014:|\u2014|</p>",
        }
        for what, body in cases.items():
            with self.subTest(defect=what):
                found = self.defects(body)
                self.assertTrue(found, "not caught")
                for defect in found:
                    self.assertIn(what, defect)

    def test_raw_markdown_tables_are_caught_and_html_tables_pass(self):
        self.assertTrue(self.defects("<li>| a | b |\n|:--|--:|</li>"))
        self.assertEqual(self.defects("<table><tr><th>a</th><th>b</th></tr><tr><td>1 | 2</td><td>x || y</td></tr>"
                                      "</table>"), [])

    def test_a_folded_answer_passes(self):
        body = ('<div class="admonition cb-predict"><p>Which?</p></div><details class="cb-fold cb-reveal">'
                "<summary>The answer</summary>" + self.output("threads  ms\n1        20\n") + "</details>")
        self.assertEqual(self.defects(body), [])

    def test_a_swallowed_tag_is_caught(self):
        # "<not supported>" read as an HTML tag leaves "perf reports the event as ".
        found = self.defects(f"<p>{self.value('ch07.perf.state', 'perf reports the event as ')}.</p>")
        self.assertEqual(len(found), 1, found)

    def test_values_escape_tags_outside_code(self):
        from cachebook_results import as_code, escape_tags, shown_text

        self.assertEqual(escape_tags("as <not supported> and `a<b`"), "as \\<not supported> and `a<b`")
        self.assertEqual(shown_text(escape_tags("as <x>")), "as <x>")
        self.assertEqual(as_code("--D1=1"), "`--D1=1`")
        self.assertEqual(shown_text(as_code("a`b")), "a`b")


class ApiByHeader(unittest.TestCase):
    """The API page's sections: each header's classes and the namespace members declared in it."""

    def test_entries_from_doxygen_xml(self):
        import tempfile

        from cachebook_sphinx import api_entries

        namespace = """<doxygen><compounddef kind="namespace"><compoundname>cachebook</compoundname>
          <sectiondef kind="func">
            <memberdef kind="function"><name>chase</name><argsstring>(int n)</argsstring><location file="x/chase.hpp"/></memberdef>
            <memberdef kind="function"><name>chase</name><argsstring>(double s)</argsstring><location file="x/chase.hpp"/></memberdef>
            <memberdef kind="function"><name>touch</name><argsstring>()</argsstring><location file="x/cache.hpp"/></memberdef>
            <memberdef kind="enum"><name>Policy</name><location file="x/cache.hpp"/></memberdef>
          </sectiondef></compounddef></doxygen>"""
        cache = """<doxygen><compounddef kind="file"><compoundname>cache.hpp</compoundname>
          <innerclass refid="structcachebook_1_1Config">cachebook::Config</innerclass>
          <innerclass refid="classcachebook_1_1Cache">cachebook::Cache</innerclass>
          <innerclass refid="structcachebook_1_1Cache_1_1Line">cachebook::Cache::Line</innerclass>
          <briefdescription><para>The cache model.</para></briefdescription></compounddef></doxygen>"""
        chase = """<doxygen><compounddef kind="file"><compoundname>chase.hpp</compoundname>
          <briefdescription/></compounddef></doxygen>"""
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("namespacecachebook.xml", namespace), ("cache_8hpp.xml", cache),
                               ("chase_8hpp.xml", chase)):
                (Path(d) / name).write_text(text)
            entries = {h: (brief, found) for h, brief, found in api_entries(Path(d))}
        self.assertEqual(entries["cache.hpp"], ("The cache model.", [
            "doxygenstruct cachebook::Config\n:members:\n:undoc-members:",
            "doxygenclass cachebook::Cache\n:members:\n:undoc-members:",
            "doxygenfunction cachebook::touch", "doxygenenum cachebook::Policy"]))
        self.assertEqual(entries["chase.hpp"], ("", ["doxygenfunction cachebook::chase(int n)",
                                                     "doxygenfunction cachebook::chase(double s)"]))


class Machine(unittest.TestCase):
    """The caption's machine comes from chapter 1's JSON, and builds whatever it holds."""

    def describe(self, detected):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            if detected is not None:
                (Path(d) / "ch01_row_major.json").write_text(json.dumps({"machine": {"detected": detected}}))
            return book_machine.describe(Path(d))

    def test_known_caches_with_their_source(self):
        m = self.describe({"cpu": "X", "usable_cpus": 2, "line_bytes": 64, "caches": [
            {"name": "L1d", "type": "Data", "size_bytes": 49152, "size_text": "48 KiB", "ways": 12, "line_bytes": 64, "source": "hwloc"},
            {"name": "L1i", "type": "Instruction", "size_bytes": 32768, "size_text": "32 KiB", "ways": 8, "line_bytes": 64, "source": "hwloc"},
            {"name": "L3", "type": "Unified", "size_bytes": 32 << 20, "size_text": "32 MiB", "ways": None, "line_bytes": 64, "source": "sysfs"}]})
        self.assertEqual(m["cache_text"], "L1d 48 KiB 12-way, L3 32 MiB, 64-byte lines (from hwloc and sysfs)")
        self.assertTrue(m["summary"].startswith("X, 2 CPUs; L1d 48 KiB"))

    def test_nothing_reported(self):
        m = self.describe({"cpu": None, "usable_cpus": 1, "line_bytes": None, "caches": []})
        self.assertEqual(m["cpu"], "an unknown CPU")
        self.assertIn("caches unknown: no source reports them", m["summary"])

    def test_no_results_yet(self):
        self.assertIn("caches unknown", self.describe(None)["summary"])


class PredictionsWait(unittest.TestCase):
    """The output block after a "Predict first" prompt is folded; others stay as they are."""

    @staticmethod
    def page():
        from docutils import nodes
        from docutils.utils import new_document
        from docutils.frontend import OptionParser
        from docutils.parsers.rst import Parser

        doc = new_document("page", OptionParser(components=(Parser,)).get_default_values())

        def output(name):
            literal = nodes.literal_block("x\ny", "x\ny", classes=["program-output", f"cb-output-{name}"])
            box = nodes.container("", nodes.caption("", f"Output of {name}"), literal, literal_block=True)
            return box

        prompt = nodes.admonition("", nodes.title("", "Predict first"), nodes.paragraph("", "Which?"),
                                  classes=["cb-predict"])
        doc += [output("before"), prompt, nodes.paragraph("", "Think."), output("answer"), output("after")]
        return doc

    def test_everything_after_the_prompt_up_to_the_next_heading_is_folded(self):
        from docutils import nodes
        from cachebook_sphinx import _fold_answers, _reveal_predicted_outputs

        doc = self.page()
        later = nodes.section("", nodes.title("", "Next"), nodes.paragraph("", "Later."))
        doc += later
        _fold_answers(None, doc)
        _reveal_predicted_outputs(None, doc)
        answers = [n for n in doc.findall(nodes.container) if "cb-answer" in n["classes"]]
        self.assertEqual(len(answers), 1)
        held = [n.astext() for n in answers[0].findall(nodes.paragraph)]
        self.assertEqual(held, ["Think."])  # the reading paragraph, not the next section's
        outputs = [b["classes"][1] for b in answers[0].findall(nodes.literal_block)]
        self.assertEqual(outputs, ["cb-output-answer", "cb-output-after"])
        summary = "".join(n.astext() for n in answers[0].findall(nodes.raw))
        self.assertIn("1 paragraph, 2 output blocks", summary)
        # The answer's output is not folded a second time inside the reveal.
        self.assertFalse([n for n in answers[0].findall(nodes.container) if "cb-folded" in n["classes"]])
        self.assertEqual(later.parent, doc)

    def test_a_stepper_and_the_paragraph_that_introduces_it_stay_open(self):
        from docutils import nodes
        from cachebook_sphinx import _fold_answers

        doc = self.page()
        intro = nodes.paragraph("", "Step through it.")
        stepper = nodes.raw("", '<div class="cb-stepper" data-runs="[]"></div>', format="html")
        doc += [intro, stepper]
        _fold_answers(None, doc)
        answers = [n for n in doc.findall(nodes.container) if "cb-answer" in n["classes"]]
        self.assertEqual([n.astext() for n in answers[0].findall(nodes.paragraph)], ["Think."])
        self.assertEqual((intro.parent, stepper.parent), (doc, doc))

    def test_the_answer_is_folded_and_its_caption_is_the_summary(self):
        from docutils import nodes
        from cachebook_sphinx import _reveal_predicted_outputs

        doc = self.page()
        _reveal_predicted_outputs(None, doc)
        folded = [n for n in doc.findall(nodes.container) if "cb-reveal" in n["classes"]]
        self.assertEqual(len(folded), 1)
        html_ = "".join(n.astext() for n in folded[0].findall(nodes.raw))
        self.assertIn("<details", html_)
        self.assertIn("output of answer", html_)
        self.assertIn('class="cb-show">show', html_)
        self.assertEqual([b["classes"][1] for b in folded[0].findall(nodes.literal_block)], ["cb-output-answer"])
        self.assertFalse(list(folded[0].findall(nodes.caption)))  # the summary says it once
        others = [n for n in doc.children if isinstance(n, nodes.container) and "cb-folded" not in n["classes"]]
        self.assertEqual(len(others), 2)


class BlockWidths(unittest.TestCase):
    """book/block_widths.py: the blocks that scroll are counted and named, and more than one in
    ten fails the rendered check."""

    def report(self, scrolling: int, blocks: int) -> dict:
        block = {"kind": "output", "label": "", "first": "1. A section", "columns": 130, "shows": 124}
        return {"chapters/01/chapter.html": [dict(block, scrolls=k < scrolling) for k in range(blocks)]}

    def test_counts_and_names(self):
        import block_widths
        blocks, scrolling, wide = block_widths.summary(self.report(2, 20))
        self.assertEqual((blocks, scrolling), (20, 2))
        self.assertEqual(wide[0], "chapters/01/chapter.html: output '1. A section': 130 columns, 124 shown")

    def test_one_in_ten_at_most(self):
        import block_widths
        measured = {}
        block_widths.measure = lambda build: (measured["report"], "")
        measured["report"] = self.report(2, 20)  # 10 %: passes
        self.assertEqual(block_widths.width_defects(Path("."))[0], [])
        measured["report"] = self.report(3, 20)  # 15 %: fails
        self.assertEqual(len(block_widths.width_defects(Path("."))[0]), 1)


class ConditionsShown(unittest.TestCase):
    """A conditional sentence is held to the numbers the page shows."""

    EXPR = '"larger" if ch.r > 1 else "no larger"'

    def defects(self, value: float, text: str, page: str, shown_exprs: str = "") -> list[str]:
        import conditions_shown
        return conditions_shown.condition_defects(self.EXPR, {"ch": Results({"r": value, "r_text": text})},
                                                  page, shown_exprs)

    def test_reads_its_values(self):
        import conditions_shown
        [(_, paths)] = conditions_shown.conditions(self.EXPR)
        self.assertEqual(paths, [["ch", "r"]])

    def test_agrees_with_what_is_shown(self):
        self.assertEqual(self.defects(1.2, "1.20", "a ratio of 1.20"), [])

    def test_rounding_that_flips_the_branch_fails(self):
        # 1.004 > 1 chooses "larger", but the page shows 1.00, which is not larger than 1.
        found = self.defects(1.004, "1.00", "a ratio of 1.00")
        self.assertEqual(len(found), 1)
        self.assertIn("contradicts", found[0])

    def test_a_value_read_but_not_shown_fails(self):
        self.assertIn("does not show", self.defects(1.2, "1.20", "no figure here")[0])
        self.assertEqual(self.defects(1.2, "1.20", "no figure here", "ch.r_text"), [])

    def test_a_condition_on_the_shown_value_follows_the_page(self):
        # `r_text | shown` reads 1.00, as printed: "no larger", whatever the digits behind it.
        from cachebook_results import render_substitution
        import conditions_shown
        expr = '"larger" if ch.r_text | shown > 1 else "no larger"'
        subs = {"ch": Results({"r": 1.004, "r_text": "1.00"})}
        self.assertEqual(render_substitution(expr, subs), "no larger")
        self.assertEqual(conditions_shown.condition_defects(expr, subs, "a ratio of 1.00", ""), [])

    def test_shown_refuses_a_text_without_a_number(self):
        import jinja2
        from cachebook_results import render_substitution
        with self.assertRaises(jinja2.TemplateError):
            render_substitution('ch.r_text | shown > 1', {"ch": Results({"r_text": "unavailable"})})


class ApiIntro(unittest.TestCase):
    def test_the_intro_names_every_header(self):
        intro = (BOOK / "api.md").read_text().split("```{api-by-header}")[0]
        for header in sorted((BOOK.parent / "common" / "include" / "cachebook").glob("*.hpp")):
            with self.subTest(header=header.name):
                self.assertIn(f"`{header.name}`", intro)


class ApiHidden(unittest.TestCase):
    """The API page leaves out the golden files' plumbing, and nothing else: Doxygen drops
    every declaration whose own name is in build.API_HIDDEN, so each must name one only."""

    @staticmethod
    def members(xml: Path) -> list[str]:
        """Qualified names of the members of classes and namespaces (a header's XML repeats them)."""
        import xml.etree.ElementTree as ET

        names = []
        for path in xml.glob("*.xml"):
            for compound in ET.parse(path).getroot().iter("compounddef"):
                if compound.get("kind") in ("class", "struct", "namespace"):
                    scope = compound.findtext("compoundname")
                    names += [f"{scope}::{m.findtext('name')}" for m in compound.iter("memberdef")]
        return names

    def test_each_hidden_name_is_one_declaration_and_is_gone(self):
        import shutil
        import tempfile

        import build

        if shutil.which("doxygen") is None:
            self.skipTest("doxygen is not installed")
        with tempfile.TemporaryDirectory() as d:
            build.run_doxygen(Path(d), Path(d) / "all", hidden=())
            build.run_doxygen(Path(d), Path(d) / "page")
            every, shown = self.members(Path(d) / "all" / "xml"), self.members(Path(d) / "page" / "xml")
        for name in build.API_HIDDEN:
            with self.subTest(name=name):
                self.assertEqual(len([m for m in every if m.rsplit("::", 1)[1] == name]), 1)
        self.assertEqual(sorted(set(every) - set(shown)),
                         sorted(m for m in set(every) if m.rsplit("::", 1)[1] in build.API_HIDDEN))
        self.assertNotIn("cachebook::golden_mode", shown)


class PlotsStayClear(unittest.TestCase):
    """Figures drawn from made-up results placed where overlaps happened: no legend or label
    covers a data point or a bar, and coinciding markers both show."""

    @staticmethod
    def draw(chapter: str, data: dict) -> dict:
        import matplotlib.pyplot as plt

        import plots

        with plt.rc_context(plots.STYLE):
            figures = plots._load(plots.HERE / f"{chapter}.py").plots(data)
            for fig in figures.values():
                fig.canvas.draw()
        return figures

    def assert_clear(self, fig):
        """No legend box meets a bar or a plotted point of any axes, in the drawn figure."""
        import matplotlib.lines as mlines
        import matplotlib.patches as mpatches

        renderer = fig.canvas.get_renderer()
        legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
        boxes = [legend.get_window_extent(renderer) for legend in legends]
        boxes += [t.get_window_extent(renderer) for ax in fig.axes for t in ax.texts]
        for ax in fig.axes:
            for artist in ax.get_children():
                if isinstance(artist, mpatches.Rectangle) and artist is not ax.patch and artist.get_height():
                    shape = artist.get_window_extent(renderer)
                    self.assertFalse(any(shape.overlaps(b) for b in boxes), f"a box covers the bar at {shape}")
                elif isinstance(artist, mlines.Line2D) and artist.get_marker() not in (None, "None", ""):
                    for x, y in ax.transData.transform(artist.get_xydata()):
                        self.assertFalse(any(b.contains(x, y) for b in boxes), f"a box covers the point {x, y}")

    def test_ch06_sweep_leaves_its_points_clear(self):
        sweep = [{"op": op, "threads": t, "packed_ns": ns, "padded_ns": ns / 4, "oversubscribed": t > 2}
                 for op, ns in (("volatile", 0.4), ("atomic", 25.0)) for t in (2, 4, 8)]
        figures = self.draw("ch06", {"measured": {"sweep": sweep}})
        self.assert_clear(figures["packed_vs_padded"])
        self.assertIn("more threads than cpus", [t.get_text() for t in figures["packed_vs_padded"].legends[0].texts])

    def test_ch07_orders_legend_leaves_the_tallest_bars_clear(self):
        totals = {"ijk": 2.0, "jik": 2.0, "jki": 2.0, "kji": 2.0, "kij": 0.1, "ikj": 0.1}
        rows = [{"order": o, "model_total": t, "cachegrind": t} for o, t in totals.items()]
        data = {"orders": {"rows": rows}, "runs": {"a": [1e-3, 2e-3], "b": [1e-3, 2e-3]},
                "latency": [{"bytes": 32768, "strided_ns": 1, "gather_ns": 2, "chase_ns": 3}]}
        self.assert_clear(self.draw("ch07", data)["orders"])

    def test_ch09_coinciding_steps_both_show_and_values_sit_above_the_peak(self):
        steps = {k: {"label": label, "gflops": g, "intensity": i} for k, (label, g, i) in enumerate(
            (("1 naive", 0.3, 0.03), ("1t naive, B transposed", 2.5, 0.5), ("2 i-k-j", 2.5, 0.5),
             ("6 packed", 153.3, 40.0)))}
        figures = self.draw("ch09", {"steps": {str(k): v for k, v in steps.items()}, "n": 2048,
                                     "peak": {"measured_core": 153.3, "measured_all": 300.0, "bandwidth_gbs": 20.0}})
        markers = [line for line in figures["roofline"].axes[0].lines if line.get_marker() not in (None, "None", "")]
        self.assertTrue(all(line.get_markerfacecolor() == "none" for line in markers))
        ax = figures["gflops_steps"].axes[0]
        peak = max(line.get_zorder() for line in ax.lines)
        self.assertTrue(all(t.get_zorder() > peak and t.get_bbox_patch() is not None for t in ax.texts))

    def test_ch09_no_peak_line_runs_through_a_value(self):
        steps = {str(k): {"label": label, "gflops": g, "intensity": 1.0} for k, (label, g) in enumerate(
            (("1 naive", 0.3), ("6 packed", 150.0), ("7 OpenBLAS, 1 thread", 156.2), ("7 OpenBLAS, 2 threads", 290.0)))}
        fig = self.draw("ch09", {"steps": steps, "n": 2048,
                                 "peak": {"measured_core": 173.0, "measured_all": 300.0, "bandwidth_gbs": 20.0}})["gflops_steps"]
        ax = fig.axes[0]
        renderer = fig.canvas.get_renderer()
        for line in ax.lines:
            at = ax.transData.transform((line.get_xdata()[0], 0))[0]
            for t in ax.texts:
                box = t.get_window_extent(renderer)
                self.assertFalse(box.x0 - 1 <= at <= box.x1 + 1, f"the line at {line.get_xdata()[0]} runs through {t.get_text()}")


class FigureAlt(unittest.TestCase):
    """A figure's alt text says what it plots and its extreme values, not its caption."""

    def test_bars_lines_markers_and_reference_lines(self):
        import matplotlib.pyplot as plt

        import plots

        fig, (left, right) = plots.figure(ncols=2)
        left.barh(["naive", "tiled"], [0.5, 12.25])
        left.set_xlabel("GFLOPS")
        left.axvline(20, label="peak (20)")
        left.axvline(7, label="half peak")
        right.plot([1, 2, 4], [3.0, 9.0, 5.0], label="row walk")
        right.plot([2], [7.5], "o", label="step 3")
        right.set_xlabel("KiB")
        right.set_ylabel("ns")
        self.assertEqual(plots.describe(fig),
                         "GFLOPS, 2 bars: from 0.5 (naive) to 12.25 (tiled); marked: peak (20), half peak at 7. "
                         "ns against KiB: step 3 7.5 at 2; row walk from 3 (at 1) to 5 (at 4), highest 9 (at 2).")
        plt.close(fig)


if __name__ == "__main__":
    unittest.main(verbosity=1)
