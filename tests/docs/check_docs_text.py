#!/usr/bin/env python3
"""README.md and docs/ say how things work; figures of a day live in docs/measurements.md.

Fails, naming file and line, where README.md or a page of docs/ holds
  - a load average, a commit-hash-like word (7 to 40 hex digits, with a digit and a letter) in
    prose (outside fenced code blocks), or a date (YYYY-MM-DD) in prose: everywhere but
    docs/measurements.md, which records the runs with their commit, machine and command;
  - an issue number ("issue 40", "issues 39 and 41", "#40") or "the then default"-style history:
    everywhere, measurements.md included;
and fails where the code cites a page of docs/ or a heading (`docs/x.md, "Heading"`) that is not
there, or a relative link of README.md or docs/ points at no file.
Usage: check_docs_text.py [SOURCE_DIR]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
RECORD = os.path.join("docs", "measurements.md")

LOAD = re.compile(r"load average", re.I)
HASH = re.compile(r"(?<![\w./-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/-])")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
ISSUE = re.compile(r"\bissues? (?:#\s*)?\d+|(?:^|[\s(\[])#\d+\b|\bPR #?\d+", re.I)
THEN = re.compile(r"\bthe then\b|\bthen default\b|\bdefault (?:before|until) ", re.I)

files = [os.path.join(root, "README.md")]
for dirpath, _, names in os.walk(os.path.join(root, "docs")):
    files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".md")]

problems = 0
for path in files:
    rel = os.path.relpath(path, root)
    record = rel == RECORD
    fenced = False
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            found = []
            m = ISSUE.search(line)
            if m:
                found.append(f"an issue number ({m.group(0).strip()!r})")
            m = THEN.search(line)
            if m:
                found.append(f"history ({m.group(0)!r}): say how it works now; what changed goes in CHANGELOG.md")
            if not record:
                if LOAD.search(line):
                    found.append("a load average: a figure of a day goes in docs/measurements.md")
                if not fenced:
                    m = HASH.search(line)
                    if m:
                        found.append(f"a commit hash ({m.group(0)!r}): runs and their commits go in docs/measurements.md")
                    m = DATE.search(line)
                    if m:
                        found.append(f"a date ({m.group(0)!r}): dated runs go in docs/measurements.md")
            for what in found:
                print(f"{rel}:{no}: {what}")
                problems += 1
# Every page the code cites exists, with the heading it names: `docs/x.md, "Heading"`.
CITE = re.compile(r'docs/([a-z_-]+\.md),? \(?"([^"]+)"')
headings = {}
for dirpath, dirs, names in os.walk(root):
    rel = os.path.relpath(dirpath, root)
    if (rel.split(os.sep)[0] in (".git", "third_party") or rel.startswith("build") or "fixtures" in rel
            or rel == os.path.join("tests", "docs")):
        dirs[:] = []
        continue
    for n in names:
        if not n.endswith((".cpp", ".h", ".cu", ".txt", ".cmake", ".py", ".sh")) and os.sep + "scripts" not in os.sep + rel:
            continue
        path = os.path.join(dirpath, n)
        try:
            text = open(path, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        for no, line in enumerate(text.splitlines(), 1):
            for page, heading in CITE.findall(line):
                doc = os.path.join(root, "docs", page)
                where = f"{os.path.relpath(path, root)}:{no}"
                if not os.path.exists(doc):
                    if page not in ("trace_replay_tester.md",):  # kv-cache-tester's page, not ours
                        print(f"{where}: cites docs/{page}, which does not exist")
                        problems += 1
                    continue
                if doc not in headings:
                    headings[doc] = [l.lstrip("#").strip() for l in open(doc, encoding="utf-8") if l.startswith("#")]
                if not any(h.startswith(heading) or heading in h for h in headings[doc]):
                    print(f"{where}: cites docs/{page}, \"{heading}\", a heading it does not have")
                    problems += 1

# Every relative link of README.md and docs/ points at a file that exists.
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
for path in files:
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        for target in LINK.findall(line):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not os.path.exists(os.path.join(os.path.dirname(path), target)):
                print(f"{os.path.relpath(path, root)}:{no}: links to {target}, which does not exist")
                problems += 1

if problems:
    print(f"check_docs_text: {problems} problems in README.md and docs/")
    sys.exit(1)
print(f"check_docs_text: {len(files)} files, none holds a load average, a commit, a date or an issue "
      "number out of place; every page and heading the code cites exists, every link resolves")
