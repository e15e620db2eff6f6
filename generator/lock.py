"""What keeps site/ whole, whichever command builds it: the build lock, a fresh folder
to build into, and one atomic swap into place.

The hook (hook.py) does this for `make build`, `make deploy`, `mkdocs build` and
`mkdocs gh-deploy` alike:

1. ``BuildLock``: one build writes the site at a time; the next one waits and
   says so (build/.lock, an flock the kernel releases when a build dies).
2. ``Staging.begin``: MkDocs is pointed at a fresh folder beside the target
   (``.site.tmp-*``, readable by all as the umask allows, 0755 by default), so
   MkDocs' "cleaning site directory" empties that folder, never site/.
3. ``Staging.swap``: when MkDocs has written every file (and logged no warning
   in strict mode), the new folder and site/ trade places in one step
   (renameat2 with RENAME_EXCHANGE); the old site is then removed. Where the
   kernel or the filesystem cannot exchange, two renames with Ctrl-C and
   SIGTERM held back; a build killed between them leaves the old site at
   ``.site.old-*``, which the next build puts back before anything else.

A failed, interrupted or killed build leaves site/ as it was, and at most a
``.site.tmp-*`` folder that the next build removes.
"""

import ctypes
import errno
import fcntl
import os
import secrets
import shutil
import signal
import time
from contextlib import contextmanager
from pathlib import Path

from .chapter import ROOT, log

LOCK = ROOT / "build" / ".lock"
RENAME_EXCHANGE = 2  # linux/fs.h


class BuildLock:
    def __init__(self, path=LOCK):
        self.path = path
        self.fd = None

    def acquire(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 64, 0).decode("ascii", "replace").strip() or "?"
            log(f"generator: another build is running (pid {holder}); waiting for it to finish")
            started = time.monotonic()
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            log(f"generator: the other build finished after {time.monotonic() - started:.0f} s; "
                "building")
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"{os.getpid()}\n".encode("ascii"), 0)
        return self

    def release(self):
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def identity(path):
    """(device, inode) of what is at path now, or None: tells whether site/ was replaced."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


@contextmanager
def signals_held():
    """Ctrl-C (SIGINT) and SIGTERM held back for a few system calls; delivered right after."""
    held = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def _exchange(a, b):
    """Swap the two paths in one step; False where the kernel or filesystem cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _remove(path):
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


class Staging:
    """A fresh folder beside the target to build into, swapped into place when complete."""

    exchange = staticmethod(_exchange)  # tests replace it to exercise the fallback

    def __init__(self, target):
        self.target = Path(target).resolve()
        self.tmp = None
        self.swapped = False

    def _leftovers(self, kind):
        return sorted(self.target.parent.glob(f".{self.target.name}.{kind}-*"))

    def begin(self):
        """Clean up after a build that was killed (the lock is held: no other build runs),
        then make the folder this build writes into; returns its path."""
        parent = self.target.parent
        parent.mkdir(parents=True, exist_ok=True)
        old = self._leftovers("old")
        if old and identity(self.target) is None:  # killed between the fallback's renames
            os.rename(old[-1], self.target)
            log(f"generator: put back {self.target.name}/, which a killed build had left at "
                f"{old[-1].name}")
        for path in self._leftovers("old") + self._leftovers("tmp"):
            _remove(path)
        self.tmp = parent / f".{self.target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        os.mkdir(self.tmp, 0o777)  # as the umask allows (0755): a web server may read it
        self.swapped = False
        return str(self.tmp)

    def swap(self):
        """Put the finished folder in place of the target, in one step where possible."""
        with signals_held():
            if identity(self.target) is None:
                os.rename(self.tmp, self.target)
                old = None
            elif self.exchange(self.tmp, self.target):
                old = self.tmp  # the exchange left the old site where the new one was
            else:
                suffix = self.tmp.name.rsplit(".tmp-", 1)[1]
                old = self.target.parent / f".{self.target.name}.old-{suffix}"
                os.rename(self.target, old)
                os.rename(self.tmp, self.target)
            self.swapped = True
            self.tmp = old  # what is left to remove: the old site, or nothing
        self.discard()

    def discard(self):
        """Remove what this build left beside the target: its folder if it was not swapped
        in (a failed build), or the old site if it was."""
        if self.tmp is not None:
            _remove(self.tmp)
            self.tmp = None
