"""How much of each served script is the site's machinery, and how much the model.

    python benchmarks/machinery.py [SCRIPT ...]

Machinery is what only the site needs, counted by the script's own top-level
definitions (read with ast, never run): the harness block, the records the reports
return (classes named *Record or *Report), the formatters and reports (format_*, report_*,
print_*), and the command line (REPORTS, DEFAULT, OPTIONS, add_options, parse_args,
main, the __main__ guard). The rest, the module docstring, the model, the data, the
training and the pure functions that compute what a report prints, is the model's.
(recurrence.py names three of its records *Report: counted as records too.)
Blank lines and comments between definitions go with the definition that follows.
"""

import ast
import sys
from pathlib import Path

CODE = Path(__file__).resolve().parent.parent / "docs" / "code"
HARNESS_START = "# The harness: the same in every script of the site"
HARNESS_END = "end of the harness"
COMMAND_LINE = {"REPORTS", "DEFAULT", "OPTIONS", "add_options", "parse_args", "main"}


def is_machinery(node):
    names = []
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        names = [node.name]
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
    elif isinstance(node, ast.If):  # if __name__ == "__main__":
        return "__main__" in ast.unparse(node.test)
    return any(n.endswith(("Record", "Report")) or n.startswith(("format_", "report_", "print_"))
               or n in COMMAND_LINE for n in names)


def count(path):
    """(lines, machinery lines) of one script."""
    lines = path.read_text("utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if HARNESS_START in line) - 1
    end = next(n for n, line in enumerate(lines) if HARNESS_END in line)
    machinery = set(range(start, end + 1))
    tree = ast.parse("\n".join(lines))
    body = [node for node in tree.body if not start <= node.lineno - 1 <= end]
    previous_end = 0  # the gap before a definition goes with it
    for node in body:
        span = range(max(previous_end, end + 1) if node.lineno > end else previous_end,
                     node.end_lineno)
        previous_end = node.end_lineno
        if is_machinery(node):
            machinery.update(span)
    return len(lines), len(machinery)


def main(argv=None):
    names = (argv if argv is not None else sys.argv[1:]) or \
        sorted(p.name for p in CODE.glob("*.py") if HARNESS_END in p.read_text("utf-8"))
    print("| script | lines | machinery | share |")
    print("|---|--:|--:|--:|")
    total = [0, 0]
    for name in names:
        lines, machinery = count(CODE / name)
        total[0] += lines
        total[1] += machinery
        print(f"| {name} | {lines:,} | {machinery:,} | {machinery / lines:.0%} |")
    print(f"| all | {total[0]:,} | {total[1]:,} | {total[1] / total[0]:.0%} |")


if __name__ == "__main__":
    main()
