#!/usr/bin/env python3
"""README.md and docs/ say how things work; figures of a day live in docs/measurements.md.

Fails, naming file and line, where README.md or a page of docs/ holds
  - a load average, a commit-hash-like word (7 to 40 hex digits, with a digit and a letter) in
    prose (outside fenced code blocks), or a date (YYYY-MM-DD) in prose: everywhere but
    docs/measurements.md, which records the runs with their commit, machine and command;
  - an issue number ("issue 40", "issues 39 and 41", "#40") or "the then default"-style history:
    everywhere, measurements.md included.
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
if problems:
    print(f"check_docs_text: {problems} problems in README.md and docs/")
    sys.exit(1)
print(f"check_docs_text: {len(files)} files, none holds a load average, a commit, a date or an issue number out of place")
