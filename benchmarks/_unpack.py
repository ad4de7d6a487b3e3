"""How a corpus member's ``.py`` files come out of a wheel or a git mirror (corpus.py)."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Optional, Tuple


def unpack_wheel_py(wheel: Path, target: Path, top_filter: Optional[str] = None) -> int:
    count = 0
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = info.filename
            if not name.endswith(".py") or ".dist-info/" in name or ".data/" in name.split("/", 1)[0] + "/":
                continue
            if top_filter and not name.startswith(top_filter + "/"):
                continue
            parts = safe_parts(name)
            if parts is None:
                continue
            out = target.joinpath(*parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
            count += 1
    return count


def safe_parts(name: str) -> Optional[Tuple[str, ...]]:
    parts = Path(name).parts
    if name.startswith("/") or any(p in ("..", "") for p in parts):
        return None
    return parts


def unpack_git_py(gitdir: Path, commit: str, target: Path) -> Tuple[int, int]:
    """Write the ``.py`` blobs of ``commit`` under ``target``: (written, absent from the mirror).

    Blobs are read one by one with ``git cat-file --batch`` rather than ``git archive``: a snapshot
    may lack its large non-Python blobs, and ``git archive`` fails on the first absent one.
    """
    git = ["git", "--git-dir", str(gitdir)]
    listing = subprocess.run(git + ["ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    blobs = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, sha = meta.split()
        path = name.decode("utf-8", "surrogateescape")
        if kind == b"blob" and mode != b"120000" and path.endswith(".py") and safe_parts(path):
            blobs.append((sha, path))
    count = missing = 0
    proc = subprocess.Popen(git + ["cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    for sha, path in blobs:
        proc.stdin.write(sha + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            missing += 1
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after each object
        out = target.joinpath(*Path(path).parts)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        count += 1
    proc.stdin.close()
    proc.wait()
    return count, missing
