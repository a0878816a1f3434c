#!/usr/bin/env bash
# Runs every shell example of README.md and docs/*.md, and checks their internal links, so the docs stay true.
#
#   scripts/check-docs.sh            # uses build/pipeproof (scripts/test.sh builds it)
#   scripts/check-docs.sh DIR        # uses DIR/pipeproof
#
# What runs: every fenced code block whose info string is exactly `sh` or `bash`, unless the line before its
# fence is `<!-- check-docs: skip -->` (README's two set-up commands: CI runs them anyway). Blocks fenced as
# ```text, ```console, ```json or with no info string are never run: they hold long outputs and examples that
# are too slow (over ~10 s) or need what CI lacks.
#
# How: each file gets a fresh temporary directory; its blocks run there in order, each as `bash -euo
# pipefail` (a file an earlier block wrote is there for a later one; shell variables are not carried over),
# with DIR (default <repo>/build) first on PATH, so examples are written `pipeproof ...`. A command that is
# meant to exit non-zero is written so the block still succeeds: `pipeproof verify bad.txt || test $? -eq 1`.
# A block has 120 s. On failure the script prints the block, its output and the file:line where the block
# starts, skips the rest of that file (later blocks may need what the failed one wrote) and exits 1 at the end.
#
# Links: every relative link [text](path#anchor) outside code in README.md and docs/*.md must name an existing
# file, and an anchor must be a heading of that file (GitHub's slugs).
#
# Runtime of all runnable blocks: 34 blocks in about 16 s on the 2-core development machine (2026-12-04,
# Release build, load average 2 from another build running beside it); the budget is 3 minutes.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
bindir="${1:-$repo/build}"
if [ ! -x "$bindir/pipeproof" ]; then
  echo "check-docs: no executable pipeproof in $bindir (build it first: scripts/test.sh)" >&2
  exit 2
fi
bindir="$(cd "$bindir" && pwd)"
export PATH="$bindir:$PATH"
command -v python3 >/dev/null || { echo "check-docs: python3 is needed to read the Markdown files" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/check-docs.XXXXXX")"
trap 'rm -rf "$work"' EXIT

files=("$repo/README.md")
for f in "$repo"/docs/*.md; do [ -e "$f" ] && files+=("$f"); done

# Split the files into blocks ($work/blocks/NNNN.sh, listed in $work/manifest as file<TAB>line<TAB>path) and
# check the links (problems in $work/links).
python3 - "$repo" "$work" "${files[@]}" <<'PY'
import os, re, sys

repo, work, files = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(os.path.join(work, "blocks"), exist_ok=True)
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`]*?)\s*$")
SKIP = "<!-- check-docs: skip -->"


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
            print(f"{os.path.relpath(path, repo)}:{start}: unclosed code fence", file=sys.stderr)
            sys.exit(2)
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


manifest, problems, count = [], [], 0
for path in files:
    rel = os.path.relpath(path, repo)
    previous = ""
    for kind, line, info, body in parse(path):
        if kind == "code":
            if info in ("sh", "bash") and previous.strip() != SKIP:
                count += 1
                block = os.path.join(work, "blocks", f"{count:04d}.sh")
                with open(block, "w", encoding="utf-8") as f:
                    f.write("\n".join(body) + "\n")
                manifest.append(f"{rel}\t{line}\t{block}")
            previous = ""
            continue
        text = body[0]
        if text.strip():
            previous = text
        # links outside inline code
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
                                f"{os.path.relpath(dest, repo)}")

with open(os.path.join(work, "manifest"), "w", encoding="utf-8") as f:
    f.write("".join(m + "\n" for m in manifest))
with open(os.path.join(work, "links"), "w", encoding="utf-8") as f:
    f.write("".join(p + "\n" for p in problems))
PY

failed=0
if [ -s "$work/links" ]; then
  echo "broken links:"
  sed 's/^/  /' "$work/links"
  failed=1
fi

timeout_cmd=()
command -v timeout >/dev/null && timeout_cmd=(timeout 120)
us() { local t="${EPOCHREALTIME:-$(date +%s.%N)}"; t="${t/,/.}"; echo $(( ${t%%.*} * 1000000 + 10#$(printf '%-6.6s' "${t#*.}" | tr ' ' 0) )); }
tenths() { local d=$(( ($2 - $1 + 50000) / 100000 )); echo "$((d / 10)).$((d % 10))"; }
start_all=$(us)
current=""
skip_file=""
blocks=0
while IFS=$'\t' read -r file line block; do
  if [ "$file" != "$current" ]; then
    current="$file"
    skip_file=""
    dir="$work/run/${file//\//_}"
    mkdir -p "$dir"
    echo "== $file"
  fi
  [ -n "$skip_file" ] && { echo "   $file:$line: skipped (an earlier block of this file failed)"; continue; }
  blocks=$((blocks + 1))
  t0=$(us)
  set +e
  (cd "$dir" && "${timeout_cmd[@]}" bash -euo pipefail "$block") >"$work/out" 2>&1 </dev/null
  rc=$?
  set -e
  t=$(tenths "$t0" "$(us)")
  if [ "$rc" -eq 0 ]; then
    echo "   $file:$line: ok ($t s)"
  else
    failed=1
    skip_file=1
    why=""
    [ "$rc" -eq 124 ] && [ ${#timeout_cmd[@]} -gt 0 ] && why=" (ran over 120 s)"
    echo "   $file:$line: FAILED with exit code $rc$why"
    echo "---- the block ($file:$line) ----"
    sed 's/^/  | /' "$block"
    echo "---- its output ----"
    sed 's/^/  > /' "$work/out"
    echo "----"
  fi
done <"$work/manifest"
echo "ran $blocks block(s) in $(tenths "$start_all" "$(us)") s"
if [ "$failed" -ne 0 ]; then
  echo "check-docs: FAILED"
  exit 1
fi
echo "check-docs: every example ran and every link resolves"
