"""Results bundles: one machine's run of every chapter, sealed so that an edit shows.

A bundle (results/<cpu>-<date>.json.gz, written by `make share`) holds each chapter's `--json`
results, the machine's description, the conditions of the run and the machine's profile, the
one the chapters priced their claims with (make doctor), the commit, the compiler and its flags. `seal` adds a checksum for every top-level key of every chapter
and one for the rest; `verify` holds a bundle against what this commit computes:

- invalid: a checksum fails, in any chapter (stale ones too), naming the key; or an exact value
           differs although the chapter's code did not change since the bundle's commit (an
           edit sealed again); or the file is not a bundle (not gzip, not JSON, fields missing);
- ok:      otherwise, with a verdict per chapter of this commit: valid where every exact value
           (the chapter's `exact_keys`) equals this commit's, so the chapter counts; stale where
           one differs and the chapter's code changed since (older code computed it), with the
           first such value; not run where the bundle lacks the chapter.
Every verdict comes with one line that names the bundle and, where there is one, the key.
`own_run` makes the build's own results a bundle of the same shape, for the appendix.
"""

from __future__ import annotations

import datetime
import gzip
import hashlib
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
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
class ChapterVerdict:
    status: str  # "valid" (counts), "stale" (older code's exact values) or "not run" (absent from the bundle)
    why: str     # for a stale or absent chapter: the first exact value that differs, and where it was made


@dataclass
class Verdict:
    status: str  # "ok" (sealed; each chapter valid, stale or not run) or "invalid"
    line: str    # one line naming the bundle and, where there is one, the key
    chapters: dict[str, ChapterVerdict] = field(default_factory=dict)

    def valid_chapters(self) -> list[str]:
        return [ch for ch, v in self.chapters.items() if v.status == "valid"]


def short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def exact_difference(theirs: dict, ours: dict):
    """(path, bundle's value or None, this commit's value) of a chapter's first exact value that differs."""
    for path in ours.get("exact_keys", []):
        _, want = lookup(ours, path)
        found, value = lookup(theirs, path)
        if not found or value != want:
            return path, value if found else None, want
    return None


def broken_seals(bundle: dict) -> list[str]:
    """Every "chapter.key" whose checksum fails, in every chapter (stale ones too); "header" for the rest."""
    broken = [] if digest(header_of(bundle)) == bundle["checksum"] else ["header"]
    for chapter, data in sorted(bundle["chapters"].items()):
        sums = bundle["checksums"].get(chapter)
        if not isinstance(data, dict) or not isinstance(sums, dict):
            broken.append(f"{chapter} (not an object)")
            continue
        broken += [f"{chapter}.{key}" for key in sorted(set(data) | set(sums))
                   if key not in data or sums.get(key) != digest(data[key])]
    return broken


def chapter_verdicts(bundle: dict, current: dict[str, dict], head: str, name: str):
    """Each chapter of this commit: valid, stale or not run; or a Verdict "invalid" for an exact
    value that differs although the chapter's code has not changed since the bundle's commit."""
    out = {}
    for chapter, ours in sorted(current.items()):
        theirs = bundle["chapters"].get(chapter)
        if theirs is None:
            out[chapter] = ChapterVerdict("not run", "not in this bundle")
            continue
        differs = exact_difference(theirs, ours)
        if differs is None:
            out[chapter] = ChapterVerdict("valid", "")
            continue
        path, value, want = differs
        if bundle["commit"] == head or not code_changed_since(bundle["commit"], chapter):
            return Verdict("invalid", f"{name}: edited by hand: {chapter} {path} is {short(value)} here, this commit "
                                      f"computes {short(want)}, and the chapter's code is the same")
        out[chapter] = ChapterVerdict("stale", f"made at {bundle['commit'][:12]}: {path} is {short(value)} there, "
                                               f"this commit computes {short(want)}")
    return out


def verify(name: str, bundle: dict, current: dict[str, dict], head: str) -> Verdict:
    """The bundle held against this commit's results, chapter by chapter. Every checksum must hold
    (a hand edit fails the bundle, naming the key, whatever its chapter's state); then a chapter
    counts where its exact values are this commit's, and is stale where older code computed them."""
    broken = broken_seals(bundle)
    if broken == ["header"]:
        return Verdict("invalid", f"{name}: edited by hand: the header (commit, machine, conditions, ...) "
                                  "does not match its checksum")
    if broken:
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        return Verdict("invalid", f"{name}: edited by hand: {broken[0]} does not match its checksum{more}")
    chapters = chapter_verdicts(bundle, current, head, name)
    if isinstance(chapters, Verdict):
        return chapters
    return Verdict("ok", summary_line(name, bundle, chapters, sorted(set(bundle["chapters"]) - set(current))), chapters)


def summary_line(name: str, bundle: dict, chapters: dict[str, ChapterVerdict], extra: list[str]) -> str:
    """"NAME: CPU, date, commit: k of n chapters valid; stale: ...; not run: ..."."""
    valid = [ch for ch, v in chapters.items() if v.status == "valid"]
    line = (f"{name}: {cpu_name(bundle)}, {bundle['date'][:10]}, "
            f"commit {bundle['commit'][:12]}{', emulated' if bundle['emulated'] else ''}: "
            f"{len(valid)} of {len(chapters)} chapters valid")
    stale = [f"{ch} ({v.why})" for ch, v in chapters.items() if v.status == "stale"]
    if stale:
        line += "; stale: " + "; ".join(stale)
    missing = [ch for ch, v in chapters.items() if v.status == "not run"]
    if missing:
        line += "; not run: " + ", ".join(missing)
    if extra:
        line += "; no longer chapters: " + ", ".join(extra)
    return line


def own_run(generated: Path, chapters: dict[str, dict], head: str) -> dict:
    """The build's own run as a bundle (unsealed): the machine chapter 1 detected, the conditions
    the chapters recorded, the profile the first pricing chapter recorded, this commit, the time of
    the newest result."""
    first = chapters.get("ch01_row_major", {})
    machine = dict(((first.get("machine") or {}).get("detected")) or {})
    conditions = next((d["conditions"] for d in chapters.values() if isinstance(d.get("conditions"), list)), [])
    profile = next((d["profile"] for d in chapters.values() if isinstance(d.get("profile"), dict)), None)
    stamps = [(generated / f"{ch}.json").stat().st_mtime for ch in chapters if (generated / f"{ch}.json").exists()]
    made = datetime.datetime.fromtimestamp(max(stamps), datetime.timezone.utc) if stamps else \
        datetime.datetime.now(datetime.timezone.utc)
    return {"format": FORMAT, "commit": head, "date": made.strftime("%Y-%m-%dT%H:%M:%SZ"), "compiler": "",
            "flags": "", "emulated": False, "emulator": "", "machine": machine, "conditions": conditions,
            "profile": profile, "chapters": chapters}


def same_run(bundle: dict, chapters: dict[str, dict]) -> bool:
    """True when the bundle holds exactly these chapter results: a bundle of the build's own run."""
    return bool(chapters) and all(bundle["checksums"].get(ch) == {k: digest(v) for k, v in data.items()}
                                  for ch, data in chapters.items())


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


def cpu_name(bundle: dict) -> str:
    """The CPU's name as the machine reports it, without the padding some hypervisors add."""
    return " ".join(str(bundle["machine"].get("cpu") or "unknown CPU").split())


def usable_cpus(bundle: dict) -> int:
    cpus = bundle["machine"].get("usable_cpus")
    return cpus if isinstance(cpus, int) else 0
