"""Markdown helpers: a script's output on a page.

Tables come from the script's own formatters, verbatim (each script has a
``format_table``); these helpers only frame them: the command that prints a
table above it, or a whole run's output in a console block.
"""


def command_line(command):
    """The command as a styled line above its output: `$ python3 rnn.py --vanish`."""
    return f"`$ {command}`\n{{: .command }}"


def command_table(command, table):
    """A script's table with the command that prints it."""
    return f"{command_line(command)}\n\n{table}"


def console_block(text):
    """Verbatim script output in a fenced block (fence longer than any run of backticks)."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def _longest_backtick_run(text):
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return longest
