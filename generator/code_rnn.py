"""The rnn.py code page: docs/code/rnn.md, from docs/code/rnn.py and its notebook."""

from .code_pages import register_code_page
from .registry import Page

PAGE = register_code_page(Page("code/rnn.md", script="code/rnn.py"), "rnn.py", chapter="ch12-rnn.md")
