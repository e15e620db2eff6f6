"""Links and resources of the built site, read from its HTML and CSS files (no browser).

- every internal link and resource resolves to a file in site/, and every
  `#fragment` to an id (or a name) in its target page;
- the hosts the pages link to are the intended ones;
- nothing is loaded from another host: no remote script, stylesheet, image,
  frame or font, in the HTML or in the site's CSS;
- the scripts served at /code/ are byte for byte the ones in docs/code/.

URLs are resolved as the published site resolves them: each page at its address
under `site_url` (mkdocs.yml), so a root-relative link that skips the site's base
path (`/code/rnn.py` instead of `/rnn-explainer/code/rnn.py`) is broken, and a
link to the site's own address (the canonical link) is internal. The helpers are
checked on fabricated pages at the end of this file.
"""

import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest
import yaml
from bs4 import BeautifulSoup

from helpers import CHAPTERS, CODE, ROOT, SITE

# Hosts the pages may link to (plain links: nothing is loaded from them).
EXPECTED_HOSTS = {"github.com", "colab.research.google.com"}
# The served files of docs/code/ that must be in the site whatever else is there.
REQUIRED_CODE = sorted({f for ch in CHAPTERS for f in (ch.script, *ch.data)})
IGNORED_SCHEMES = {"mailto", "data", "blob", "tel", "javascript"}

# Elements and attributes that point somewhere.
LINK_ATTRS = {"a": ["href"], "area": ["href"], "link": ["href"], "script": ["src"],
              "img": ["src", "srcset"], "source": ["src", "srcset"], "iframe": ["src"],
              "video": ["src", "poster"], "audio": ["src"], "embed": ["src"],
              "object": ["data"], "track": ["src"]}
# <link rel=...> values that make the browser fetch the target.
LOADING_RELS = {"stylesheet", "icon", "shortcut", "apple-touch-icon", "preload",
                "modulepreload", "prefetch", "preconnect", "dns-prefetch", "manifest",
                "mask-icon"}


def site_url(root=ROOT):
    config = yaml.safe_load((Path(root) / "mkdocs.yml").read_text(encoding="utf-8"))
    url = config["site_url"]
    return url if url.endswith("/") else url + "/"


SITE_URL = site_url()


def html_files(site_dir=SITE):
    return sorted(Path(site_dir).rglob("*.html"))


def page_address(path, site_dir=SITE, base=SITE_URL):
    """Where a file of site/ is published: site/code/rnn/index.html -> <base>code/rnn/."""
    rel = Path(path).relative_to(site_dir).as_posix()
    if rel == "index.html":
        rel = ""
    elif rel.endswith("/index.html"):
        rel = rel[: -len("index.html")]
    return base + rel


def resolve(url, page_addr, site_dir=SITE, base=SITE_URL):
    """Classify one URL found on the page published at page_addr.

    Returns ("ignore", None, None), ("external", host, None) or
    ("internal", path-in-site or None, fragment); the path is None when the URL
    is under the site's host but outside its base path.
    """
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() in IGNORED_SCHEMES:
        return ("ignore", None, None)
    absolute = urlsplit(urljoin(page_addr, url))
    site = urlsplit(base)
    if absolute.scheme not in ("http", "https"):
        return ("external", f"{absolute.scheme}:", None)
    if absolute.netloc.lower() != site.netloc.lower():
        return ("external", absolute.hostname, None)
    if not absolute.path.startswith(site.path):
        return ("internal", None, unquote(absolute.fragment))
    rel = unquote(absolute.path[len(site.path):])
    target = Path(site_dir) / rel
    if rel == "" or rel.endswith("/") or target.is_dir():
        target = target / "index.html"
    return ("internal", target, unquote(absolute.fragment))


def urls_of(soup):
    """(tag, attribute, url) for every link or resource reference in a page."""
    found = []
    for tag in soup.find_all(list(LINK_ATTRS)):
        for attr in LINK_ATTRS[tag.name]:
            value = tag.get(attr)
            if value is None:
                continue
            if attr == "srcset":
                for candidate in value.split(","):
                    if candidate.strip():
                        found.append((tag, attr, candidate.split()[0]))
            else:
                found.append((tag, attr, value))
    return found


def loads_resource(tag, attr):
    """Whether the browser fetches this reference while showing the page."""
    if tag.name in ("a", "area"):
        return False
    if tag.name == "link":
        return bool(LOADING_RELS & {rel.lower() for rel in tag.get("rel", [])})
    return True


@lru_cache(maxsize=None)
def parse(path):
    return BeautifulSoup(Path(path).read_text(encoding="utf-8"), "html.parser")


@lru_cache(maxsize=None)
def anchors(path):
    soup = parse(path)
    return ({tag["id"] for tag in soup.find_all(id=True)}
            | {tag["name"] for tag in soup.find_all(attrs={"name": True})})


def link_problems(path, site_dir=SITE, base=SITE_URL):
    """Broken internal links and missing fragments of one HTML file, as messages."""
    problems = []
    page_addr = page_address(path, site_dir, base)
    for tag, attr, url in urls_of(parse(path)):
        kind, target, fragment = resolve(url, page_addr, site_dir, base)
        if kind != "internal":
            continue
        where = f"<{tag.name} {attr}={url!r}>"
        if target is None:
            problems.append(f"{where}: outside the site's base path {urlsplit(base).path}")
        elif not target.is_file():
            problems.append(f"{where}: no file {target.relative_to(site_dir)}")
        elif fragment and target.suffix == ".html" and fragment not in anchors(target):
            problems.append(f"{where}: no id {fragment!r} in {target.relative_to(site_dir)}")
    return problems


def external_links(path, site_dir=SITE, base=SITE_URL):
    """{host: [url, ...]} of the links of one HTML file to other hosts."""
    hosts = {}
    page_addr = page_address(path, site_dir, base)
    for tag, attr, url in urls_of(parse(path)):
        kind, host, _ = resolve(url, page_addr, site_dir, base)
        if kind == "external":
            hosts.setdefault(host, []).append(url)
    return hosts


def remote_resources(path, site_dir=SITE, base=SITE_URL):
    """Resources one HTML file makes the browser fetch from another host."""
    soup = parse(path)
    page_addr = page_address(path, site_dir, base)
    found = [f"<{tag.name} {attr}={url!r}>" for tag, attr, url in urls_of(soup)
             if loads_resource(tag, attr)
             and resolve(url, page_addr, site_dir, base)[0] == "external"]
    for style in soup.find_all("style"):
        found += [f"<style> {ref}" for ref in remote_css_refs(style.get_text())]
    for tag in soup.find_all(style=True):
        found += [f"<{tag.name} style> {ref}" for ref in remote_css_refs(tag["style"])]
    return found


CSS_URL = re.compile(r"url\(\s*(?:\"([^\"]*)\"|'([^']*)'|([^\"')\s][^)\s]*))\s*\)", re.I)
CSS_IMPORT = re.compile(r"@import\s+[\"']([^\"']+)[\"']", re.I)  # url(...) is CSS_URL's
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)


def css_refs(css):
    """Every url(...) and @import target of a style sheet."""
    refs = [next(group for group in m.groups() if group is not None)
            for m in CSS_URL.finditer(css)]
    refs += CSS_IMPORT.findall(css)
    return [ref.strip() for ref in refs]


def remote_css_refs(css):
    return [ref for ref in css_refs(css) if REMOTE.match(ref)]


def css_problems(path, site_dir=SITE):
    """Remote references of one CSS file, and local ones that lead to no file."""
    css = Path(path).read_text(encoding="utf-8")
    problems = [f"remote: {ref}" for ref in remote_css_refs(css)]
    for ref in css_refs(css):
        if REMOTE.match(ref) or ref.startswith(("data:", "#")) or not ref:
            continue
        target = (Path(path).parent / unquote(urlsplit(ref).path)).resolve()
        if not target.is_file():
            problems.append(f"missing: {ref}")
    return problems


def file_ids(paths, site_dir=SITE):
    return [Path(p).relative_to(site_dir).as_posix() for p in paths]


PAGES = html_files() or [SITE / "<site not built>"]
STYLESHEETS = sorted(SITE.rglob("*.css")) or [SITE / "<site not built>"]
SERVED_CODE = sorted(set(REQUIRED_CODE) | {
    p.name for p in CODE.iterdir()
    if p.is_file() and p.suffix != ".md" and not p.name.startswith(".")})


# The built site.

@pytest.mark.parametrize("path", PAGES, ids=file_ids(PAGES))
def test_internal_links_and_fragments_resolve(site, path):
    problems = link_problems(path)
    assert not problems, f"{path.relative_to(site)}:\n  " + "\n  ".join(problems)


def test_the_site_links_only_to_the_intended_hosts(site):
    assert len(html_files()) > 1, "no pages found in site/"
    unexpected = {}
    for path in html_files():
        for host, urls in external_links(path).items():
            if host not in EXPECTED_HOSTS:
                unexpected.setdefault(host, []).extend(
                    f"{path.relative_to(site)}: {url}" for url in urls)
    assert not unexpected, (
        f"links to hosts other than {sorted(EXPECTED_HOSTS)}:\n  "
        + "\n  ".join(f"{host}: {', '.join(urls)}" for host, urls in sorted(unexpected.items())))


def test_colab_links_open_notebooks_of_the_published_site(site):
    """Colab's /github/<repo>/blob/<branch>/<path>: the repository of mkdocs.yml's
    extra.colab, the branch `make deploy` publishes to (remote_branch), a file of site/."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    colab = config["extra"]["colab"]
    prefix = f"/github/{colab['repository']}/blob/{config['remote_branch']}/"
    links = [(path, url) for path in html_files()
             for url in external_links(path).get("colab.research.google.com", [])]
    assert len({url for _, url in links}) == len(CHAPTERS), "one Colab link per notebook"
    wrong = []
    for path, url in links:
        link_path = unquote(urlsplit(url).path)
        if not link_path.startswith(prefix):
            wrong.append(f"{path.relative_to(site)}: {url} does not start with {prefix}")
        elif not (site / link_path[len(prefix):]).is_file():
            wrong.append(f"{path.relative_to(site)}: {url}: no {link_path[len(prefix):]} in site/")
    assert not wrong, "\n  ".join(["Colab links that open nothing:"] + wrong)


@pytest.mark.parametrize("path", PAGES, ids=file_ids(PAGES))
def test_pages_load_nothing_from_other_hosts(site, path):
    remote = remote_resources(path)
    assert not remote, f"{path.relative_to(site)} loads from another host:\n  " + "\n  ".join(remote)


# Elements whose text the browser reads raw up to their end tag: written bare in a page's
# prose ("<title>"), one swallows the rest of the page, Material's scripts with it.
RAW_TEXT = ["title", "textarea", "style", "script", "xmp", "noscript", "plaintext", "iframe",
            "noembed", "noframes", "template"]


def raw_text_in_prose(path):
    """The raw-text elements in a page's content outside inline SVG (where <title> is
    an SVG element, not HTML's)."""
    content = BeautifulSoup(Path(path).read_text(encoding="utf-8"), "html.parser")
    content = content.select_one(".md-content")
    if content is None:
        return []
    return [f"<{tag.name}> before: {tag.get_text()[:60]!r}" for tag in content.find_all(RAW_TEXT)
            if not tag.find_parent("svg")]


@pytest.mark.parametrize("path", PAGES, ids=file_ids(PAGES))
def test_no_page_holds_a_bare_tag_that_swallows_the_rest(site, path):
    found = raw_text_in_prose(path)
    assert not found, (f"{path.relative_to(site)}: write these in backticks:\n  "
                       + "\n  ".join(found))


def unnamed_columns(path):
    """The tables of a page's content with a header cell left empty: the cells under it
    have no header for a screen reader to say (axe's td-has-header, in Lighthouse)."""
    content = BeautifulSoup(Path(path).read_text(encoding="utf-8"), "html.parser")
    return [[th.get_text(" ", strip=True)[:30] for th in table.select("thead th")]
            for table in content.select(".md-content table")
            if any(not th.get_text(strip=True) for th in table.select("thead th"))]


@pytest.mark.parametrize("path", PAGES, ids=file_ids(PAGES))
def test_every_table_column_has_a_header(site, path):
    found = unnamed_columns(path)
    assert not found, f"{path.relative_to(site)}: tables with an empty header cell: {found}"


@pytest.mark.parametrize("path", STYLESHEETS, ids=file_ids(STYLESHEETS))
def test_stylesheets_load_nothing_from_other_hosts(site, path):
    problems = css_problems(path)
    assert not problems, f"{path.relative_to(site)}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("name", SERVED_CODE)
def test_served_code_is_the_repository_file(site, name):
    source, served = CODE / name, site / "code" / name
    assert source.is_file(), f"docs/code/{name} is missing"
    assert served.is_file(), f"site/code/{name} is missing: the script is not served"
    assert served.read_bytes() == source.read_bytes(), (
        f"site/code/{name} differs from docs/code/{name}")


# The helpers, on fabricated pages: each check can fail.

def make_site(tmp_path, pages):
    for rel, text in pages.items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return tmp_path


BASE = "https://example.org/proj/"


def test_helper_flags_missing_files_fragments_and_paths_outside_the_base(tmp_path):
    site = make_site(tmp_path, {
        "index.html": '<h1 id="top">x</h1><a name="legacy"></a>',
        "a/index.html": """
            <a href="../">ok</a> <a href="../#top">ok</a> <a href="../#legacy">ok</a>
            <a href="#here" id="here">ok</a> <a href="mailto:x@y.z">ok</a>
            <a href="https://example.org/proj/a/">ok, the site's own address</a>
            <a href="../b/">missing page</a> <a href="../#nowhere">missing id</a>
            <img src="../img/p-light.png#only-light" alt="p">
            <script src="/assets/app.js"></script>
            <link rel="stylesheet" href="/proj/style.css?v=1">
        """,
        "style.css": "",
    })
    problems = link_problems(site / "a/index.html", site, BASE)
    assert len(problems) == 4, problems
    assert "no file b/index.html" in problems[0]
    assert "no id 'nowhere'" in problems[1]
    assert "no file img/p-light.png" in problems[2]
    assert "outside the site's base path /proj/" in problems[3]


def test_helper_lists_hosts_and_remote_resources(tmp_path):
    site = make_site(tmp_path, {"index.html": """
        <a href="https://github.com/o/r">repo</a> <a href="http://127.0.0.1:8000/">dev</a>
        <link rel="canonical" href="https://example.org/proj/">
        <link rel="stylesheet" href="https://cdn.example.com/x.css">
        <link rel="preconnect" href="https://fonts.gstatic.com">
        <script src="//cdn.example.com/x.js"></script>
        <img srcset="a.png 1x, https://img.example.com/b.png 2x" alt="b">
        <style>@import url("https://fonts.googleapis.com/css?family=Roboto");</style>
        <p style="background: url(https://img.example.com/bg.png)">x</p>
    """})
    page = site / "index.html"
    hosts = external_links(page, site, BASE)
    assert set(hosts) == {"github.com", "127.0.0.1", "cdn.example.com",
                          "fonts.gstatic.com", "img.example.com"}, hosts
    remote = remote_resources(page, site, BASE)
    assert len(remote) == 6, remote
    assert not any("github.com" in r or "127.0.0.1" in r for r in remote), remote


def test_helper_reads_css_urls_and_imports(tmp_path):
    site = make_site(tmp_path, {
        "assets/fonts/ok.woff2": "",
        "assets/s.css": """
            @font-face { src: url("fonts/ok.woff2") format("woff2"); }
            @font-face { src: url(fonts/missing.woff2); }
            .a { background: url("data:image/svg+xml;charset=utf-8,<svg xmlns='http://www.w3.org/2000/svg'/>"); }
            .b { background: url('https://img.example.com/x.png'); }
            @import "https://fonts.googleapis.com/css2?family=Roboto";
        """,
    })
    problems = css_problems(site / "assets/s.css", site)
    assert sorted(problems) == sorted([
        "remote: https://img.example.com/x.png",
        "remote: https://fonts.googleapis.com/css2?family=Roboto",
        "missing: fonts/missing.woff2",
    ]), problems
