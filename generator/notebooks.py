"""A notebook per script, written with nbformat from the very file the site serves,
executed at build time with nbclient so the download already shows every output.

Cells: a title and the summary; an install cell that needs only numpy (which
Colab already has); the script, verbatim, in a %%writefile cell (and any data
file it reads); then one markdown cell and one code cell per run. Execution
runs in an empty temporary folder, like a fresh Colab runtime. The executed
notebook carries no timing metadata, so its bytes depend only on its inputs;
it is kept in the measurement cache, because its outputs include measured
times (gru.py prints how long training took).
"""

import base64
import hashlib
import os
import shutil
import sys
import tempfile
import zlib
from pathlib import Path

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


def embed_cell_source(name, data):
    """A code cell that writes `data` to `name`, checked by its sha256."""
    packed = base64.b64encode(zlib.compress(data, 9)).decode("ascii")
    chunks = "\n".join(f'    "{packed[i:i + 96]}"' for i in range(0, len(packed), 96))
    return EMBED.format(name=name, chunks=chunks, sha256=hashlib.sha256(data).hexdigest())


def build_notebook(name, source, summary, runs, page_url, colab_url, data_files=()):
    """The unexecuted notebook for script `name` (its text `source`)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    cells = [
        new_markdown_cell(
            f"# {name}\n\n{summary}.\n\n"
            f"This notebook carries everything it needs: the script, its one install step and "
            f"every run. Choose *Runtime > Run all*. Colab opens it read-only; "
            f"*File > Save a copy in Drive* keeps your changes.\n\n"
            f"The chapter that explains the numbers: <{page_url}>. "
            f"Open in Colab: <{colab_url}>."),
        new_markdown_cell("## Install\n\nOnly numpy, which Colab already has."),
        new_code_cell(INSTALL),
        new_markdown_cell(f"## The script\n\n`{name}`, exactly as the site serves it: this cell "
                          f"writes it next to the notebook."),
        new_code_cell(f"%%writefile {name}\n{source}"),
    ]
    for data_name, data in data_files:
        cells.append(new_markdown_cell(f"`{data_name}`, the data the script reads."))
        cells.append(new_code_cell(embed_cell_source(data_name, data)))
    cells.append(new_markdown_cell("## Every run"))
    for command, description in runs:
        cells.append(new_markdown_cell(f"### `{command}`\n\n{description}"))
        cells.append(new_code_cell(f"!{command}"))
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "colab": {"provenance": []},
    })
    for index, cell in enumerate(nb.cells):  # stable ids: same inputs, same bytes
        cell["id"] = f"cell-{index:02d}"
    nbformat.validate(nb)
    return nb


def execute(nb, timeout=1800):
    """Run every cell in an empty temporary folder; return the executed notebook."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    folder = Path(tempfile.mkdtemp(prefix="notebook-"))
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # a debugger warning, not ours
    try:
        km = KernelManager(kernel_name="python3", transport="ipc",
                           ip=str(folder / "kernel"))  # unix sockets: no TCP port at all
        client = NotebookClient(nb, km=km, timeout=timeout, record_timing=False,
                                allow_errors=False,
                                resources={"metadata": {"path": str(folder)}})
        try:
            client.execute(env=env, cwd=str(folder))
        finally:
            if km.has_kernel:
                km.shutdown_kernel(now=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for cell in nb.cells:  # a terminal's line ends, from the `!` shell, read as plain ones
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                out["text"] = out["text"].replace("\r\n", "\n")
    return nb


def to_bytes(nb):
    import nbformat

    return (nbformat.writes(nb) + "\n").encode("utf-8")
