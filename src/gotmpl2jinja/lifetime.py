"""Child processes that die with their parent, however the parent dies.

Why: the Go reference renderer and the engine processes (node for @huggingface/jinja, and any
compiled engine helper) are long-lived servers. Closing their stdin ends them when the parent
exits cleanly, but a parent killed by SIGKILL (or one whose child is busy in a long render and
reads no stdin) would leave them burning a core under pid 1. On Linux the child asks the
kernel for SIGKILL when its parent dies (`prctl(PR_SET_PDEATHSIG)`, set between fork and exec);
elsewhere only the stdin-EOF exit remains.

The death signal follows the *thread* that started the child; gotmpl2jinja starts its
processes from the thread that uses them (the only other threads are the `StderrTail`
readers, which start no process).

A second interrupt must not interrupt the cleanup the first one started: Ctrl-C pressed twice,
or `timeout -s INT` (which signals the command, then its process group), would otherwise raise
KeyboardInterrupt inside an exit handler that is stopping the children, and Python prints a
traceback ("Exception ignored in atexit callback …"). The command line calls `interrupt_once`
at its start and `exiting` when its command has ended, however it ended: from then on a SIGINT
does nothing and the exit runs its cleanup to the end (closing the children's stdin, a kill
after a bounded wait; the kernel kills them anyway if the parent dies). Before that, SIGINT
raises KeyboardInterrupt as Python's own handler does.

A child's stderr is drained as it is written (`StderrTail`): an engine that logs a line per
template (minja's "Failed to generate tool call example") would otherwise fill the pipe after
a few thousand templates and block mid-render, which looks like a template that never ends.

May depend on: nothing of the project.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

PR_SET_PDEATHSIG = 1


def _death_signal_hook() -> Callable[[], None] | None:
    """A preexec_fn that sets PR_SET_PDEATHSIG (None where the platform has no prctl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return hook


_exiting = False


def interrupt_once() -> None:
    """SIGINT (in the main thread) raises KeyboardInterrupt until `exiting()`, then does
    nothing. Left alone when SIGINT is ignored already (a background job)."""
    def on_interrupt(signum: int, frame: Any) -> None:
        if not _exiting:
            raise KeyboardInterrupt

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_interrupt)


def exiting() -> None:
    """The command has ended: an interrupt from now on must not break off its cleanup."""
    global _exiting
    _exiting = True


def popen_tied(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(args, **kwargs)` for a child that must not outlive this process."""
    hook = _death_signal_hook()
    if hook is not None:
        kwargs["preexec_fn"] = hook
    return subprocess.Popen(args, **kwargs)


def stop(proc: subprocess.Popen[Any] | None) -> None:
    """End a line-protocol child politely: close its stdin (it exits on EOF), wait a moment,
    else kill it."""
    if proc is None or proc.poll() is not None:
        return
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()


class StderrTail:
    """Reads a child's stderr on a daemon thread as it comes, keeping only its last lines (for
    the message when the child dies), so that the child never blocks on a full pipe."""

    def __init__(self, proc: subprocess.Popen[Any], lines: int = 40) -> None:
        self._lines: deque[str] = deque(maxlen=lines)
        self._thread: threading.Thread | None = None
        if proc.stderr is not None:
            self._thread = threading.Thread(target=self._read, args=(proc.stderr,), daemon=True)
            self._thread.start()

    def _read(self, stream: Any) -> None:
        try:
            for line in stream:
                self._lines.append(line)
        except (OSError, ValueError):  # the pipe closed under us: the child is gone
            pass

    def text(self, wait: float = 1.0) -> str:
        """What the child wrote last; after it has exited, waits up to `wait` s for the rest."""
        if self._thread is not None:
            self._thread.join(timeout=wait)
        return "".join(self._lines).strip()
