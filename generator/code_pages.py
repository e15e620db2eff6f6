"""Producers shared by the code pages (docs/code/<script>.md), one module per page.

A code page is the script's companion page: its one-line summary (the first
line of the script's docstring), the notebook (download, Open in Colab), how
to run it, every run with what it shows and its output, and the download.

The outputs come from the executed notebook, whose cells run `!python3 <script>
<flags>` on the very file the site serves: what the page shows is what the
command printed.
"""

import posixpath

from . import notebooks
from .cache import digest, environment_parts
from .registry import DOCS
from .tables import console_block


def summary_of(script):
    """The first line of the script's docstring, without the leading 'name.py: ', as a
    sentence without its final full stop: 'What unrolling does to ...'."""
    first = (script.__doc__ or "").strip().splitlines()[0]
    summary = (first.split(": ", 1)[1] if ": " in first else first).rstrip(".")
    return summary[:1].upper() + summary[1:]


def flag_runs(script, name):
    """(command, description) for the bare run and each flag of a step-by-step script."""
    runs = [(f"python3 {name}", "Every step, in order.")]
    runs += [(f"python3 {name} --{flag}", help_text[0].upper() + help_text[1:] + ".")
             for flag, (help_text, _) in script.REPORTS.items()]
    return runs


def colab_url(config, notebook_path):
    """Colab's link to the notebook as `make deploy` publishes it (mkdocs.yml extra.colab)."""
    colab = config["colab"]
    return (f"https://colab.research.google.com/github/{colab['repository']}/blob/"
            f"{colab['branch']}/{notebook_path}")


def site_page_url(config, page_source):
    """The absolute address of a page (mkdocs.yml site_url, directory URLs)."""
    return config["site_url"].rstrip("/") + "/" + posixpath.splitext(page_source)[0] + "/"


def executed_notebook(ctx, name, runs, chapter, data_files=()):
    """The notebook for script `name`, executed; from the measurement cache when its
    inputs are unchanged. Returns (notebook path in the site, notebook)."""
    import nbformat

    path = f"code/{posixpath.splitext(name)[0]}.ipynb"
    source = (DOCS / ctx.page.script).read_text("utf-8")
    nb = notebooks.build_notebook(name, source, summary_of(ctx.script), runs,
                                  site_page_url(ctx.config, chapter), colab_url(ctx.config, path),
                                  data_files)
    raw = notebooks.to_bytes(nb)
    key = digest(environment_parts() + [("notebook", raw)])
    executed = ctx.measurements.load_bytes("notebooks", name, key)
    if executed is None:
        executed = notebooks.to_bytes(notebooks.execute(nb))
        ctx.measurements.store_bytes("notebooks", name, key, executed)
    return path, nbformat.reads(executed.decode("utf-8"), as_version=4)


def outputs_by_command(nb):
    """{command: what its `!command` cell printed}."""
    outputs = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("!"):
            outputs[cell.source[1:]] = "".join(o.get("text", "") for o in cell.outputs
                                               if o.get("output_type") == "stream")
    return outputs


def notebook_block(ctx, path):
    link = ctx.link(path)
    return "\n".join([
        f"[Download {posixpath.basename(path)}]({link}){{ .md-button download }} "
        f"[Open in Colab]({colab_url(ctx.config, path)}){{ .md-button }}",
        "",
        "The notebook carries the script, its one install step (numpy, which Colab "
        "already has) and every run below, with their outputs. In Colab choose "
        "*Runtime > Run all*. Colab opens it read-only: *File > Save a copy in Drive* "
        "keeps your changes.",
    ])


def runs_block(runs, outputs):
    """Every run: a heading with the command, its description, then its output."""
    return "\n\n".join(f"### `{command}`\n\n{description}\n\n{console_block(outputs[command])}"
                       for command, description in runs)


def register_code_page(page, name, chapter, runs=None, data_files=()):
    """Register the summary, notebook and runs producers of a script's code page.

    runs: (command, description) pairs; by default the script's own REPORTS flags.
    chapter: the chapter page the script feeds (for the notebook's link back).
    data_files: names, relative to docs/code/, of files embedded in the notebook.
    """
    page.uses_config = True
    page.inputs = tuple(f"code/{f}" for f in data_files)

    def listed(ctx):
        return runs if runs is not None else flag_runs(ctx.script, name)

    def notebook(ctx):
        files = [(f, (DOCS / "code" / f).read_bytes()) for f in data_files]
        return ctx.memo("notebook", lambda: executed_notebook(ctx, name, listed(ctx), chapter,
                                                              files))

    @page.inline
    def summary(ctx):
        return summary_of(ctx.script)

    @page.block
    def notebook_links(ctx):
        path, nb = notebook(ctx)
        ctx.add_file(path, notebooks.to_bytes(nb))
        return notebook_block(ctx, path)

    @page.block
    def runs_and_outputs(ctx):
        _, nb = notebook(ctx)
        return runs_block(listed(ctx), outputs_by_command(nb))

    return page
