#!/usr/bin/env python3
"""sandbox.py: the fence around every build and run of a submission (bubblewrap). Inside it the
submission sees /usr read-only, the few files the grader names read-only, and a private writable
directory in memory (a tmpfs of WORK_BYTES); no network, no other process, no /home, no
repository, no held-back cases, no other student's folder. prlimit caps its CPU time, address
space, processes and file size. Run as root, the sandbox drops to an unprivileged user first
(root is exempt from the process limit).

Where bubblewrap cannot start (not installed, no user namespaces), `check()` says so in one line;
the caller stops unless the instructor asked for unsandboxed grading by name
(CACHEBOOK_GRADE_UNSANDBOXED=1), which runs the same commands without the fence."""
import os
import re
import shutil
import subprocess
import tempfile

WORK = "/sandbox"               # the private writable directory, inside the sandbox
WORK_BYTES = 256 << 20          # its size: a submission that fills it fills only it
MEMORY_BYTES = 4 << 30          # address space of each process (the compiler needs about 1 GiB)
FILE_BYTES = 128 << 20          # largest file a process may write
PROCESSES = 256                 # processes of the sandbox's user
NOBODY = 65534
FIRST_UID = 200000              # run as root, submission k runs as user FIRST_UID + k, so that the
                                # process limit of one (counted per user) never starves another
UNSANDBOXED = "CACHEBOOK_GRADE_UNSANDBOXED"


def unsandboxed():
    return os.environ.get(UNSANDBOXED) == "1"


def check():
    """None when the sandbox starts here (or the instructor asked for none), else why not."""
    if unsandboxed():
        return None
    if shutil.which("bwrap") is None:
        return f"bubblewrap (bwrap) is not installed, so submissions cannot be sandboxed (install it, or set {UNSANDBOXED}=1 to grade without)"
    probe = subprocess.run(command(["true"], {}, cpu_seconds=5), capture_output=True, text=True)
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["unknown"])[-1]
        return f"the sandbox cannot start here ({why}), so submissions cannot be sandboxed (set {UNSANDBOXED}=1 to grade without)"
    return None


def command(cmd, files, cpu_seconds, writable=None, uid=NOBODY):
    """`cmd` in the sandbox; `files` maps each host path it may read to its path inside; WORK is
    `writable` (a host directory, for a build, which runs no code of the submission) or a tmpfs."""
    limits = ["prlimit", f"--cpu={int(cpu_seconds) + 1}", f"--as={MEMORY_BYTES}", f"--fsize={FILE_BYTES}",
              f"--nproc={PROCESSES}", "--"]
    if unsandboxed():
        return unfenced(limits + cmd, files, writable)
    fence = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
             "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
             "--symlink", "usr/bin", "/bin", "--ro-bind", "/etc/alternatives", "/etc/alternatives",
             "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--proc", "/proc", "--dev", "/dev",
             "--size", str(WORK_BYTES), "--tmpfs", "/tmp"]
    fence += ["--bind", str(writable), WORK] if writable else ["--size", str(WORK_BYTES), "--tmpfs", WORK]
    fence += ["--chdir", WORK]
    for host, inside in files.items():
        fence += ["--ro-bind", str(host), str(inside)]
    drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"] if os.geteuid() == 0 else []
    return drop + fence + limits + cmd


def unfenced(cmd, files, writable):
    """The same command without the fence: each path inside becomes its host path."""
    work = writable or tempfile.mkdtemp(prefix="unsandboxed-")
    places = {str(inside): str(host) for host, inside in files.items() if str(inside) != str(host)} | {WORK: str(work)}
    # A path inside, where a path starts (not within a longer one): its host path, in one pass.
    pattern = re.compile(r"(?<![\w./-])(" + "|".join(re.escape(p) for p in sorted(places, key=len, reverse=True)) + ")")
    return ["sh", "-c", 'cd "$0" && exec "$@"', str(work)] + [pattern.sub(lambda m: places[m.group(1)], w) for w in cmd]


def run(cmd, files, seconds, writable=None, uid=NOBODY):
    """The sandboxed command's result, or None when it ran longer than `seconds` (it is killed)."""
    if writable and not unsandboxed() and os.geteuid() == 0:
        os.chown(writable, uid, uid)
    try:
        return subprocess.run(command(cmd, files, seconds, writable, uid), capture_output=True, text=True, errors="replace",
                              timeout=seconds, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
