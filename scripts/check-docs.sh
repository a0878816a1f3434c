#!/usr/bin/env bash
# Runs the examples of the documentation, checks the outputs they quote, and checks their internal links.
#
#   scripts/check-docs.sh              # uses build/pipeproof (scripts/test.sh builds it)
#   scripts/check-docs.sh DIR          # uses DIR/pipeproof
#   scripts/check-docs.sh --self-test  # checks the checker on tests/data/check-docs/ (needs no pipeproof)
#
# Pages: README.md, CHANGELOG.md, docs/*.md, bench/NOTES.md, proofs/README.md, proofs/method.md and
# proofs/catalogue/*.md (the catalogue's `recheck` blocks are run by ctest -R catalogue, not here).
#
# What runs, by the fence's info string:
#   sh, bash   a script: runs as `bash -euo pipefail` and must exit 0; its output is not checked. A command
#              meant to fail is written so the block still succeeds: `pipeproof verify bad.txt || test $? -eq 1`.
#   console    a transcript whose output is checked. A line starting with `$ ` is a command (a line ending in
#              `\` continues it on the next line); the lines after it, up to the next command, are its
#              expected output: stdout and stderr together, as the command wrote them to one file.
#              - A line that is exactly `...` matches any number of lines, none included.
#              - `...` inside a line matches any part of that line (`OK: 3 ranks, ...`).
#              - A last line `[exit N]` says the command exits with status N; without it, it must exit 0.
#              - Trailing blanks (and CR) of every line, and blank lines at the end, are ignored.
#              The commands of a block run one after another in one bash (no -e, with pipefail), so a
#              variable set by one is seen by the next. Files are written in `sh` blocks (a heredoc in a
#              transcript would be read as expected output).
#   anything else (text, json, none, ...) is never run: outputs too long to check, and commands that are too
#   slow (over ~10 s) or need what CI lacks. `<!-- check-docs: skip -->` on the line before a sh or console
#   fence keeps that block from running (README's two set-up commands: CI runs them anyway).
#
# How: each page gets a fresh temporary directory holding symbolic links bench/, proofs/ and tests/ to the
# repository's (so an example can name a committed file as from the repository's root); its blocks run there
# in order (a file an earlier block wrote is there for a later one), with DIR (default <repo>/build) first on
# PATH, so examples are written `pipeproof ...`. A block has 120 s. On a failure the script prints the block's
# file:line, the command and a diff of expected (-) and actual (+) output, lines matched by `...` shown
# folded; it skips the rest of that page (later blocks may need what the failed one wrote) and exits 1 at the
# end.
#
# Links: every relative link [text](path#anchor) outside code must name an existing file, and an anchor must
# be a heading of that file (GitHub's slugs).
#
# Self-test: tests/data/check-docs/pass.md must pass; every fail-*.md page there must fail, and the report must
# contain each text the page names in a `<!-- self-test expects: TEXT -->` line. ctest runs it as
# "check-docs: self-test".
#
# Runtime of all runnable blocks: 55 blocks in about 21 s (19 s of CPU) on a 2-core x86-64 VM, Release build
# (2026-12-04, load average below 1); the budget is 3 minutes.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
command -v python3 >/dev/null || { echo "check-docs: python3 is needed to read the Markdown files" >&2; exit 2; }
mode=docs
bindir=""
if [ "${1:-}" = "--self-test" ]; then
  mode=self-test
else
  bindir="${1:-$repo/build}"
  if [ ! -x "$bindir/pipeproof" ]; then
    echo "check-docs: no executable pipeproof in $bindir (build it first: scripts/test.sh)" >&2
    exit 2
  fi
  bindir="$(cd "$bindir" && pwd)"
  export PATH="$bindir:$PATH"
fi

exec python3 - "$repo" "$mode" <<'PY'
import glob, os, re, shutil, signal, subprocess, sys, tempfile, time

repo, mode = sys.argv[1], sys.argv[2]
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`]*?)\s*$")
SKIP = "<!-- check-docs: skip -->"
RUN = ("sh", "bash", "console")
TIMEOUT = 120
LINKED = ("bench", "proofs", "tests")  # symbolic links in each page's directory


def parse(path):
    """Yields (kind, start_line, info, lines) for code blocks and ('text', line, None, [line]) outside them."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            yield ("text", i + 1, None, [lines[i]])
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3)
        start = i + 1
        body = []
        i += 1
        while i < len(lines):
            c = re.match(r"^\s*(`{3,}|~{3,})\s*$", lines[i])
            if c and c.group(1)[0] == fence[0] and len(c.group(1)) >= len(fence):
                break
            line = lines[i]
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            i += 1
        else:
            raise SyntaxError(f"{os.path.relpath(path, repo)}:{start}: unclosed code fence")
        i += 1
        yield ("code", start, info, body)


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # GitHub keeps letters, digits, '_', '-' and spaces
    return text.replace(" ", "-")


anchor_cache = {}


def anchors(path):
    if path not in anchor_cache:
        seen, out = {}, set()
        for kind, _, _, body in parse(path):
            if kind != "text":
                continue
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", body[0])
            if not m:
                continue
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
        anchor_cache[path] = out
    return anchor_cache[path]


def read_page(path, root):
    """The page's runnable blocks [(line, info, body)] and its link problems."""
    rel = os.path.relpath(path, root)
    blocks, problems, previous = [], [], ""
    for kind, line, info, body in parse(path):
        if kind == "code":
            if info in RUN and previous.strip() != SKIP:
                blocks.append((line, info, body))
            previous = ""
            continue
        text = body[0]
        if text.strip():
            previous = text
        for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", text)):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                problems.append(f"{rel}:{line}: link to {target}: no such file")
                continue
            if anchor and (not dest.endswith(".md") or anchor not in anchors(dest)):
                problems.append(f"{rel}:{line}: link to {target}: no heading with that anchor in "
                                f"{os.path.relpath(dest, root)}")
    return blocks, problems


# --- console transcripts -------------------------------------------------------------------------------------

def transcript(start, body):
    """[(line, command, expected lines, expected exit)] of a console block; raises SyntaxError."""
    steps, i = [], 0
    while i < len(body):
        if not body[i].startswith("$ "):
            if body[i].strip():
                raise SyntaxError(f"line {start + 1 + i}: output before the first `$ ` command")
            i += 1
            continue
        line, command = start + 1 + i, body[i][2:]
        while command.endswith("\\") and i + 1 < len(body):
            i += 1
            command += "\n" + body[i]
        i += 1
        expected = []
        while i < len(body) and not body[i].startswith("$ "):
            expected.append(body[i].rstrip())
            i += 1
        while expected and not expected[-1]:
            expected.pop()
        code = 0
        if expected and re.fullmatch(r"\[exit \d+\]", expected[-1]):
            code = int(expected.pop()[6:-1])
        steps.append((line, command, expected, code))
    return steps


def line_pattern(expected):
    return re.compile(".*".join(re.escape(part) for part in expected.split("...")))


def align(expected, actual):
    """Least-cost alignment of expected lines (with wildcards) and actual lines: [(op, text)], op in
    ' ' (matched), '-' (expected, not printed), '+' (printed, not expected), '~' (matched by a `...` line)."""
    n, m = len(expected), len(actual)
    pats = [None if e == "..." else line_pattern(e) for e in expected]
    INF = float("inf")
    cost = [[INF] * (m + 1) for _ in range(n + 1)]
    cost[n][m] = 0
    for i in range(n, -1, -1):
        for j in range(m, -1, -1):
            if i == n and j == m:
                continue
            best = INF
            if i < n and pats[i] is None:
                best = min(best, cost[i + 1][j])
                if j < m:
                    best = min(best, cost[i][j + 1])
            if i < n and j < m and pats[i] is not None and pats[i].fullmatch(actual[j]):
                best = min(best, cost[i + 1][j + 1])
            if i < n and pats[i] is not None:
                best = min(best, cost[i + 1][j] + 1)
            if j < m:
                best = min(best, cost[i][j + 1] + 1)
            cost[i][j] = best
    out, i, j = [], 0, 0
    while i < n or j < m:
        c = cost[i][j]
        if i < n and pats[i] is None:
            if cost[i + 1][j] == c:
                i += 1
                continue
            if j < m and cost[i][j + 1] == c:
                out.append(("~", actual[j]))
                j += 1
                continue
        if i < n and j < m and pats[i] is not None and pats[i].fullmatch(actual[j]) and cost[i + 1][j + 1] == c:
            out.append((" ", actual[j]))
            i, j = i + 1, j + 1
        elif i < n and pats[i] is not None and cost[i + 1][j] + 1 == c:
            out.append(("-", expected[i]))
            i += 1
        else:
            out.append(("+", actual[j]))
            j += 1
    return out


def render(diff):
    """The alignment as diff lines; a run of lines matched by `...` is folded into one."""
    lines, k = [], 0
    while k < len(diff):
        op, text = diff[k]
        if op == "~":
            run = k
            while k < len(diff) and diff[k][0] == "~":
                k += 1
            lines.append(f"  ...  ({k - run} line{'s' if k - run != 1 else ''} matched by `...`)")
            continue
        lines.append(f"{op} {text}")
        k += 1
    return lines


# --- running a page ------------------------------------------------------------------------------------------

def run_script(script, cwd, log_dir):
    """Runs a bash script file; returns (exit status, seconds, timed out)."""
    t0 = time.monotonic()
    with open(os.path.join(log_dir, "out"), "wb") as out:
        p = subprocess.Popen(["bash", script], cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc, late = p.wait(timeout=TIMEOUT), False
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            rc, late = p.wait(), True
    return rc, time.monotonic() - t0, late


def read_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def check_pages(pages, root, work, say):
    """Checks pages; returns the number of blocks run and whether all passed."""
    failed, count, all_blocks = False, 0, []
    problems = []
    for path in pages:
        blocks, bad = read_page(path, root)
        problems += bad
        all_blocks.append((path, blocks))
    if problems:
        say("broken links:")
        for p in problems:
            say(f"  {p}")
        failed = True
    for path, blocks in all_blocks:
        if not blocks:
            continue
        rel = os.path.relpath(path, root)
        say(f"== {rel}")
        cwd = os.path.join(work, "run", rel.replace("/", "_"))
        os.makedirs(cwd)
        for name in LINKED:
            if os.path.isdir(os.path.join(root, name)):
                os.symlink(os.path.join(root, name), os.path.join(cwd, name))
        log_dir = os.path.join(work, "log")
        os.makedirs(log_dir, exist_ok=True)
        for k, (line, info, body) in enumerate(blocks):
            where = f"{rel}:{line}"
            ok, report = run_block(where, info, body, line, cwd, log_dir)
            count += 1
            say(f"   {where}: {report[0]}")
            for r in report[1:]:
                say(r)
            if not ok:
                failed = True
                for skipped_line, _, _ in blocks[k + 1:]:
                    say(f"   {rel}:{skipped_line}: skipped (an earlier block of this page failed)")
                break
    return count, not failed


def run_block(where, info, body, line, cwd, log_dir):
    """Runs one block; returns (ok, [status line, detail lines...])."""
    script = os.path.join(log_dir, "block.sh")
    if info in ("sh", "bash"):
        with open(script, "w", encoding="utf-8") as f:
            f.write("set -euo pipefail\n" + "\n".join(body) + "\n")
        rc, secs, late = run_script(script, cwd, log_dir)
        if rc == 0:
            return True, [f"ok ({secs:.1f} s)"]
        why = f" (ran over {TIMEOUT} s)" if late else ""
        return False, [f"FAILED with exit code {rc}{why}", f"---- the block ({where}) ----"]  \
            + [f"  | {b}" for b in body] + ["---- its output ----"] \
            + [f"  > {o}" for o in read_lines(os.path.join(log_dir, "out"))] + ["----"]
    try:
        steps = transcript(line, body)
    except SyntaxError as e:
        return False, [f"FAILED: not a transcript: {e}"]
    lines = ["set -o pipefail"]
    for n, (_, command, _, _) in enumerate(steps):
        lines.append(f"{{ {command}\n}} >'{log_dir}/out.{n}' 2>&1 </dev/null; echo $? >'{log_dir}/rc.{n}'")
    with open(script, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    for n in range(len(steps)):
        for ext in ("out", "rc"):
            if os.path.exists(f"{log_dir}/{ext}.{n}"):
                os.remove(f"{log_dir}/{ext}.{n}")
    rc, secs, late = run_script(script, cwd, log_dir)
    for n, (cmd_line, command, expected, code) in enumerate(steps):
        shown = command.replace("\n", "\n     ")
        if not os.path.exists(f"{log_dir}/rc.{n}"):
            why = f"ran over {TIMEOUT} s" if late else f"the transcript's shell exited {rc} before it"
            return False, [f"FAILED at line {cmd_line}: {why}", f"  $ {shown}"] \
                + [f"  > {o}" for o in read_lines(os.path.join(log_dir, "out"))]
        actual = read_lines(f"{log_dir}/out.{n}")
        status = int(open(f"{log_dir}/rc.{n}").read().strip())
        diff = align(expected, actual)
        differs = any(op in "+-" for op, _ in diff)
        exits = []  # no `[exit N]` line means 0
        if status != code:
            exits = ([("-", f"[exit {code}]")] if code else []) + ([("+", f"[exit {status}]")] if status else [])
        if differs or status != code:
            what = []
            if differs:
                what.append("the output differs")
            if status != code:
                what.append(f"exit status {status}, expected {code}")
            return False, [f"FAILED at line {cmd_line}: {' and '.join(what)}", f"  $ {shown}",
                           "  --- expected (-), actual (+):"] + [f"  {d}" for d in render(diff + exits)]
    return True, [f"ok, {len(steps)} output{'s' if len(steps) != 1 else ''} as quoted ({secs:.1f} s)"]


def doc_pages():
    pages = [os.path.join(repo, "README.md"), os.path.join(repo, "CHANGELOG.md")]
    pages += sorted(glob.glob(os.path.join(repo, "docs", "*.md")))
    pages += [os.path.join(repo, "bench", "NOTES.md"), os.path.join(repo, "proofs", "README.md"),
              os.path.join(repo, "proofs", "method.md")]
    pages += sorted(glob.glob(os.path.join(repo, "proofs", "catalogue", "*.md")))
    return [p for p in pages if os.path.exists(p)]


def self_test(work):
    data = os.path.join(repo, "tests", "data", "check-docs")
    pages = [os.path.join(data, "pass.md")] + sorted(glob.glob(os.path.join(data, "fail-*.md")))
    wrong = []
    for path in pages:
        name = os.path.basename(path)
        report = []
        sub = os.path.join(work, name)
        os.makedirs(sub)
        _, ok = check_pages([path], data, sub, report.append)
        text = "\n".join(report)
        should_pass = name == "pass.md"
        wants = re.findall(r"<!-- self-test expects: (.*?) -->", open(path, encoding="utf-8").read())
        missing = [w for w in wants if w not in text]
        if ok != should_pass or missing:
            wrong.append(name)
            print(f"self-test: {name}: {'passed' if ok else 'failed'}, should have "
                  f"{'passed' if should_pass else 'failed'}" if ok != should_pass else
                  f"self-test: {name}: the report lacks {missing}")
            print("\n".join("  | " + r for r in report))
        else:
            print(f"self-test: {name}: {'passes' if ok else 'fails'} as it should")
    if len(pages) < 2:
        wrong.append("tests/data/check-docs (no failing page)")
    if wrong:
        print("check-docs self-test: FAILED:", ", ".join(wrong))
        return 1
    print(f"check-docs self-test: {len(pages)} pages, each as expected")
    return 0


work = tempfile.mkdtemp(prefix="check-docs.")
try:
    if mode == "self-test":
        sys.exit(self_test(work))
    t0 = time.monotonic()
    try:
        count, ok = check_pages(doc_pages(), repo, work, lambda s: print(s, flush=True))
    except SyntaxError as e:
        print(f"check-docs: {e}")
        sys.exit(2)
    print(f"ran {count} block(s) in {time.monotonic() - t0:.1f} s")
    if not ok:
        print("check-docs: FAILED")
        sys.exit(1)
    print("check-docs: every example ran, every quoted output matches and every link resolves")
finally:
    shutil.rmtree(work, ignore_errors=True)
PY
