"""The site generator: runs the chapters' scripts and writes their output into the pages.

Hand-written pages live in ``docs/``. Generated content enters them only
through markers that name their producer, one per line for a block (a table,
a figure) or inside a sentence for a number::

    <!-- gen ch12_rnn.decay_table -->
    ... what reaches 47 words back is <!-- gen ch12_rnn.factor_47 -->.

``ch12_rnn`` is a module of this package, named after its page
(``docs/ch12-rnn.md``), and ``decay_table`` a producer registered in it. The
producers load the very scripts the site serves (``docs/code/*.py``) and call
their ``compute_*`` and ``format_*`` functions, so a page and its download
cannot disagree.

``python -m generator build`` writes the complete docs tree to
``build/docs`` (all or nothing), runs MkDocs on it in strict mode and swaps
the result into ``site/``. See ``python -m generator --help``.
"""
