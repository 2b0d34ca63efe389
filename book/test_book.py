#!/usr/bin/python3
"""Unit tests of the book's machinery (ctest: book.pipeline). Run: /usr/bin/python3 book/test_book.py"""

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
from cachebook_sphinx import exercises_of, select_output  # noqa: E402

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
    data = {"r1": {"line": 139, "count": 3, "items": [1, 2]}, "stepper": [{"misses": 8}, {"misses": 32}]}

    def render(self, expr, value=None):
        env = jinja2.Environment(undefined=jinja2.StrictUndefined)  # as MyST renders substitutions
        return env.from_string("{{ " + expr + " }}").render(ch01=value or Results(self.data))

    def test_dotted_and_indexed_access(self):
        self.assertEqual(self.render("ch01.r1.line"), "139")
        self.assertEqual(self.render("ch01.stepper[1].misses"), "32")
        self.assertEqual(self.render("ch01.stepper[1].misses - ch01.stepper[0].misses"), "24")

    def test_keys_win_over_dict_and_str_methods(self):
        self.assertEqual(self.render("ch01.r1.count"), "3")
        self.assertEqual(self.render("ch01.r1['items'][1]"), "2")

    def test_a_missing_key_is_an_error(self):
        for expr in ("ch01.r1.nope", "ch01.nope", "ch01.stepper[5].misses", "ch01.r1.keys", "ch01.split"):
            with self.subTest(expr=expr), self.assertRaises(jinja2.exceptions.UndefinedError):
                self.render(expr)

    def test_survives_pickling_and_compares_by_content(self):
        r = Results(self.data)
        again = pickle.loads(pickle.dumps(r))
        self.assertEqual(again, r)
        self.assertEqual(again.r1.line, 139)
        self.assertNotEqual(Results({"r1": {"line": 140}}), r)

    def test_myst_accepts_it_globally_and_with_front_matter(self):
        from myst_parser.config.main import MdParserConfig, merge_file_level

        config = MdParserConfig(substitutions={"ch01": Results(self.data)})
        merged = merge_file_level(config, {"myst": {"substitutions": {"x": "1"}}}, lambda *a: self.fail(a))
        self.assertEqual(merged.substitutions["ch01"].r1.line, 139)


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
            {"name": "L1d", "type": "Data", "size_bytes": 49152, "ways": 12, "line_bytes": 64, "source": "hwloc"},
            {"name": "L1i", "type": "Instruction", "size_bytes": 32768, "ways": 8, "line_bytes": 64, "source": "hwloc"},
            {"name": "L3", "type": "Unified", "size_bytes": 32 << 20, "ways": None, "line_bytes": 64, "source": "sysfs"}]})
        self.assertEqual(m["cache_text"], "L1d 48 KiB 12-way, L3 32 MiB, 64-byte lines (from hwloc and sysfs)")
        self.assertTrue(m["summary"].startswith("X, 2 CPUs; L1d 48 KiB"))

    def test_nothing_reported(self):
        m = self.describe({"cpu": None, "usable_cpus": 1, "line_bytes": None, "caches": []})
        self.assertEqual(m["cpu"], "an unknown CPU")
        self.assertIn("caches unknown: no source reports them", m["summary"])

    def test_no_results_yet(self):
        self.assertIn("caches unknown", self.describe(None)["summary"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
