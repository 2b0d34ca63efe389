#!/usr/bin/env python3
"""sandbox.py: the fence around every build and run of a submission (bubblewrap). Inside it the
submission sees /usr read-only, the few files the grader names read-only, and a private writable
directory in memory (a tmpfs of WORK_BYTES); no network, no other process, no /home, no
repository, no held-back cases, no other student's folder. prlimit caps its CPU time, address
space, processes and file size. Run as root, the sandbox drops to the user nobody first.

Where bubblewrap cannot start (not installed, no user namespaces), `check()` says so in one line;
the caller stops unless the instructor asked for unsandboxed grading by name
(CACHEBOOK_GRADE_UNSANDBOXED=1), which runs the same commands without the fence."""
import os
import shutil
import subprocess
from pathlib import Path

WORK = "/sandbox"               # the private writable directory, inside the sandbox
WORK_BYTES = 256 << 20          # its size: a submission that fills it fills only it
MEMORY_BYTES = 4 << 30          # address space of each process (the compiler needs about 1 GiB)
FILE_BYTES = 128 << 20          # largest file a process may write
PROCESSES = 256                 # processes of the sandbox's user
NOBODY = 65534
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


def command(cmd, files, cpu_seconds):
    """`cmd` in the sandbox; `files` maps each host path it may read to its path inside."""
    limits = ["prlimit", f"--cpu={int(cpu_seconds) + 1}", f"--as={MEMORY_BYTES}", f"--fsize={FILE_BYTES}",
              f"--nproc={PROCESSES}", "--"]
    if unsandboxed():
        return limits + cmd
    fence = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
             "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
             "--symlink", "usr/bin", "/bin", "--ro-bind", "/etc/alternatives", "/etc/alternatives",
             "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
             "--size", str(WORK_BYTES), "--tmpfs", WORK, "--chdir", WORK]
    for host, inside in files.items():
        fence += ["--ro-bind", str(host), str(inside)]
    # Root is exempt from the process limit: the sandbox runs as nobody.
    drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"] if os.geteuid() == 0 else []
    return drop + fence + limits + cmd


def run(cmd, files, seconds):
    """The sandboxed command's result, or None when it ran longer than `seconds` (it is killed)."""
    try:
        return subprocess.run(command(cmd, files, seconds), capture_output=True, text=True, errors="replace",
                              timeout=seconds, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
