"""Results bundles: one machine's run of every chapter, sealed so that an edit shows.

A bundle (results/<cpu>-<date>.json.gz, written by `make share`) holds each chapter's `--json`
results, the machine's description and the conditions of the run (make doctor), the commit,
the compiler and its flags. `seal` adds a checksum for every top-level key of every chapter
and one for the rest; `verify` holds a bundle against what this commit computes:

- valid:   every exact value (each chapter's `exact_keys`) equals this commit's, and every
           checksum holds;
- stale:   an exact value differs and the chapter's code changed since the bundle's commit:
           the bundle is older than the numbers, and is left out of the gallery;
- invalid: a checksum fails, or an exact value differs although the code did not change (an
           edit by hand), or the bundle is not one (not gzip, not JSON, fields missing).
Every verdict comes with one line that names the bundle and, where there is one, the key.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

FORMAT = 1
HEADER = ("format", "commit", "date", "compiler", "flags", "emulated", "machine", "conditions", "chapters")
ROOT = Path(__file__).resolve().parents[2]


class BundleError(Exception):
    """A file that is not a results bundle; the message is one line."""


def canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(obj) -> str:
    return hashlib.sha256(canonical(obj)).hexdigest()


def header_of(bundle: dict) -> dict:
    return {k: v for k, v in bundle.items() if k not in ("chapters", "checksums", "checksum")}


def seal(bundle: dict) -> dict:
    """The bundle with its checksums: one per chapter and top-level key, one for the header."""
    bundle["checksums"] = {ch: {key: digest(value) for key, value in data.items()}
                           for ch, data in bundle["chapters"].items()}
    bundle["checksum"] = digest(header_of(bundle))
    return bundle


def write(bundle: dict, path: Path) -> None:
    """Writes the sealed bundle atomically (a temporary file, then a rename)."""
    tmp = path.with_name(path.name + ".partial")
    with gzip.open(tmp, "wt", encoding="utf-8") as out:
        json.dump(seal(bundle), out, sort_keys=True, indent=1)
    tmp.replace(path)


def load(path: Path) -> dict:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            bundle = json.load(f)
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise BundleError(f"not a gzip file ({e})") from None
    except json.JSONDecodeError as e:
        raise BundleError(f"not JSON inside ({e.msg}, line {e.lineno})") from None
    if not isinstance(bundle, dict):
        raise BundleError("not a results bundle (no object at the top)")
    missing = [k for k in HEADER + ("checksums", "checksum") if k not in bundle]
    if missing:
        raise BundleError(f"not a results bundle: no {', '.join(missing)}")
    if bundle["format"] != FORMAT:
        raise BundleError(f"format {bundle['format']}, this commit reads format {FORMAT}")
    if not isinstance(bundle["chapters"], dict) or not isinstance(bundle["checksums"], dict):
        raise BundleError("not a results bundle: chapters or checksums is not an object")
    return bundle


PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def lookup(data, path: str):
    """(True, value) at a path like "orders[2].misses", or (False, None) where there is none."""
    node = data
    for name, index in PATH_PART.findall(path):
        if name:
            if not isinstance(node, dict) or name not in node:
                return False, None
            node = node[name]
        else:
            i = int(index)
            if not isinstance(node, list) or i >= len(node):
                return False, None
            node = node[i]
    return True, node


def code_changed_since(commit: str, chapter: str) -> bool:
    """True when the chapter's code or the shared library changed after `commit` (or it is unknown)."""
    paths = [f"chapters/{chapter.removeprefix('ch')}", "common"]
    known = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"],
                           capture_output=True).returncode == 0
    if not known:
        return True
    return subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", commit, "HEAD", "--", *paths],
                          capture_output=True).returncode != 0


@dataclass
class Verdict:
    status: str  # "valid", "stale" or "invalid"
    line: str    # one line naming the bundle and, where there is one, the key


def short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def first_exact_difference(bundle: dict, current: dict[str, dict]):
    """(chapter, path, bundle's value or None, this commit's value) of the first exact value that differs."""
    for chapter, data in sorted(current.items()):
        theirs = bundle["chapters"].get(chapter)
        if theirs is None:
            return chapter, "(the whole chapter)", None, "present"
        for path in data.get("exact_keys", []):
            _, ours = lookup(data, path)
            found, value = lookup(theirs, path)
            if not found or value != ours:
                return chapter, path, value if found else None, ours
    return None


def first_broken_seal(bundle: dict):
    """The first "chapter.key" whose checksum fails ("header" for the rest), or None."""
    if digest(header_of(bundle)) != bundle["checksum"]:
        return "header"
    for chapter, data in sorted(bundle["chapters"].items()):
        sums = bundle["checksums"].get(chapter, {})
        for key in sorted(set(data) | set(sums)):
            if key not in data or sums.get(key) != digest(data[key]):
                return f"{chapter}.{key}"
    return None


def verify(name: str, bundle: dict, current: dict[str, dict], head: str) -> Verdict:
    broken = first_broken_seal(bundle)
    differs = first_exact_difference(bundle, current)
    if differs:
        chapter, path, theirs, ours = differs
        fact = f"{chapter} {path} is {short(theirs)} here, this commit computes {short(ours)}"
        same_code = bundle["commit"] == head or not code_changed_since(bundle["commit"], chapter)
        if broken or same_code:
            return Verdict("invalid", f"{name}: edited by hand: {fact}")
        return Verdict("stale", f"{name}: stale, made at {bundle['commit'][:12]}: {fact}")
    if broken == "header":
        return Verdict("invalid", f"{name}: edited by hand: the header (commit, machine, conditions, ...) "
                                  "does not match its checksum")
    if broken:
        return Verdict("invalid", f"{name}: edited by hand: {broken} does not match its checksum")
    return Verdict("valid", f"{name}: {bundle['machine'].get('cpu') or 'unknown CPU'}, {bundle['date']}, "
                            f"commit {bundle['commit'][:12]}{', emulated' if bundle['emulated'] else ''}")


def current_commit() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def read_current(directory: Path, chapters: list[str]) -> dict[str, dict]:
    """Each chapter's results (DIR/chNN_slug.json) as this commit computed them."""
    out = {}
    for chapter in chapters:
        path = directory / f"{chapter}.json"
        try:
            out[chapter] = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise BundleError(f"{path}: this commit's results cannot be read ({e})") from None
    return out


def run_program(cmd: list[str], what: str) -> None:
    """Runs one program of the build from the tree's root; BundleError with its last line if it fails."""
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       cwd=ROOT)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no message"])[-1]
        raise BundleError(f"{what} exited with status {r.returncode}: {last}")


def run_chapters(bin_dir: Path, out: Path, label: str, emulator: list[str] | None = None) -> dict[str, dict]:
    """Every chapter's default run with --json into OUT, as the book runs them (chapter 9 with
    --caches from chapter 8's results), with progress on stderr; each chapter's results."""
    chapters = chapter_programs()
    for i, program in enumerate(chapters, 1):
        extra = ["--caches", str(out / "ch08_cliff.json")] if program == "ch09_matmul" else []
        start = time.monotonic()
        print(f"{label}: [{i}/{len(chapters)}] {program} ...", file=sys.stderr, flush=True)
        run_program((emulator or []) + [str(bin_dir / program), "--json", str(out / f"{program}.json")] + extra,
                    program)
        print(f"{label}: [{i}/{len(chapters)}] {program} done in {time.monotonic() - start:.0f} s",
              file=sys.stderr, flush=True)
    return read_current(out, chapters)


def chapter_programs() -> list[str]:
    return sorted(f"ch{p.name}" for p in (ROOT / "chapters").glob("[0-9][0-9]_*") if (p / "main.cpp").is_file())


def number(value):
    """A JSON number, or a number recorded as its printed text ("4.52"); None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def claim_value(bundle: dict, claim: dict):
    """The claim's ratio in a bundle, or None where the run has none."""
    data = bundle["chapters"].get(claim["chapter"], {})
    value = number(lookup(data, claim["key"])[1])
    if value is None:
        return None
    if "over" in claim:
        over = number(lookup(data, claim["over"])[1])
        if over is None or not over > 0:
            return None
        value = value / over
    return value


def usable_cpus(bundle: dict) -> int:
    cpus = bundle["machine"].get("usable_cpus")
    return cpus if isinstance(cpus, int) else 0
