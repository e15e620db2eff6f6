"""The site generator: runs the chapters' scripts and puts their output into the pages.

Hand-written pages live in ``docs/``; generated content enters them only
through markers that name what they show (markers.py)::

    <!-- gen table decay from rnn.py --vanish -->
    ... what reaches 47 words back is <!-- gen value factor_05:sci from rnn.py --vanish -->.
    <!-- gen figure decay -->

The generator is a MkDocs hook (hook.py, pipeline.py), so `mkdocs build` and
`mkdocs serve` work as they do anywhere. Each chapter is declared once, in
``generator/chapters/<page>.py`` (chapter.py), and computed in a fresh worker
process (worker.py) whose results are cached by content (cache.py). Every
build, whichever command starts it, holds a lock and swaps a complete site into
site/ in one step (lock.py); ``python -m generator build`` (`make build`) and
``deploy`` (`make deploy`) run MkDocs and say a failure in one line (build.py).
"""
