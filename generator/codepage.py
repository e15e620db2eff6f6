"""A script's companion page and its notebook, from one template.

The code page (code/<stem>.md, generated, never in docs/) says what the script
works through (the first line of its docstring), offers the script, its data,
the notebook and an "Open in Colab" link, says how to run it, lists every
report with what it shows and its output (the same runs the chapter shows),
and ends with the script itself, line-numbered and folded.

The notebook carries the script verbatim in a %%writefile cell, its data
(compressed, checked by sha256), its one install step, the script imported as a
module, and one cell per report that calls its main() with the report's flags (the
command written above it), whose output is that report's output from the same runs.
The reports share the kernel as they share one process of the script: a model trained
for one is used again by the next, so Run all trains each once.
"""

import ast
import base64
import hashlib
import posixpath
import shlex
import zlib

from .chapter import CODE, GeneratorError
from .tables import _longest_backtick_run, command, console_block

# A code page repeats its chapter's words (the summary, every report's description), so
# a search for a chapter's subject found the code page first ("forget gate": gated.py
# above chapter 13). Material's search multiplies a page's score by its boost.
CODE_PAGE_SEARCH_BOOST = 0.3

INSTALL = '''\
# numpy is the only dependency. Colab already has it, so there this cell installs
# nothing; anywhere else it installs numpy if it is missing.
import importlib.util, subprocess, sys
if importlib.util.find_spec("numpy") is None:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "numpy"])
import numpy
print("numpy", numpy.__version__)'''

EMBED = '''\
# {name}, embedded so that this notebook needs no network: zlib-compressed, base64.
import base64, hashlib, zlib
data = zlib.decompress(base64.b64decode(
{chunks}
))
assert hashlib.sha256(data).hexdigest() == "{sha256}"
open("{name}", "wb").write(data)
print("wrote {name},", len(data), "bytes, sha256 checked")'''


def definitions(source):
    """{name: (first line, last line)} of every top-level function and class of a
    script's source, decorators included, 1-based."""
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = (min([node.lineno] + [d.lineno for d in node.decorator_list]),
                                node.end_lineno)
    return found


def anchor(name):
    """The id of a quoted definition's first line on its script's code page."""
    return f"def-{name}"


def quoted_lines(script, name, where):
    """(first, last, source) of the top-level function or class `name` of the served
    docs/code/<script>; GeneratorError, naming `where`, if it defines none."""
    source = (CODE / script).read_text("utf-8")
    spans = definitions(source)
    if name not in spans:
        raise GeneratorError(f"{where}: docs/code/{script} defines no function or class "
                             f"{name!r} at top level (it defines: {', '.join(spans)})")
    first, last = spans[name]
    return first, last, "\n".join(source.splitlines()[first - 1:last])


def code_quote(chapter, name, page, where):
    """A code marker's markdown: the definition `name` of the chapter's script, folded
    under a title that names it, with a link to its lines on the code page. The quote is
    plain text, neither highlighted nor line-numbered: highlighting would make it five
    times the bytes, and a chapter's first load has a budget (the code page, loaded
    when asked for, highlights and numbers every line)."""
    first, last, text = quoted_lines(chapter.script, name, where)
    link = posixpath.relpath(chapter.code_page, posixpath.dirname(page) or ".")
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    body = (f"From [{chapter.script}, lines {first} to {last}]({link}#{anchor(name)}), as "
            f"served:\n\n{fence}text\n{text}\n{fence}")
    return (f'??? example "The code: `{name}` in {chapter.script}"\n\n'
            + "\n".join("    " + line if line else "" for line in body.splitlines()))


def listing(source, anchored=()):
    """The script, line-numbered, as fenced blocks: one more block, after an anchor, at
    the first line of each definition in `anchored` (the names a page quotes), so that a
    link can land on it; the line numbers run on across the blocks."""
    spans = definitions(source)
    starts = sorted({spans[name][0] for name in anchored})
    lines = source.rstrip().split("\n")
    fence = "`" * max(3, _longest_backtick_run(source) + 1)
    out = []
    for start, end in zip([1] + starts, starts + [len(lines) + 1]):
        if start == end:
            continue
        out += [f'<span id="{anchor(name)}"></span>' for name in sorted(anchored)
                if spans[name][0] == start]
        out += [f'{fence}python linenums="{start}"', *lines[start - 1:end - 1], fence, ""]
    return "\n".join(out)


def colab_url(colab, notebook):
    """Colab's address of the notebook as `make deploy` publishes it."""
    return (f"https://colab.research.google.com/github/{colab['repository']}/blob/"
            f"{colab['branch']}/{notebook}")


def embed_cell_source(name, data):
    """A code cell that writes `data` to `name`, checked by its sha256."""
    packed = base64.b64encode(zlib.compress(data, 9)).decode("ascii")
    chunks = "\n".join(f'    "{packed[i:i + 96]}"' for i in range(0, len(packed), 96))
    return EMBED.format(name=name, chunks=chunks, sha256=hashlib.sha256(data).hexdigest())


def notebook(chapter, summary, runs, page_url, colab):
    """The notebook's bytes: every report's cell carries that report's output."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    name = chapter.script
    source = (CODE / name).read_text("utf-8")
    cells = [
        new_markdown_cell(
            f"# {name}\n\n{summary}.\n\n"
            "This notebook carries everything it needs: the script, its one install step and "
            "every run, with the outputs they printed when the site was built. Choose "
            "*Runtime > Run all* to run them again. Colab opens it read-only; *File > Save a "
            "copy in Drive* keeps your changes.\n\n"
            f"The chapter that explains the numbers: <{page_url}>. "
            f"Open in Colab: <{colab_url(colab, chapter.notebook)}>."),
        new_markdown_cell("## Install\n\nOnly numpy, which Colab already has."),
        new_code_cell(INSTALL),
        new_markdown_cell(f"## The script\n\n`{name}`, exactly as the site serves it: this "
                          "cell writes it next to the notebook."),
        new_code_cell(f"%%writefile {name}\n{source}"),
    ]
    for data_name in chapter.data:
        cells.append(new_markdown_cell(f"`{data_name}`, the data the script reads."))
        cells.append(new_code_cell(embed_cell_source(data_name, (CODE / data_name).read_bytes())))
    module = chapter.stem
    cells.append(new_markdown_cell(
        "## Every run\n\n"
        f"The runs share this notebook's Python, as the reports of one `python3 {name}` do: "
        "a model one report trains, the next one uses again instead of training it anew. "
        f"Each cell prints what its command prints in a shell. After editing `{name}`, run "
        "its cell and the next one again."))
    cells.append(new_code_cell(
        f"import importlib, {module}  # the script above, as a module\n"
        f"{module} = importlib.reload({module})  # as the file is now"))
    for count, (cmd, description, run) in enumerate(runs, start=1):
        cells.append(new_markdown_cell(f"### `{cmd}`\n\n{description}"))
        argv = shlex.split(cmd)[2:]
        cell = new_code_cell(f"# $ {cmd}\n{module}.main({argv!r});", execution_count=count)
        cell.outputs = [new_output("stream", name="stdout", text=run.text)]
        cells.append(cell)
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "colab": {"provenance": []},
    })
    for index, cell in enumerate(nb.cells):  # stable ids: same inputs, same bytes
        cell["id"] = f"cell-{index:02d}"
    nbformat.validate(nb)
    return (nbformat.writes(nb) + "\n").encode("utf-8")


def page(chapter, title, summary, runs, colab, default_text, served=(), anchored=()):
    """The code page's markdown. served: (Served, its size in bytes, what its usage
    printed) for each record the chapter serves as a file; anchored: the definitions
    the pages quote, whose first lines get an anchor."""
    name, stem = chapter.script, chapter.stem
    source = (CODE / name).read_text("utf-8")
    lines = source.count("\n") + (not source.endswith("\n"))
    buttons = [f"[Download {name}]({name}){{ .md-button .md-button--primary download }}"]
    buttons += [f"[Download {d}]({d}){{ .md-button download }}" for d in chapter.data]
    buttons += [f"[Download {s.name}]({s.name}){{ .md-button download }}" for s, _, _ in served]
    buttons += [f"[Download {stem}.ipynb]({stem}.ipynb){{ .md-button download }}",
                f"[Open in Colab]({colab_url(colab, chapter.notebook)}){{ .md-button }}"]
    together = (f" Put {' and '.join([name, *chapter.data])} in one folder: the script reads "
                "its data from next to itself." if chapter.data else "")
    flags = default_text
    out = [
        "---",
        f"description: The companion page of {name}, the script behind {title}.",
        "search:",  # Material's search ranks it below the chapter it serves
        f"  boost: {CODE_PAGE_SEARCH_BOOST}",
        "---",
        "",
        f"# {name}",
        "",
        f"{summary}. It prints every table and feeds every plot of "
        f"[{title}](../{chapter.page}).",
        "",
        "\n".join(buttons),
        "",
        "## Run it",
        "",
        "On your machine, with Python 3.9 or newer and numpy (`pip install numpy`):"
        + together,
        "",
        "```console",
        f"$ python3 {name}",
        "```",
        "",
        f"{flags} `python3 {name} --help` lists every flag. Without numpy the script says "
        "so in one line and exits with status 1; an unknown flag is an error (status 2).",
        "",
        "In the browser: the notebook carries the script, its data, its one install step and "
        "every run below with its output. Open it in Colab and choose *Runtime > Run all*; "
        "Colab opens it read-only, and *File > Save a copy in Drive* keeps your changes.",
        "",
        "## Every run and what it prints",
        "",
        "The outputs below were printed by this very file when the site was built; lines "
        "starting with `time:` are measurements and differ from machine to machine.",
    ]
    for cmd, description, run in runs:
        out += ["", f"### `{cmd}`", "", description, "", console_block(run.text)]
    if served:
        out += ["", "## Its records, as files", "",
                "Files the build writes from this script's records, for your own code: "
                "JSON, read with Python's `json` and numpy."]
    for s, size, printed in served:
        command_line = command(name, s.argv)
        out += ["", f"### {s.name}", "",
                f"[{s.name}]({s.name}){{ download }} ({size / 1000:,.0f} KB), the record of "
                f"`{command_line}`. {s.about}", "",
                f"Read it with these lines, run in a folder holding {name} and {s.name} "
                "(the build runs them so, and shows what they printed):", "",
                f"```python\n{s.usage.strip()}\n```", "", console_block(printed)]
    shown = (f'<section class="listing" data-search-exclude markdown>\n\n'
             f"{listing(source, anchored)}\n</section>")
    body = "\n".join("    " + line if line else "" for line in shown.splitlines())
    out += ["", "## The script", "",
            f'??? note "{name}, {lines} lines, exactly as served"', "", body, ""]
    return "\n".join(out)
