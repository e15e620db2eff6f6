"""site/ is replaced in one step, readable by all, and never missing: lock.py's Staging,
exercised on folders of its own (the builds that use it are in test_build_failures.py)."""

import os
import stat
import subprocess
import sys

from helpers import ROOT, tree_files

SWAP = """
import os, sys
sys.path.insert(0, {root!r})
from generator import lock
staging = lock.Staging({target!r})
new = staging.begin()
open(os.path.join(new, "index.html"), "w").write("new")
if {fallback}:
    staging.exchange = lambda a, b: False
renames = []
def rename(a, b):  # the build killed (SIGKILL: nothing runs after) at the second rename
    renames.append(a)
    if len(renames) == 2:
        os._exit(9)
    os.replace(a, b)
os.rename = rename
staging.swap()
"""


def swap_killed_at_the_second_rename(tmp_path, fallback):
    target = tmp_path / "site"
    target.mkdir()
    (target / "index.html").write_text("old")
    code = SWAP.format(root=str(ROOT), target=str(target), fallback=fallback)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return target, result


def test_the_swap_is_one_step(tmp_path):
    """renameat2(RENAME_EXCHANGE): no rename at all, so a kill at any rename changes
    nothing; the new site is in place and the old one gone."""
    target, result = swap_killed_at_the_second_rename(tmp_path, fallback=False)
    assert result.returncode == 0, result.stderr
    assert tree_files(target) == {"index.html": b"new"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_the_fallback_is_put_right_by_the_next_build(tmp_path):
    """Where the filesystem cannot exchange: two renames. A build killed between them
    leaves the old site beside the target; the next build puts it back first thing."""
    target, result = swap_killed_at_the_second_rename(tmp_path, fallback=True)
    assert result.returncode == 9, result.stderr
    assert not target.exists()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert len(left) == 2 and left[0].startswith(".site.old-") and left[1].startswith(".site.tmp-")
    sys.path.insert(0, str(ROOT))
    from generator.lock import Staging

    staging = Staging(target)
    staging.begin()  # under the lock, before it builds
    assert tree_files(target) == {"index.html": b"old"}
    staging.discard()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_the_site_is_readable_by_all(site):
    """site/ and everything in it as the umask allows (0755 folders, 0644 files with the
    usual 022), not mkdtemp's 0700: a web server running as another user can read it."""
    umask = os.umask(0o022)
    os.umask(umask)
    modes = {p.relative_to(site).as_posix(): (p.is_dir(), stat.S_IMODE(p.stat().st_mode))
             for p in [site, *site.rglob("*")]}
    wrong = {p: oct(m) for p, (folder, m) in modes.items()
             if m != (0o777 if folder else 0o666) & ~umask}
    assert wrong == {}, wrong
