"""Page weight of the built site: bytes of images per page (both theme variants).

    .venv/bin/python benchmarks/page_weight.py    (after make build)

The budget, checked by tests/test_page_weight.py, is 400,000 bytes per page.
"""

import re
import sys
from pathlib import Path

SITE = Path(__file__).resolve().parent.parent / "site"


def main():
    if not (SITE / "index.html").exists():
        sys.exit("page_weight: run `make build` first")
    print("| page | images | image bytes | HTML bytes |")
    print("|---|---:|---:|---:|")
    for page in sorted(SITE.rglob("index.html")):
        html = page.read_text("utf-8")
        images = {(page.parent / src).resolve()
                  for src in re.findall(r'<img[^>]+src="([^"#]+\.png)', html)}
        name = page.parent.relative_to(SITE).as_posix()
        name = "(home)" if name == "." else name
        print(f"| {name} | {len(images)} | {sum(p.stat().st_size for p in images):,} | "
              f"{page.stat().st_size:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
