"""The gated.py code page: docs/code/gated.md, from docs/code/gated.py and its notebook."""

from .code_pages import register_code_page
from .registry import Page

PAGE = register_code_page(Page("code/gated.md", script="code/gated.py"), "gated.py", chapter="ch13-gated.md")
