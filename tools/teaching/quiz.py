#!/usr/bin/env python3
"""quiz.py NN (--seed WORD | --roster FILE.csv | --practice) [--build BUILD] [--out DIR]: quizzes
on a chapter's cache behaviour, a different one per seed, every simulated answer computed by the
book's simulator (BUILD/bin/cachesim) on a lackey trace written beside the quiz.

--seed WORD writes OUT/chNN-WORD/ (OUT is BUILD/quiz); --roster writes one such folder per student,
the seed being the student's id (the CSV's `id` column). Each folder holds quiz.md (for the
student), answers.md (worked solutions, for the instructor), quiz.xml (Moodle XML), quiz.json (the
questions with their answers, and for each simulated one its trace, s, E, b, policy and count, so
that `cachesim -s s -E E -b b --policy policy -t trace` reproduces the answer) and the traces.
The same seed gives a byte-identical folder. Everything is written to a temporary folder first
and moved into place once complete. --practice prints a fresh quiz with its answers instead.
Bad input (unknown chapter, a seed that is not a word, a roster without ids or with one twice)
gives one line on stderr and exit status 2, and writes nothing."""
import argparse
import csv
import hashlib
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book"))
import book_chapters  # noqa: E402  the one list of chapters
WORD = re.compile(r"[A-Za-z0-9_-]+")


class BadInput(Exception):
    pass


# ---- traces: lackey lines, as `valgrind --tool=lackey --trace-mem=yes` prints them ----

def load(addr, size):
    return f" L {addr:x},{size}"


def modify(addr, size):
    return f" M {addr:x},{size}"


def row_walk(base, rows, cols, elem):
    return [load(base + (i * cols + j) * elem, elem) for i in range(rows) for j in range(cols)]


def column_walk(base, rows, cols, elem):
    return [load(base + (i * cols + j) * elem, elem) for j in range(cols) for i in range(rows)]


def tiled_column_walk(base, n, tile, elem):
    """An n x n row-major array walked tile by tile (tiles in row order), each tile column by column."""
    out = []
    for ti in range(0, n, tile):
        for tj in range(0, n, tile):
            for j in range(tj, min(tj + tile, n)):
                for i in range(ti, min(ti + tile, n)):
                    out.append(load(base + (i * n + j) * elem, elem))
    return out


def matmul_trace(order, n, elem, bases):
    """C += A x B, n x n row-major, loops nested in `order` (e.g. "ikj"): per step A[i][k], B[k][j]
    read and C[i][j] read and written (a lackey M)."""
    a, b, c = bases
    out = []
    ranges = {x: range(n) for x in "ijk"}
    for x in ranges[order[0]]:
        for y in ranges[order[1]]:
            for z in ranges[order[2]]:
                v = dict(zip(order, (x, y, z)))
                i, j, k = v["i"], v["j"], v["k"]
                out += [load(a + (i * n + k) * elem, elem), load(b + (k * n + j) * elem, elem),
                        modify(c + (i * n + j) * elem, elem)]
    return out


def struct_walk(base, n, struct_bytes, fields):
    return [load(base + k * struct_bytes + off, size) for k in range(n) for off, size in fields]


# ---- the simulator ----

class Simulator:
    def __init__(self, cachesim):
        self.cachesim = cachesim

    def run(self, trace_path, s, E, b, policy, flags=()):
        cmd = [str(self.cachesim), "-s", str(s), "-E", str(E), "-b", str(b), "--policy", policy, "-t", str(trace_path),
               *flags]
        done = subprocess.run(cmd, capture_output=True, text=True)
        m = re.search(r"hits:(\d+) misses:(\d+) evictions:(\d+)", done.stdout)
        if done.returncode != 0 or not m:
            raise RuntimeError(f"cachesim failed on {trace_path.name}: {done.stderr.strip() or done.stdout.strip()}")
        result = dict(zip(("hits", "misses", "evictions"), map(int, m.groups())))
        kinds = re.search(r"compulsory:(-?\d+) capacity:(-?\d+) conflict:(-?\d+)", done.stdout)  # --classify
        if kinds:
            result.update(zip(("compulsory", "capacity", "conflict"), map(int, kinds.groups())))
        return result


class Quiz:
    """The questions of one quiz, with the traces they name, built in folder `where`."""

    def __init__(self, chapter, seed, where, sim):
        self.chapter, self.seed, self.where, self.sim = chapter, seed, where, sim
        # A seed's numbers depend on nothing but the chapter and the word (not on Python's hash seed).
        digest = hashlib.sha256(f"cachebook quiz {chapter} {seed}".encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        self.questions = []

    def cache(self):
        """A small cache: 2^s sets of E lines of 2^b bytes, LRU."""
        return dict(s=self.rng.choice([2, 3, 4]), E=self.rng.choice([1, 2, 4]), b=self.rng.choice([4, 5, 6]),
                    policy="lru")

    @staticmethod
    def describe(c):
        size = (1 << c["s"]) * c["E"] * (1 << c["b"])
        ways = "direct-mapped" if c["E"] == 1 else f"{c['E']}-way set-associative"
        return (f"a {size}-byte {ways} cache with {1 << c['s']} sets of {1 << c['b']}-byte lines "
                f"({c['policy'].upper()}, empty at the start; s = {c['s']}, E = {c['E']}, b = {c['b']})")

    def add(self, text, answer, work, kind="numerical", **extra):
        q = {"id": f"q{len(self.questions) + 1}", "text": text, "answer": answer, "type": kind, "worked": work}
        q.update(extra)
        self.questions.append(q)
        return q

    def simulated(self, text, lines, cache, count, work, flags=()):
        """A question whose answer is `count` (hits, misses or evictions; with --classify among
        `flags`, compulsory, capacity or conflict) of cachesim on `lines`."""
        name = f"q{len(self.questions) + 1}.trace"
        (self.where / name).write_text("\n".join(lines) + "\n")
        result = self.sim.run(self.where / name, cache["s"], cache["E"], cache["b"], cache["policy"], flags)
        kinds = (f"; compulsory {result['compulsory']}, capacity {result['capacity']}, conflict {result['conflict']}"
                 if "compulsory" in result else "")
        work = (f"{work} Simulated: {len(lines)} accesses give {result['hits']} hits, {result['misses']} misses "
                f"and {result['evictions']} evictions{kinds} (`cachesim -s {cache['s']} -E {cache['E']} -b {cache['b']} "
                f"--policy {cache['policy']} -t {name}{''.join(' ' + f for f in flags)}`).")
        extra = {"flags": list(flags)} if flags else {}
        return self.add(text, result[count], work, trace=name, s=cache["s"], E=cache["E"], b=cache["b"],
                        policy=cache["policy"], count=count, **extra), result

    # ---- question kinds ----

    def address_questions(self):
        c = self.cache()
        line = 1 << c["b"]
        addr = self.rng.randrange(0x10000, 0x80000)
        line_no, offset = divmod(addr, line)
        set_index, tag = line_no % (1 << c["s"]), line_no >> c["s"]
        cache_text = self.describe(c)
        base = f"In {cache_text}, consider the byte address 0x{addr:X}."
        how = (f"0x{addr:X} = {addr}; {addr} // {line} = {line_no} (its line), offset {offset}; "
               f"line {line_no} mod {1 << c['s']} = {set_index} (its set); {line_no} >> {c['s']} = {tag} (its tag).")
        self.add(f"{base} Which memory line (the address divided by the line size) holds it? Give the line number in decimal.",
                 line_no, how)
        self.add(f"{base} Which set does it map to? (decimal)", set_index, how)
        self.add(f"{base} What is its tag? (decimal)", tag, how)
        self.add(f"{base} At which address does its line start? Answer in hex, as 0x...",
                 f"0x{line_no * line:X}", how + f" The line starts at {line_no} x {line} = 0x{line_no * line:X}.",
                 kind="shortanswer")

    def walk_questions(self):
        c = self.cache()
        elem = 8  # the array (8 to 32 KiB) is always at least twice the cache (at most 4 KiB)
        rows, cols = self.rng.choice([32, 48, 64]), self.rng.choice([32, 48, 64])
        base = self.rng.randrange(0x1000, 0x8000) // 64 * 64
        shape = (f"a {rows} x {cols} row-major array of {elem}-byte elements at address 0x{base:X} "
                 f"(element [i][j] at 0x{base:X} + (i x {cols} + j) x {elem})")
        cache_text = self.describe(c)
        _, row = self.simulated(f"A loop reads every element of {shape} once, row by row (j inner), through "
                                f"{cache_text}. How many misses does it take?",
                                row_walk(base, rows, cols, elem), c, "misses",
                                f"A row walk reads consecutive bytes: one miss per line it touches "
                                f"({1 << c['b']}-byte lines, {elem}-byte elements).")
        _, col = self.simulated(f"The same array is read column by column (i inner), through the same cache, "
                                f"empty again. How many misses does it take?",
                                column_walk(base, rows, cols, elem), c, "misses",
                                "A column walk jumps a whole row between accesses; a line is reused only if it "
                                "survives until the walk comes back for its next element.")
        self.simulated(f"In the row walk, how many of the {rows * cols} reads hit?",
                       row_walk(base, rows, cols, elem), c, "hits",
                       "Hits are the reads minus the misses: every read after the first of each line.")
        more = self.rng.choice([False, True])  # ask for the walk with fewer misses, or the one with more
        order = sorted([(row["misses"], "the row walk"), (col["misses"], "the column walk")], reverse=more)
        pick = order[0][1] if order[0][0] != order[1][0] else "neither: they take as many"
        self.add(f"Which of the two walks takes {'more' if more else 'fewer'} misses?", pick,
                 f"Row walk {row['misses']} misses, column walk {col['misses']}.", kind="multichoice",
                 choices=["the row walk", "the column walk", "neither: they take as many"])

    def kinds_questions(self):
        c = self.cache()
        rows, cols = self.rng.choice([32, 48, 64]), self.rng.choice([32, 48, 64])
        base = self.rng.randrange(0x1000, 0x8000) // 64 * 64
        walk = column_walk(base, rows, cols, 8)
        shape = (f"a {rows} x {cols} row-major array of 8-byte elements at address 0x{base:X} "
                 f"(element [i][j] at 0x{base:X} + (i x {cols} + j) x 8)")
        self.simulated(f"A loop reads every element of {shape} once, column by column (i inner), through "
                       f"{self.describe(c)}. How many of its misses are compulsory, first touches of a line?",
                       walk, c, "compulsory",
                       "Compulsory misses are the distinct lines the walk touches, whatever the cache.",
                       flags=["--classify"])
        self.simulated("In the same walk through the same cache, how many misses are conflict misses: its misses "
                       "minus those of a fully associative LRU cache with as many lines? (The count may be negative.)",
                       walk, c, "conflict",
                       "Conflict = this cache's misses - the fully associative LRU cache's; capacity = the fully "
                       "associative cache's misses - the compulsory ones. A negative count means one big LRU set did "
                       "worse than the sets.", flags=["--classify"])
        opt = dict(c, policy="opt")
        self.simulated("The same walk, the same geometry, but with Belady's optimal replacement (OPT: on a miss in a "
                       "full set, evict the line whose next use lies farthest ahead). How many misses does it take?",
                       walk, opt, "misses",
                       "No replacement policy misses less in the same geometry; with one way per set there is no "
                       "choice, and OPT misses as LRU does.")

    def matmul_questions(self):
        c = self.cache()
        n = self.rng.choice([8, 12, 16])
        bases = (0x10000, 0x20000, 0x30000)
        order = self.rng.choice(["ijk", "ikj", "jik", "jki", "kij", "kji"])
        self.simulated(f"C += A x B multiplies {n} x {n} row-major matrices of doubles (A at 0x10000, B at "
                       f"0x20000, C at 0x30000) with the loops nested {order[0]}, {order[1]}, {order[2]} "
                       f"(outermost first); each step reads A[i][k] and B[k][j] and updates C[i][j]. "
                       f"Through {self.describe(c)}, how many misses does it take?",
                       matmul_trace(order, n, 8, bases), c, "misses",
                       f"The inner loop over {order[2]} decides which matrices are walked along a row (one miss per line) "
                       "and which down a column (one miss per element unless lines survive).")

    def tile_questions(self):
        c = dict(s=self.rng.choice([3, 4]), E=self.rng.choice([2, 4]), b=6, policy="lru")
        n, tile = self.rng.choice([32, 48]), self.rng.choice([4, 8])
        base = 0x40000
        self.simulated(f"A {n} x {n} row-major array of doubles at 0x{base:X} is read tile by tile: {tile} x {tile} "
                       f"tiles in row order, each tile column by column. Through {self.describe(c)}, how many "
                       "misses does the walk take?",
                       tiled_column_walk(base, n, tile, 8), c, "misses",
                       f"A tile's {tile} rows span {tile} lines at a time; if they stay in the cache while the tile's "
                       "columns are read, each line misses once.")
        cache_kib = self.rng.choice([16, 24, 32, 48, 64])
        elem = self.rng.choice([4, 8])
        t = math.isqrt(cache_kib * 1024 // (4 * elem))
        self.add(f"A tiled C = A x B keeps one T x T tile of each of A, B and C ({elem}-byte elements) in a "
                 f"{cache_kib} KiB cache. By the book's tile rule the three tiles take at most three quarters of "
                 "the cache. What is the largest T?", t,
                 f"3 x T x T x {elem} <= 3/4 x {cache_kib * 1024} gives T <= sqrt({cache_kib * 1024 // (4 * elem)}), "
                 f"so T = {t}.")

    def blocking_questions(self):
        l1_kib, nr = self.rng.choice([32, 48, 64]), self.rng.choice([8, 16, 24, 32])
        kc = max(16, l1_kib * 1024 // 4 * 3 // (nr * 4) // 8 * 8)
        self.add(f"Step 6 of the chapter keeps a KC x {nr} sliver of B (floats, 4 bytes) in three quarters of a "
                 f"{l1_kib} KiB L1. What is KC, the largest multiple of 8 (at least 16) that fits?", kc,
                 f"{l1_kib} KiB / 4 x 3 = {l1_kib * 1024 // 4 * 3} bytes; / ({nr} x 4) = "
                 f"{l1_kib * 1024 // 4 * 3 // (nr * 4)}; down to a multiple of 8: {kc}.")

    def layout_questions(self):
        c = dict(s=10, E=8, b=6, policy="lru")  # large enough to hold the walk: misses are distinct lines
        struct_bytes = self.rng.choice([40, 48, 72, 96])
        n = self.rng.choice([100, 200, 300])
        used = sorted(self.rng.sample(range(0, struct_bytes, 8), 2))
        fields = [(off, 8) for off in used]
        self.simulated(f"An array of {n} structs of {struct_bytes} bytes starts at a line boundary (0x100000); a "
                       f"loop reads from each struct the 8-byte fields at offsets {used[0]} and {used[1]}. How many "
                       "distinct 64-byte lines does it bring in (misses in a cache that holds them all, "
                       f"{self.describe(c)})?",
                       struct_walk(0x100000, n, struct_bytes, fields), c, "misses",
                       "Each struct's used fields fall in one or two lines; neighbouring structs may share a line.")
        soa = [load(0x200000 + k * 8, 8) for k in range(n)] + [load(0x300000 + k * 8, 8) for k in range(n)]
        self.simulated(f"The same two fields stored as two arrays of {n} doubles each (at 0x200000 and 0x300000), "
                       "read in the same loop: how many distinct lines does it bring in, in the same cache?",
                       soa, c, "misses", "Each array brings in its own bytes only: 8 doubles per 64-byte line.")


KINDS = {
    "01": ["address_questions", "walk_questions"],
    "02": ["walk_questions", "address_questions", "kinds_questions"],
    "03": ["matmul_questions", "walk_questions"],
    "04": ["tile_questions", "matmul_questions"],
    "05": ["layout_questions", "address_questions"],
    "09": ["tile_questions", "blocking_questions"],
}


def chapter_name(ch):
    try:
        name = book_chapters.chapter_numbered(ch).name
    except ValueError as why:
        raise BadInput(str(why)) from None
    if ch not in KINDS:
        raise BadInput(f"chapter {ch} has no quiz questions (quizzes exist for chapters {', '.join(sorted(KINDS))})")
    return name


def check_seed(seed, where="seed"):
    if not WORD.fullmatch(seed or ""):
        raise BadInput(f"{where} '{seed}' is not a word (letters, digits, _ and - only)")
    return seed


def read_roster(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
            header = rows and list(rows[0].keys())
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"cannot read roster {path}: {e}")
    if not rows or "id" not in (header or []):
        raise BadInput(f"roster {path} has no `id` column (a CSV with a header line naming `id`)")
    ids, seen = [], set()
    for line, row in enumerate(rows, start=2):
        sid = (row.get("id") or "").strip()
        if not sid:
            raise BadInput(f"roster {path}, line {line}: no id")
        check_seed(sid, f"roster {path}, line {line}: id")
        if sid in seen:
            raise BadInput(f"roster {path}, line {line}: id '{sid}' appears twice")
        seen.add(sid)
        ids.append(sid)
    return ids


# ---- the files ----

def quiz_md(ch, name, seed, questions):
    lines = [f"# Quiz: chapter {int(ch)}, {name[3:].replace('_', ' ')}", "", f"Quiz `{seed}`. Answer each question with a number unless it says otherwise.", ""]
    for k, q in enumerate(questions, 1):
        lines += [f"{k}. {q['text']}"]
        if q["type"] == "multichoice":
            lines += [f"   - {c}" for c in q["choices"]]
        lines.append("")
    return "\n".join(lines)


def answers_md(ch, seed, questions):
    lines = [f"# Answers: chapter {int(ch)} quiz `{seed}` (for the instructor)", ""]
    for k, q in enumerate(questions, 1):
        lines += [f"{k}. {q['text']}", "", f"   **Answer: {q['answer']}.** {q['worked']}", ""]
    return "\n".join(lines)


def moodle_xml(ch, seed, questions):
    """Moodle XML: numerical (exact, tolerance 0), shortanswer and multichoice questions in one category."""
    def text(tag, body, fmt="markdown"):
        return f'<{tag} format="{fmt}"><text>{escape(body)}</text></{tag}>'
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<quiz>",
           f'<question type="category"><category><text>$course$/cachebook/ch{ch}/{escape(seed)}</text></category></question>']
    for k, q in enumerate(questions, 1):
        head = [f'<question type="{q["type"]}">', f"<name><text>ch{ch} {escape(seed)} {k}</text></name>",
                text("questiontext", q["text"]), text("generalfeedback", q["worked"]),
                "<defaultgrade>1</defaultgrade>", "<penalty>0</penalty>", "<hidden>0</hidden>"]
        if q["type"] == "numerical":
            body = [f'<answer fraction="100"><text>{q["answer"]}</text><tolerance>0</tolerance></answer>']
        elif q["type"] == "shortanswer":
            body = ["<usecase>0</usecase>",
                    f'<answer fraction="100" format="moodle_auto_format"><text>{escape(str(q["answer"]))}</text></answer>']
        else:
            body = ["<single>true</single>", "<shuffleanswers>true</shuffleanswers>", "<answernumbering>abc</answernumbering>"]
            body += [f'<answer fraction="{100 if c == q["answer"] else 0}" format="html"><text>{escape(c)}</text></answer>'
                     for c in q["choices"]]
        out += head + body + ["</question>"]
    out.append("</quiz>")
    return "\n".join(out) + "\n"


def write_quiz(ch, seed, folder, sim):
    name = chapter_name(ch)
    folder.mkdir(parents=True)
    quiz = Quiz(ch, seed, folder, sim)
    for kind in KINDS[ch]:
        getattr(quiz, kind)()
    qs = quiz.questions
    (folder / "quiz.md").write_text(quiz_md(ch, name, seed, qs))
    (folder / "answers.md").write_text(answers_md(ch, seed, qs))
    (folder / "quiz.xml").write_text(moodle_xml(ch, seed, qs))
    (folder / "quiz.json").write_text(json.dumps({"chapter": ch, "seed": seed, "questions": qs}, indent=2) + "\n")
    return qs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chapter")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--seed")
    group.add_argument("--roster", type=Path)
    group.add_argument("--practice", action="store_true", help="print a fresh quiz and its answers")
    ap.add_argument("--build", type=Path, default=ROOT / "build")
    ap.add_argument("--out", type=Path, help="where the quiz folders go (default BUILD/quiz)")
    args = ap.parse_args()
    try:
        chapter_name(args.chapter)
        if args.practice:
            seeds = ["practice-" + os.urandom(4).hex()]
        elif args.roster is not None:
            seeds = read_roster(args.roster)
        else:
            seeds = [check_seed(args.seed)]
        cachesim = args.build / "bin" / "cachesim"
        if not os.access(cachesim, os.X_OK):
            raise BadInput(f"no simulator at {cachesim} (cmake --build {args.build} --target cachesim)")
    except BadInput as e:
        print(f"quiz: {e}", file=sys.stderr)
        return 2
    sim = Simulator(cachesim)
    out = (args.out or args.build / "quiz").resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".quiz-", dir=out) as tmp:
        try:
            made = {s: write_quiz(args.chapter, s, Path(tmp) / f"ch{args.chapter}-{s}", sim) for s in seeds}
        except RuntimeError as e:
            print(f"quiz: {e}", file=sys.stderr)
            return 1
        if args.practice:
            folder = Path(tmp) / f"ch{args.chapter}-{seeds[0]}"
            print((folder / "quiz.md").read_text())
            print((folder / "answers.md").read_text())
            return 0
        for s in seeds:  # every quiz is complete: now put them in place
            final = out / f"ch{args.chapter}-{s}"
            if final.exists():
                shutil.rmtree(final)
            os.rename(Path(tmp) / final.name, final)
    for s in seeds:
        print(f"wrote {out / f'ch{args.chapter}-{s}'} ({len(made[s])} questions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
