#!/usr/bin/env python3
"""Runs README.md's kvbe-cli examples and checks the output they show.

An example is a fenced block right under a line `<!-- example -->`. Its lines that start with
`$ ` are commands (a trailing backslash continues one onto the next line), run with bash in the
source folder with the built binaries first on PATH; the lines after a command, up to the next,
are the output it shows. Each shown line must appear in the real output (stdout and stderr), in
the order shown, as a whole line (trailing blanks aside); a line `…` stands for lines left out,
and a line ending in ` …` matches any line that starts with what comes before it. A block with a
`$ kvbe-cli` command that is not marked as an example fails too, so that no example goes
unchecked. Other pages given after BIN_DIR (docs/cli.md) have their marked examples run too; an
unmarked block is allowed there (one that writes a file, say).
Usage: check_readme_examples.py SOURCE_DIR BIN_DIR [PAGE...]
"""
import os
import subprocess
import sys

root, bindir = sys.argv[1], sys.argv[2]
pages = sys.argv[3:] or ["README.md"]
examples, problems = [], []


def collect(page):
    """The marked examples of a page, as (page, first line number, block lines)."""
    lines = open(os.path.join(root, page), encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        marked = i > 0 and lines[i - 1].strip() == "<!-- example -->"
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = lines[i + 1:j]
        if marked:
            examples.append((page, i + 2, body))
        elif page == "README.md" and any(l.startswith("$ kvbe-cli") for l in body):
            problems.append(f"{page}:{i + 2}: a kvbe-cli block not marked <!-- example -->")
        i = j + 1


for page in pages:
    collect(page)


def split(page, body, first):
    """[(line number, command, shown output lines)]"""
    out, k = [], 0
    while k < len(body):
        line = body[k]
        if not line.startswith("$ "):
            problems.append(f"{page}:{first + k}: output before any `$ ` command")
            k += 1
            continue
        no, cmd = first + k, line[2:]
        while cmd.endswith("\\") and k + 1 < len(body):
            k += 1
            cmd = cmd[:-1] + " " + body[k].strip()
        k += 1
        shown = []
        while k < len(body) and not body[k].startswith("$ "):
            shown.append(body[k])
            k += 1
        out.append((no, cmd, shown))
    return out


def matches(shown, real):
    s = shown.rstrip()
    if s.endswith(" …"):
        return real.rstrip().startswith(s[:-2])
    return real.rstrip() == s


env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
           QT_QPA_PLATFORM="offscreen")
count = 0
for page, first, body in examples:
    for no, cmd, shown in split(page, body, first):
        count += 1
        run = subprocess.run(["bash", "-c", cmd], cwd=root, env=env, capture_output=True,
                             text=True, timeout=300)
        real = (run.stdout + run.stderr).splitlines()
        if run.returncode != 0:
            problems.append(f"{page}:{no}: `{cmd}` exited {run.returncode}: "
                            + " / ".join(real[-3:]))
            continue
        pos = 0
        for n, want in enumerate(shown):
            if want.strip() in ("…", "...") or not want.strip():
                continue
            at = next((p for p in range(pos, len(real)) if matches(want, real[p])), None)
            if at is None:
                problems.append(f"{page}:{no + n + 1}: `{cmd}` does not print (in this order) "
                                f"the line: {want.rstrip()}")
                continue
            pos = at + 1
for p in problems:
    print(p)
if problems:
    print(f"check_readme_examples: {len(problems)} problems in {count} commands of {', '.join(pages)}")
    sys.exit(1)
print(f"check_readme_examples: {count} commands of {', '.join(pages)} print what they show")
