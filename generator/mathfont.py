"""MkDocs hook: serve the math font cut down to the characters the formulas draw.

STIX Two Math (``docs/assets/fonts/stix-two-math.woff2``, 403 KB) is about half
of a chapter's first load, yet the formulas use a few dozen characters. After
the build, ``on_post_build`` reads every HTML page in ``site_dir``, collects the
characters inside ``<math>`` elements, and writes a subset of the font over the
full copy MkDocs placed at ``site_dir/assets/fonts/stix-two-math.woff2``.

What the subset keeps (``needed_characters``, ``subset_font``):

* every character in the text of a ``<math>`` element on a page, ``<mtext>``
  included, and the radical sign where there is an ``<msqrt>`` or ``<mroot>``;
* the mathematical italic letter (U+1D434..., U+1D6E2..., U+210E for h) that a
  browser draws for each Latin or Greek letter among them in a one-letter
  ``<mi>`` (CSS ``text-transform: math-auto``);
* digits and the space;
* through fontTools' closure, every glyph those lead to: the OpenType MATH
  table's size variants and assembly parts of stretchy brackets, bars, arrows,
  radicals and accents, and every GSUB alternate (``ssty`` script forms,
  dotless and flattened accent forms, ...). The MATH table itself is kept, and
  so are hinting and the name table (copyright, licence URL; STIX Two has no
  Reserved Font Name, so the subset keeps its name).

The page set decides the subset on every build, so a formula added later brings
its characters with it. A character used in a formula that the font does not
have fails the build: the browser would draw it from another font, with other
metrics.

Deterministic: fontTools keeps ``head.modified`` from the source
(``recalc_timestamp`` off) and WOFF2's Brotli stream carries no timestamp, so
the same pages give the same bytes. Reading and writing WOFF2 needs the
``brotli`` module (fontTools' ``woff`` extra, pinned in requirements.txt).

Fast: decoding the WOFF2 source (its transformed glyf table, in Python) takes
most of the time, about 2 s, so the decoded font is cached as a plain TrueType
file keyed by the source's hash, and the subset itself keyed by the source, the
characters and the versions of this module, fontTools and brotli. A build whose
formulas did not change reuses the subset; one whose formulas changed cuts a
new one from the cached TrueType font in well under a second.

Self-contained: ``math_characters``, ``needed_characters``, ``missing_characters``
and ``subset_font`` are pure functions on strings and bytes; ``subset_site`` and
``on_post_build`` are the thin file and MkDocs layers.
"""

import hashlib
import html
import io
import os
import re
import time
from pathlib import Path

FONT = "assets/fonts/stix-two-math.woff2"  # relative to docs_dir and to site_dir

MATH = re.compile(r"<math\b[^>]*>(.*?)</math>", re.S | re.I)
TAG = re.compile(r"<[^>]*>")
COMMENT = re.compile(r"<!--.*?-->", re.S)

# Characters that draw nothing: the font need not have them.
INVISIBLE = set("\u2061\u2062\u2063\u2064\u200B\u200C\u200D\u2060\uFEFF") | {" ", "\t", "\n", "\r"}


def italic(ch):
    """The mathematical italic form a browser draws for `ch` in a one-letter <mi> (CSS
    text-transform: math-auto), or None. The project's one map of letter to italic: the
    MathML hook uses it too."""
    o = ord(ch)
    if ch == "h":
        return "\u210E"  # PLANCK CONSTANT: the italic h outside the mathematical block
    if 0x41 <= o <= 0x5A:
        return chr(0x1D434 + o - 0x41)
    if 0x61 <= o <= 0x7A:
        return chr(0x1D44E + o - 0x61)
    if 0x391 <= o <= 0x3A9 and o != 0x3A2:
        return chr(0x1D6E2 + o - 0x391)
    if 0x3B1 <= o <= 0x3C9:
        return chr(0x1D6FC + o - 0x3B1)
    return {"\u0131": "\U0001D6A4", "\u0237": "\U0001D6A5", "\u03F4": "\U0001D6F3",
            "\u2207": "\U0001D6FB", "\u2202": "\U0001D715", "\u03F5": "\U0001D716",
            "\u03D1": "\U0001D717", "\u03F0": "\U0001D718", "\u03D5": "\U0001D719",
            "\u03F1": "\U0001D71A", "\u03D6": "\U0001D71B"}.get(ch)


# Always kept, whatever the pages use: basic Latin and the Greek letters. Not for
# the characters themselves: on Linux, Chromium draws with FreeType's auto-hinter,
# which fits every glyph to blue zones measured on reference letters of the font
# ("THEZOCQS", "xzroesc", "pqgjy", "ΓΒΕΖΘΟΩ", "αειοπστω", ...). Without them a
# letter comes out a pixel shorter and a formula's box moves (measured: dropping
# "c" alone changed the height of an italic H).
BASE = {chr(c) for c in range(0x20, 0x7F)} | {"\u00A0"} | {
    chr(c) for c in range(0x391, 0x3CA) if c != 0x3A2}
RADICAL = "\u221A"  # drawn by <msqrt> and <mroot>, not written in the text


class MathFontError(RuntimeError):
    """The font cannot be subset for these pages."""


def math_characters(html_text):
    """Every character the <math> elements of a page draw: their text (not their
    attributes), and the radical sign where there is a square root. The cell diagrams
    (generator/diagrams.py) set their symbols and numbers as <math> too."""
    chars = set()
    text = COMMENT.sub("", html_text)
    for match in MATH.finditer(text):
        chars.update(html.unescape(TAG.sub("", match.group(1))))
        if re.search(r"<m(?:sqrt|root)\b", match.group(1)):
            chars.add(RADICAL)
    return chars


def needed_characters(used):
    """The characters the subset keeps for pages whose formulas use `used`: those,
    the mathematical italic form of each letter among them, digits and spaces."""
    chars = set(used) | BASE
    chars |= {italic for italic in map(italic, list(chars)) if italic}
    return {c for c in chars if c not in INVISIBLE or c == " "}


def _load(font_bytes):
    from fontTools.ttLib import TTFont

    try:
        font = TTFont(io.BytesIO(font_bytes), recalcTimestamp=False, recalcBBoxes=False)
        font.getBestCmap()
        return font
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MathFontError(f"reading WOFF2 needs the brotli module ({exc}); it is pinned "
                            "in requirements.txt: reinstall the virtualenv (make)") from exc


def missing_characters(font_bytes, used):
    """The characters of `used` that draw something and have no glyph in the font."""
    cmap = _load(font_bytes).getBestCmap()
    return sorted(c for c in used if c not in INVISIBLE and ord(c) not in cmap)


def decode_font(font_bytes):
    """The font as a plain (uncompressed, untransformed) TrueType/OpenType file."""
    font = _load(font_bytes)
    if font.flavor is None:
        return font_bytes
    font.flavor = None
    out = io.BytesIO()
    font.save(out, reorderTables=False)
    return out.getvalue()


def subset_font(font_bytes, used):
    """A WOFF2 subset of the font `font_bytes` for formulas that use the characters `used`.

    `font_bytes` may be WOFF2, WOFF or plain TrueType; the same font in any of
    them gives the same subset. Raises MathFontError if the font lacks a
    character of `used`.
    """
    from fontTools import subset

    font = _load(font_bytes)
    cmap = font.getBestCmap()
    missing = sorted(c for c in used if c not in INVISIBLE and ord(c) not in cmap)
    if missing:
        shown = ", ".join(f"U+{ord(c):04X} {c!r}" for c in missing)
        raise MathFontError(f"the math font has no glyph for {shown}, used in a formula")
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]  # ssty, dtls, flac ...: whatever the browser may ask for
    options.layout_closure = True
    options.name_IDs = ["*"]         # copyright and licence URL stay in the font
    options.name_languages = ["*"]
    options.notdef_outline = True
    options.recalc_timestamp = False
    unicodes = sorted(ord(c) for c in needed_characters(used) if ord(c) in cmap)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=unicodes)
    subsetter.subset(font)
    # The WOFF2 header's version comes from the source's WOFF2 header if there is one,
    # else from head.fontRevision: take the latter always, so any container of the
    # same font gives the same bytes.
    font.flavorData = None
    out = io.BytesIO()
    try:
        subset.save_font(font, out, options)
    except ImportError as exc:  # pragma: no cover
        raise MathFontError(f"writing WOFF2 needs the brotli module ({exc})") from exc
    return out.getvalue()


def site_characters(site_dir):
    """The characters the <math> elements draw, over every HTML page under `site_dir`."""
    used = set()
    for page in sorted(Path(site_dir).rglob("*.html")):
        used |= math_characters(page.read_text(encoding="utf-8"))
    return used


def _versions():
    import fontTools

    try:
        import brotli
        brotli_version = getattr(brotli, "__version__", "?")
    except ImportError:  # pragma: no cover
        brotli_version = "none"
    return f"fonttools {fontTools.version} brotli {brotli_version}"


def _digest(*parts):
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()[:32]


def _cached(path, make):
    """The bytes in `path`, or `make()` written there first (atomically)."""
    if path is not None and path.is_file():
        return path.read_bytes()
    data = make()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return data


def subset_site(site_dir, source_font, cache_dir=None):
    """Write the subset of `source_font` for the pages in `site_dir` to site_dir/FONT.

    With `cache_dir`, the decoded source and the subset are cached there.
    Returns (source bytes, subset bytes, seconds).
    """
    start = time.perf_counter()
    font_bytes = Path(source_font).read_bytes()
    used = site_characters(site_dir)
    cache = Path(cache_dir) if cache_dir is not None else None
    versions = _versions().encode()
    source_key = _digest(font_bytes, versions)
    subset_key = _digest(font_bytes, versions, "".join(sorted(used)).encode(),
                         Path(__file__).read_bytes())
    subset_bytes = _cached(
        cache / f"subset-{subset_key}.woff2" if cache else None,
        lambda: subset_font(_cached(cache / f"source-{source_key}.ttf" if cache else None,
                                    lambda: decode_font(font_bytes)), used))
    target = Path(site_dir) / FONT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(subset_bytes)
    return len(font_bytes), len(subset_bytes), time.perf_counter() - start


def on_post_build(config, **kwargs):
    # The source is the font in docs_dir, not the copy in site_dir: `mkdocs serve`
    # may not copy an unchanged file again, and that copy may be an earlier subset.
    source = Path(config["docs_dir"]) / FONT
    config_file = config.get("config_file_path")
    cache_dir = Path(config_file).resolve().parent / "build" / "cache" / "mathfont" if config_file else None
    try:
        before, after, seconds = subset_site(config["site_dir"], source, cache_dir)
    except (MathFontError, OSError) as exc:
        from mkdocs.exceptions import PluginError

        raise PluginError(f"math font subset: {exc}") from exc
    import logging

    logging.getLogger("mkdocs.hooks.mathfont").info(
        "math font: %s cut from %d to %d bytes in %.2f s", FONT, before, after, seconds)
