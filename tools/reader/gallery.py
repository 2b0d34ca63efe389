"""What the appendix "On other machines" shows, and what make check-results reports of it.

The machines: the build's own run first (the machine that built the book, this commit), then
every results bundle in results/ that holds (tools/reader/bundle.py), each with its chapters
valid, stale or not run; a bundle of the build's own run is that row, not a second one. The
claims: every `claims.<name>` record the chapter programs wrote in this build (text, threshold,
needs_cpus, verdict, effect), never a list kept beside them. A claim counts on a machine where
its chapter is valid there, the run was not emulated and the machine has the cpus the claim
needs; "held on k of n" counts the holds among those (a run too busy to time the claim counts
with the verdict its program gave, inconclusive).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import bundle as bundles

OWN = "this build"


@dataclass
class Machine:
    name: str                                  # "this build" or the bundle's file name without .json.gz
    bundle: dict
    chapters: dict[str, bundles.ChapterVerdict]
    own: bool = False
    same_run_as: list[str] = field(default_factory=list)  # bundles of this very run, not shown twice
    line: str = ""   # make check-results' line for a bundle (bundle.verify)

    def valid(self) -> list[str]:
        return [ch for ch, v in self.chapters.items() if v.status == "valid"]

    def stale(self) -> list[str]:
        return [ch for ch, v in self.chapters.items() if v.status == "stale"]


@dataclass
class Claim:
    chapter: str     # "ch06_false_sharing"
    name: str        # "two_cores_atomic"
    text: str        # the program's words
    threshold: float
    needs_cpus: int


@dataclass
class Cell:
    text: str
    counts: bool = False
    held: bool = False


@dataclass
class Gallery:
    machines: list[Machine]
    failed: list[str]   # one line per bundle that fails the check
    claims: list[Claim]

    def cell(self, machine: Machine, claim: Claim) -> Cell:
        state = machine.chapters.get(claim.chapter)
        if state is None or state.status != "valid":
            return Cell(state.status if state else "not run")
        record = ((machine.bundle["chapters"][claim.chapter].get("claims") or {}).get(claim.name)) or {}
        if "verdict" not in record:
            return Cell("not run")
        effect = record.get("effect")
        timed = isinstance(effect, (int, float)) and not isinstance(effect, bool)
        figure = f"{effect:.2f}x" if timed else "not timed,"
        if machine.bundle["emulated"]:
            return Cell(f"{figure} emulated")
        if claim.needs_cpus > 1 and bundles.usable_cpus(machine.bundle) < claim.needs_cpus:
            return Cell(f"needs {claim.needs_cpus} cpus")
        # a claim the run could not time (a busy machine) counts, as the program's verdict says
        verdict = record["verdict"]
        return Cell(f"{figure} {verdict}", counts=True, held=verdict == "holds")

    def tally(self, claim: Claim) -> str:
        """"held on k of n", and where it did not hold, the verdict."""
        held, counted, other = 0, 0, []
        for m in self.machines:
            c = self.cell(m, claim)
            if c.counts:
                counted += 1
                held += c.held
                if not c.held:
                    other.append(f"{c.text.split()[-1]} on {m.name}")
        return f"held on {held} of {counted}" + (f"; {', '.join(other)}" if other else "")


def program_claims(current: dict[str, dict]) -> list[Claim]:
    """Every claims.<name> record a chapter program wrote (one with a verdict and a threshold)."""
    out = []
    for chapter, data in sorted(current.items()):
        for name, record in (data.get("claims") or {}).items():
            if not isinstance(record, dict) or "verdict" not in record:
                continue
            threshold = record.get("threshold")
            if not isinstance(threshold, (int, float)):
                continue
            out.append(Claim(chapter, name, record.get("text") or name, float(threshold),
                             int(record.get("needs_cpus") or 1)))
    return out


def collect(results: Path, current: dict[str, dict], own: dict | None) -> Gallery:
    """The gallery: `own` (the build's run, bundle.own_run) first when given, then each bundle of
    `results` held against `current`, this commit's chapter results."""
    head = bundles.current_commit()
    machines = []
    if own is not None:
        machines.append(Machine(OWN, own, {ch: bundles.ChapterVerdict("valid", "") for ch in current}, own=True))
    failed = []
    for f in sorted(results.glob("*.json.gz")):
        name = f.name.removesuffix(".json.gz")
        try:
            b = bundles.load(f)
            verdict = bundles.verify(f.name, b, current, head)
        except bundles.BundleError as e:
            failed.append(f"{f.name}: {e}")
            continue
        if verdict.status != "ok":
            failed.append(verdict.line)
        elif own is not None and bundles.same_run(b, current):
            machines[0].same_run_as.append(name)
        else:
            machines.append(Machine(name, b, verdict.chapters, line=verdict.line))
    return Gallery(machines, failed, program_claims(current))
