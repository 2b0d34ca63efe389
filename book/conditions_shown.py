"""Conditional sentences held to the numbers a page shows.

A substitution such as `{{ "larger" if ch03.measured.i_over_j > 4 else "no larger" }}` chooses
its words from values of the chapter's JSON. The reader sees those values as the program printed
them, rounded: `i_over_j_text` beside `i_over_j`. For every condition of every substitution on a
page, this module

- lists the values the condition reads (the paths such as `ch03.measured.i_over_j`);
- evaluates the condition twice: on the JSON's values, and on the values as shown (each number
  that has a printed `_text` beside it replaced by that text read back as a number);
- reports a contradiction when the two differ: the page then chooses a sentence that the numbers
  it shows do not support (1.004 chose "larger than 1" while the page shows 1.00);
- reports a value read that the page shows nowhere, neither as a substituted value nor in an
  output block (the sentence must name what it reads).
"""

from __future__ import annotations

import copy

import jinja2
from jinja2 import nodes

from cachebook_results import Results, shown_value, substitution_environment


def _path(node) -> list | None:
    """["ch06", "measured", "ratio"] for ch06.measured.ratio (or ch06["measured"][0]...)."""
    keys = []
    while isinstance(node, (nodes.Getattr, nodes.Getitem)):
        if isinstance(node, nodes.Getattr):
            keys.append(node.attr)
        elif isinstance(node.arg, nodes.Const):
            keys.append(node.arg.value)
        else:
            return None
        node = node.node
    if not isinstance(node, nodes.Name):
        return None
    return [node.name] + keys[::-1]


def conditions(expr: str) -> list[tuple[nodes.Node, list[list]]]:
    """Each condition of the expression's `A if TEST else B`, with the paths TEST reads."""
    tree = substitution_environment().parse("{{" + expr + "}}")
    found = []
    for cond in tree.find_all(nodes.CondExpr):
        paths = []
        for node in cond.test.find_all((nodes.Getattr, nodes.Getitem)):
            p = _path(node)
            if p and len(p) > 1 and p not in paths and not any(q[:len(p)] == p for q in paths):
                paths = [q for q in paths if p[:len(q)] != q] + [p]
        found.append((cond.test, paths))
    return found


def _lookup(data, keys):
    for k in keys:
        data = data[k]
    return data


def shown_number(data: dict, keys: list):
    """The value at keys as the page shows it: its `_text` read back as a number where the
    program printed one; otherwise the value itself. None when the key is missing."""
    try:
        parent, last = _lookup(data, keys[:-1]), keys[-1]
        value = parent[last]
    except (KeyError, IndexError, TypeError):
        return None
    text = parent.get(f"{last}_text") if isinstance(parent, dict) and isinstance(last, str) else None
    shown = shown_value(text)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and shown is not None:
        return shown
    return value


def _evaluate(test, values: dict) -> str:
    template = nodes.Template([nodes.Output([nodes.Not(nodes.Not(test))])], lineno=1)  # its truth
    template.set_environment(substitution_environment())
    return substitution_environment().from_string(template).render(values)


def condition_defects(expr: str, subs: dict, page_text: str, shown_exprs: str) -> list[str]:
    """Contradictions and unnamed values of every condition of one substitution."""
    found = []
    for test, paths in conditions(expr):
        if not paths:
            continue
        as_shown = dict(subs)
        for name in {p[0] for p in paths if p[0] in subs}:
            data = copy.deepcopy(subs[name]._plain) if isinstance(subs[name], Results) else None
            if data is None:
                continue
            for p in (q for q in paths if q[0] == name):
                shown = shown_number(data, p[1:])
                if shown is not None:
                    _lookup(data, p[1:-1])[p[-1]] = shown
            as_shown[name] = Results(data)
        try:
            raw, seen = _evaluate(test, subs), _evaluate(test, as_shown)
        except (jinja2.TemplateError, TypeError, KeyError, ZeroDivisionError):
            continue  # a branch for a missing value: value_defects reports what cannot be evaluated
        dotted = ", ".join(".".join(str(k) for k in p) for p in paths)
        if raw != seen:
            found.append(f"condition on {dotted} is {raw} on the JSON's values but {seen} on the numbers "
                         f"the page shows: the sentence chosen contradicts them")
        for p in paths:
            if p[0] not in subs or not isinstance(subs[p[0]], Results):
                continue
            value = shown_number(subs[p[0]]._plain, p[1:])
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                continue  # a verdict, a name, a list: words the sentence itself says
            key = ".".join(str(k) for k in p)
            text = _lookup(subs[p[0]]._plain, p[1:-1]).get(f"{p[-1]}_text") if isinstance(p[-1], str) else None
            if not isinstance(text, str):
                continue  # printed in a form this check cannot know (a size in MiB, a rounded share)
            if key not in shown_exprs and text not in page_text:
                found.append(f"condition reads {key} = {value}, which the page does not show")
    return found
