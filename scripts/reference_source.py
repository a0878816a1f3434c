"""Shared by the scripts/reference-*.py writers: reading a reference's source at a revision, and cutting one
top-level definition out of it. No reference code lives here or in the writers; they read it from a checkout or
a bare mirror at run time."""
import ast
import os
import subprocess


def read_source(repo, rev, rel):
    """The file `rel` of `repo`: from the work tree when it is a checkout, else `git show REV:rel`."""
    path = os.path.join(repo, rel)
    if os.path.isfile(path):
        with open(path) as f:
            return f.read()
    return subprocess.run(["git", "-C", repo, "show", f"{rev}:{rel}"], check=True, capture_output=True,
                          text=True).stdout


def commit_of(repo, rev):
    """The full hash REV names in `repo`, or "unknown"."""
    out = subprocess.run(["git", "-C", repo, "rev-parse", rev], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def top_level(tree, source, name, kind=ast.FunctionDef):
    """The source of the top-level definition `name` (a function, or a class with kind=ast.ClassDef)."""
    for node in tree.body:
        if isinstance(node, kind) and node.name == name:
            return ast.get_source_segment(source, node)
    raise SystemExit(f"{name} not found")
