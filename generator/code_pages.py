"""Producers shared by the code pages (docs/code/<script>.md), one module per page.

A code page is the script's companion page: its one-line summary (the first
line of the script's docstring), how to run it, every run with what it shows
and its output, and the download. Each code_<script>.py module registers these
producers for its own page with ``register_code_page``.
"""

from .scripts import run_main
from .tables import console_block


def summary_of(script):
    """The first line of the script's docstring, without the leading 'name.py: '."""
    first = (script.__doc__ or "").strip().splitlines()[0]
    return first.split(": ", 1)[1] if ": " in first else first


def flag_runs(script, name):
    """(command, description) for the bare run and each flag of a step-by-step script."""
    runs = [(f"python3 {name}", "every step, in order")]
    runs += [(f"python3 {name} --{flag}", help_text)
             for flag, (help_text, _) in script.REPORTS.items()]
    return runs


def runs_block(runs, outputs):
    """Every run: a heading with the command, its description, then its output."""
    parts = []
    for (command, description), output in zip(runs, outputs):
        parts.append(f"### `{command}`\n\n{description[0].upper() + description[1:]}.\n\n"
                     f"{console_block(output)}")
    return "\n\n".join(parts)


def register_code_page(page, name):
    """Register summary, run_locally and runs producers for a step-by-step script's page."""

    @page.inline
    def summary(ctx):
        return summary_of(ctx.script)

    @page.block
    def runs(ctx):
        listed = flag_runs(ctx.script, name)
        return runs_block(listed, [run_main(ctx.script, command) for command, _ in listed])

    return page
