"""`make build` and `make deploy`: MkDocs with the generator hook, run as `mkdocs build`
and `mkdocs gh-deploy --force` run it, with MkDocs' messages kept so that a failure
is said in one line.

The lock, the fresh folder and the one-step swap into site/ are the hook's (hook.py,
lock.py), the same for every command that builds. `make deploy` publishes while
it still holds the lock (so no other build replaces site/ meanwhile), and a push
the remote rejects leaves the local branch where it was.
"""

import logging
import os
import subprocess

from .chapter import ROOT, GeneratorError

CONFIG = ROOT / "mkdocs.yml"


class _Collect(logging.Handler):
    """Keep MkDocs' warnings and errors, so a failed build can say what failed."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def build(site_dir, deploy=False):
    """Build the site into site_dir; with deploy, publish it as `mkdocs gh-deploy --force`."""
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # Material 9.8's end-of-life banner
    from mkdocs import config as mkconfig
    from mkdocs.commands import build as mkbuild
    from mkdocs.exceptions import MkDocsException

    collect = _Collect()
    mk_logger = logging.getLogger("mkdocs")
    mk_logger.addHandler(collect)
    try:
        cfg = mkconfig.load_config(config_file=str(CONFIG), site_dir=str(site_dir))
        cfg.plugins.on_startup(command="gh-deploy" if deploy else "build", dirty=False)
        try:
            mkbuild.build(cfg)
            if deploy:
                _publish(cfg)  # still under the lock: no other build replaces site/ meanwhile
        finally:
            cfg.plugins.on_shutdown()
    except MkDocsException as exc:
        ours = [m for m in collect.messages if m.startswith("generator: ")]
        if ours:
            raise GeneratorError(ours[-1][len("generator: "):]) from None
        details = "; ".join(collect.messages[-5:]) or str(exc)
        raise GeneratorError(f"mkdocs build --strict failed: {details}") from None
    finally:
        mk_logger.removeHandler(collect)


def _git(*args):
    """git in the repository: (exit status, what it printed on stdout and stderr)."""
    result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return result.returncode, (result.stdout + result.stderr).strip()


def _publish(cfg):
    """What `mkdocs gh-deploy --force` does (the same commit on the local remote_branch,
    the same message, pushed with --force), except that a failure is one line and leaves
    the local branch where it was."""
    import ghp_import
    import mkdocs
    from mkdocs.commands.gh_deploy import default_message

    branch, remote = cfg.remote_branch, cfg.remote_name
    ref = f"refs/heads/{branch}"
    status, before = _git("rev-parse", "--verify", "--quiet", ref)
    before = before if status == 0 else None
    message = default_message.format(version=mkdocs.__version__,
                                     sha=_git("rev-parse", "--short", "HEAD")[1])
    try:
        ghp_import.ghp_import(cfg.site_dir, mesg=message, remote=remote, branch=branch,
                              push=False, nojekyll=True)
        status, said = _git("push", remote, branch, "--force")
    except (ghp_import.GhpError, OSError, subprocess.CalledProcessError) as exc:
        status, said = 1, getattr(exc, "message", None) or str(exc)
    if status != 0:
        _git("update-ref", ref, before) if before else _git("update-ref", "-d", ref)
        raise GeneratorError(f"publishing to {remote}'s {branch} failed: {git_said(said)}"
                             f"; nothing was published, and the local branch {branch} is as it "
                             "was")


def git_said(output):
    """What a failed git command said, in one line: its rejected, fatal and error lines
    (`fatal: 'origin' does not appear to be a git repository; fatal: Could not read from
    remote repository.`), else its first line; never a fragment of its advice."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    said = [line for line in lines if "rejected" in line]
    said = said or [line for line in lines if line.startswith(("fatal:", "error:"))]
    return "; ".join(said or lines[:1]) or "git said nothing"
