"""The build lock: one build writes the site at a time; the next one waits and says so."""

import fcntl
import os
import sys
import time

from .chapter import ROOT

LOCK = ROOT / "build" / ".lock"


class BuildLock:
    def __init__(self, path=LOCK, log=None):
        self.path = path
        self.fd = None
        self.log = log or (lambda message: print(message, file=sys.stderr, flush=True))

    def acquire(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 64, 0).decode("ascii", "replace").strip() or "?"
            self.log(f"generator: another build is running (pid {holder}); waiting for it "
                     "to finish")
            started = time.monotonic()
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            self.log(f"generator: the other build finished after "
                     f"{time.monotonic() - started:.0f} s; building")
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"{os.getpid()}\n".encode("ascii"), 0)
        return self

    def release(self):
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
