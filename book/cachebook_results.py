"""A chapter's --json results as a MyST substitution value.

MyST 0.18 accepts only str, int and float substitution values (and checks them again
for every page with front matter), so a chapter's results are wrapped in a `str`
subclass whose text is the JSON and whose keys are reachable as attributes or items:
`{{ ch01.address.a_2_5.line }}`, `{{ ch01.stepper[1].misses }}`. Keys win over the
methods of str and dict, and a missing key is an error (Jinja's StrictUndefined).
"""

from __future__ import annotations

import json
import re


def wrap(value):
    if isinstance(value, dict):
        return Node(value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


class Node(dict):
    """A JSON object: keys as attributes, and no dict method hides a key."""

    def __getattribute__(self, name):
        if name.startswith("_"):
            return object.__getattribute__(self, name)
        if dict.__contains__(self, name):
            return wrap(dict.__getitem__(self, name))
        raise AttributeError(name)

    def __getitem__(self, key):
        return wrap(dict.__getitem__(self, key))


class Results(str):
    """The top level: a str (the JSON text) that also answers like its JSON object."""

    def __new__(cls, data: dict):
        self = super().__new__(cls, json.dumps(data, sort_keys=True, separators=(",", ":")))
        self.__dict__["_data"] = data
        return self

    def __getnewargs__(self):
        return (self.__dict__["_data"],)

    def __getattribute__(self, name):
        if name.startswith("_"):
            return object.__getattribute__(self, name)
        data = object.__getattribute__(self, "__dict__")["_data"]
        if name in data:
            return wrap(data[name])
        raise AttributeError(name)

    def __getitem__(self, key):
        return wrap(self.__dict__["_data"][key])

    @property
    def _plain(self) -> dict:
        return self.__dict__["_data"]


def as_code(value) -> str:
    """The Jinja filter `code`: a value shown as inline code, `{{ ch07.counters.d1_flag | code }}`
    (a substitution cannot sit inside backticks: there it would be printed as written)."""
    text = str(value)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def substitution_environment():
    """The Jinja environment of `{{ ... }}` in the book: a missing key is an error."""
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.filters["code"] = as_code
    env.filters["shown"] = shown_filter
    return env


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def shown_value(text: str) -> float | None:
    """The number a printed value shows ("1.1", "27.6 ns", "1,024"), or None if it shows none."""
    m = _NUMBER.search(text.replace(",", "")) if isinstance(text, str) else None
    return float(m.group(0)) if m else None


def shown_filter(text):
    """`ratio_text | shown`: a condition on a measured value reads it as the page prints it, so
    two ratios printed alike compare equal and the sentence chosen agrees with what is shown."""
    import jinja2

    value = shown_value(text)
    if value is None:
        raise jinja2.exceptions.FilterArgumentError(f"shown: {text!r} prints no number")
    return value


def render_substitution(expr: str, values: dict) -> str:
    """What `{{ expr }}` gives with these values (Markdown text, before it is parsed)."""
    return substitution_environment().from_string("{{" + expr + "}}").render(values)


_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def escape_tags(markdown: str) -> str:
    """A value like "<not supported>" would be read as an HTML tag and vanish from the page:
    its `<` is escaped, outside code spans (where Markdown shows text as written)."""
    out, last = [], 0
    for m in _CODE_SPAN.finditer(markdown):
        out.append(markdown[last:m.start()].replace("<", "\\<"))
        out.append(m.group(0))
        last = m.end()
    out.append(markdown[last:].replace("<", "\\<"))
    return "".join(out)


def shown_text(markdown: str) -> str:
    """The text a reader sees for a rendered substitution: code-span backticks and Markdown
    backslash escapes removed, white space collapsed (what the page's span should hold)."""
    text = _CODE_SPAN.sub(lambda m: m.group(2).strip(), markdown)
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)
    return " ".join(plain_typography(text).split())


# Sphinx's smart quotes turn ' into ’, -- into – and ... into … in prose.
_TYPOGRAPHY = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2013": "--",
                             "\u2014": "---", "\u2026": "..."})


def plain_typography(text: str) -> str:
    """Text with typographic quotes, dashes and ellipses written plainly, for comparing."""
    return text.translate(_TYPOGRAPHY)


def load_substitutions(generated) -> dict:
    """The values of `{{ ... }}`: chNN -> a chapter's --json results, `machine` -> the build
    machine, `cachesim` -> book/cachesim.md's comparison; read from BUILD/book/generated."""
    from pathlib import Path

    import book_chapters

    generated = Path(generated)
    subs = {}
    for ch in book_chapters.chapters():
        path = generated / f"{ch.program}.json"
        if path.exists():
            subs[ch.key] = Results(json.loads(path.read_text()))
    for key, name in (("machine", "machine.json"), ("cachesim", "cachesim_compare.json")):
        if (generated / name).exists():
            subs[key] = Results(json.loads((generated / name).read_text()))
    return subs
