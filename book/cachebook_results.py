"""A chapter's --json results as a MyST substitution value.

MyST 0.18 accepts only str, int and float substitution values (and checks them again
for every page with front matter), so a chapter's results are wrapped in a `str`
subclass whose text is the JSON and whose keys are reachable as attributes or items:
`{{ ch01.r1.a_2_5.line }}`, `{{ ch01.stepper[1].misses }}`. Keys win over the
methods of str and dict, and a missing key is an error (Jinja's StrictUndefined).
"""

from __future__ import annotations

import json


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
