"""The GRU conventions page: docs/conventions.md, parameter counts from docs/code/gated.py."""

from .registry import Page
from .tables import command_table

PAGE = Page("conventions.md", script="code/gated.py")


@PAGE.block
def bias_vector_table(ctx):
    g = ctx.script
    return command_table("python3 gated.py --params",
                         g.format_bias_vector_table(g.compute_bias_vector_counts()))


@PAGE.inline
def sizes(ctx):
    return f"input d = {ctx.script.PARAM_INPUT}, hidden H = {ctx.script.PARAM_HIDDEN}"
