#!/usr/bin/env python3
"""Checks the manual's links: README.md and docs/**/*.md.

    python3 scripts/checklinks.py [ROOT]

ROOT is the repository (default: the one this script is in). Every inline
link and image, `[text](target)` and `![alt](target)`, every reference
definition, `[label]: target`, and every reference use, `[text][label]`, is
checked outside fenced code blocks and code spans:

- a relative target must name a file or directory that exists (relative to
  the page; a target starting with `/` is relative to ROOT, as on GitHub);
- a `#anchor` (alone, or after a Markdown file) must be one of that page's
  headings under GitHub's rules: the heading's text, lower case, without
  punctuation but `-` and `_`, each space a `-`; a repeated heading gets
  `-1`, `-2`, ...; `<a name=...>` and `id=...` anchors count too;
- a reference use must have its definition in the same page.

Links with a scheme (http, https, mailto, ...) are not followed: no network.
Prints one line per broken link, `file:line: target — reason`, and exits 1;
otherwise prints "N links checked" and exits 0. Standard library only.
"""

import os
import re
import sys
import unicodedata
import urllib.parse

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
REFDEF = re.compile(r"^ {0,3}\[((?:[^\]\\]|\\.)+)\]:[ \t]*(<[^>]*>|\S+)")
HTML_ANCHOR = re.compile(r"<a\s[^>]*?\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HTML_ID = re.compile(r"<[a-z][^>]*?\bid\s*=\s*[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
REFUSE = re.compile(r"\[((?:[^\[\]\\]|\\.)*)\]\[((?:[^\[\]\\]|\\.)*)\]")


def strip_code_spans(line):
    """The line with every code span blanked (same length), so that what a
    span shows is neither a link nor markup."""
    out = []
    i = 0
    while i < len(line):
        if line[i] == "`":
            j = i
            while j < len(line) and line[j] == "`":
                j += 1
            ticks = line[i:j]
            end = line.find(ticks, j)
            # A closing run must be exactly as long as the opening one.
            while end != -1 and (end + len(ticks) < len(line) and line[end + len(ticks)] == "`"):
                k = end
                while k < len(line) and line[k] == "`":
                    k += 1
                end = line.find(ticks, k)
            if end == -1:
                out.append(line[i:j])
                i = j
                continue
            out.append(" " * (end + len(ticks) - i))
            i = end + len(ticks)
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def prose_lines(text):
    """(line number, line) for every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            yield number, line
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and line.strip() == m.group(1):
            fence = None


def heading_text(raw):
    """What a heading shows: markup removed, link texts kept."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)   # [text](url) -> text
    text = re.sub(r"!?\[([^\]]*)\]\[[^\]]*\]", r"\1", text)  # [text][ref] -> text
    text = re.sub(r"<[^>]+>", "", text)                      # inline HTML
    text = text.replace("`", "")
    text = re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text)   # emphasis, not snake_case
    return text.strip()


def slug(text):
    """GitHub's anchor of a heading's text."""
    kept = []
    for ch in text.lower():
        if ch in "-_ ":
            kept.append(ch)
        elif unicodedata.category(ch)[0] in "LMN" or unicodedata.category(ch) == "Pc":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors_of(text):
    """Every anchor a Markdown page defines."""
    anchors = set()
    seen = {}
    previous = None
    last = 0
    for number, line in prose_lines(text):
        if number != last + 1:
            previous = None   # a fenced block in between
        last = number
        text_line = None
        m = ATX.match(line)
        if m:
            text_line = m.group(2) or ""
        elif previous is not None and previous.strip() and SETEXT.match(line) \
                and not ATX.match(previous) and not previous.lstrip().startswith(("|", "-", "*", ">")):
            text_line = previous.strip()
        if text_line is not None:
            base = slug(heading_text(text_line))
            count = seen.get(base, 0)
            anchors.add(base if count == 0 else f"{base}-{count}")
            seen[base] = count + 1
        for pattern in (HTML_ANCHOR, HTML_ID):
            anchors.update(a for a in pattern.findall(line))
        previous = line
    return anchors


def inline_targets(line):
    """(target) of every inline link or image on a line: the destination
    after each `](`, with balanced parentheses, without its title."""
    targets = []
    start = 0
    while True:
        i = line.find("](", start)
        if i == -1:
            return targets
        j = i + 2
        while j < len(line) and line[j] in " \t":
            j += 1
        if j < len(line) and line[j] == "<":
            end = line.find(">", j)
            if end == -1:
                start = i + 2
                continue
            targets.append(line[j + 1:end])
            start = end + 1
            continue
        depth = 0
        k = j
        while k < len(line):
            ch = line[k]
            if ch == "\\":
                k += 2
                continue
            if ch == "(":
                depth += 1
            elif ch == ")":
                if depth == 0:
                    break
                depth -= 1
            elif ch in " \t" and depth == 0:
                break
            k += 1
        if k < len(line):
            targets.append(line[j:k])
        start = max(k, i + 2)


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    pages = []
    if os.path.isfile(os.path.join(root, "README.md")):
        pages.append(os.path.join(root, "README.md"))
    for directory, dirs, files in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        pages.extend(os.path.join(directory, f) for f in sorted(files) if f.endswith(".md"))
    if not pages:
        print(f"checklinks: no README.md or docs/*.md under {root}", file=sys.stderr)
        return 2

    anchor_cache = {}

    def anchors(path):
        if path not in anchor_cache:
            with open(path, encoding="utf-8") as f:
                anchor_cache[path] = anchors_of(f.read())
        return anchor_cache[path]

    broken = []
    checked = 0
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        name = os.path.relpath(page, root)
        lines = list(prose_lines(text))
        definitions = set()
        links = []   # (line number, target)
        uses = []    # (line number, label)
        for number, line in lines:
            m = REFDEF.match(line)
            if m:
                definitions.add(" ".join(m.group(1).lower().split()))
                target = m.group(2)
                links.append((number, target[1:-1] if target.startswith("<") else target))
                continue
            prose = strip_code_spans(line)
            links.extend((number, t) for t in inline_targets(prose))
            for text_part, label in REFUSE.findall(prose):
                label = label or text_part
                if label.strip():
                    uses.append((number, " ".join(label.lower().split())))
        for number, label in uses:
            checked += 1
            if label not in definitions:
                broken.append((name, number, f"[{label}] — no definition of this reference in {name}"))
        for number, target in links:
            checked += 1
            if SCHEME.match(target) or target.startswith("//"):
                continue   # http(s), mailto and other schemes: not followed
            path, _, anchor = target.partition("#")
            path = urllib.parse.unquote(path.split("?", 1)[0])
            if path:
                base = root if path.startswith("/") else os.path.dirname(page)
                resolved = os.path.normpath(os.path.join(base, path.lstrip("/")))
                if not os.path.exists(resolved):
                    broken.append((name, number, f"{target} — "
                                   f"{os.path.relpath(resolved, root)} does not exist"))
                    continue
            else:
                resolved = page
            if anchor and os.path.isfile(resolved) and resolved.endswith(".md"):
                if urllib.parse.unquote(anchor).lower() not in anchors(resolved):
                    broken.append((name, number, f"{target} — no heading "
                                   f"#{anchor} in {os.path.relpath(resolved, root)}"))
    for name, number, message in sorted(broken):
        print(f"{name}:{number}: {message}")
    if broken:
        print(f"{len(broken)} of {checked} links broken", file=sys.stderr)
        return 1
    print(f"{checked} links checked")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
