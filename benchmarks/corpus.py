"""Build the real-world precision corpus: pinned PyTorch-using packages, `.py` files only.

    python benchmarks/corpus.py                 # fetch + unpack everything missing
    python benchmarks/corpus.py --list          # print <name>-<version> and its directory
    python benchmarks/corpus.py --dest DIR      # another cache directory

Each package is fetched with ``pip download --no-deps --only-binary=:all:`` (pure-Python
wheels; pip's own index configuration is used) and its ``.py`` files are unpacked into
``<dest>/<name>-<version>/`` (default dest: ``$TORCHCOPY_CORPUS`` or
``~/.cache/torchcopy-lint/corpus``). torch is never downloaded (a CUDA wheel is
gigabytes): its Python sources are copied from the installed torch when its version
matches ``TORCH_VERSION``, else from a local ``torch-<version>*.whl`` found in pip's
``find-links`` directories or given with ``--torch-wheel``.

A directory is complete once it holds a ``.complete`` marker; rerunning skips it. Only the
standard library is used, and torch is never imported.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

PACKAGES: Dict[str, str] = {
    "timm": "1.0.31",
    "transformers": "5.23.0",
    "pytorch-lightning": "2.6.6",
    "diffusers": "0.42.1",
    "accelerate": "1.15.0",
    "torchmetrics": "1.9.0",
}
"""PyPI name -> pinned version (pure-Python wheels)."""

TORCH_VERSION = "2.13.0"
MARKER = ".complete"


def default_dest() -> Path:
    env = os.environ.get("TORCHCOPY_CORPUS")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "torchcopy-lint" / "corpus"


def corpus_entries() -> List[Tuple[str, str]]:
    """(name, version) of every corpus member, torch last."""
    return sorted(PACKAGES.items()) + [("torch", TORCH_VERSION)]


def entry_dir(dest: Path, name: str, version: str) -> Path:
    return dest / f"{name}-{version}"


def present(dest: Optional[Path] = None) -> Dict[str, Path]:
    """The complete corpus directories under ``dest``: ``{"<name>-<version>": path}``."""
    dest = dest or default_dest()
    out = {}
    for name, version in corpus_entries():
        path = entry_dir(dest, name, version)
        if (path / MARKER).exists():
            out[f"{name}-{version}"] = path
    return out


def _unpack_wheel_py(wheel: Path, target: Path, top_filter: Optional[str] = None) -> int:
    count = 0
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = info.filename
            if not name.endswith(".py") or ".dist-info/" in name or ".data/" in name.split("/", 1)[0] + "/":
                continue
            if top_filter and not name.startswith(top_filter + "/"):
                continue
            parts = Path(name).parts
            if any(p in ("..", "") for p in parts) or name.startswith("/"):
                continue
            out = target.joinpath(*parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
            count += 1
    return count


def fetch_package(name: str, version: str, dest: Path, pip: List[str]) -> Path:
    target = entry_dir(dest, name, version)
    if (target / MARKER).exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = pip + ["download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
                     "-q", f"{name}=={version}", "-d", tmp]
        subprocess.run(cmd, check=True)
        wheels = glob.glob(os.path.join(tmp, "*.whl"))
        if len(wheels) != 1:
            raise SystemExit(f"{name}=={version}: expected one wheel, got {wheels}")
        target.mkdir(parents=True)
        count = _unpack_wheel_py(Path(wheels[0]), target)
    (target / MARKER).write_text(f"{name}=={version} {count} files\n")
    return target


def _installed_torch() -> Optional[Tuple[Path, str]]:
    spec = importlib.util.find_spec("torch")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(list(spec.submodule_search_locations)[0])
    text = (root / "version.py").read_text() if (root / "version.py").exists() else ""
    m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)['\"]", text)
    return (root, m.group(1)) if m else None


def _find_links() -> Iterable[Path]:
    for var in ("PIP_FIND_LINKS",):
        for part in os.environ.get(var, "").split():
            yield Path(part.replace("file://", ""))
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        if "find-links" in line:
            for part in line.split("=", 1)[1].strip().strip("'\"").split():
                yield Path(part.replace("file://", ""))


def fetch_torch(dest: Path, wheel: Optional[Path]) -> Path:
    target = entry_dir(dest, "torch", TORCH_VERSION)
    if (target / MARKER).exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    installed = _installed_torch()
    if wheel is None and installed and installed[1].split("+")[0] == TORCH_VERSION:
        root = installed[0]
        count = 0
        for src in root.rglob("*.py"):
            out = target / "torch" / src.relative_to(root)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, out)
            count += 1
        origin = f"installed {root}"
    else:
        if wheel is None:
            for d in _find_links():
                hits = sorted(d.glob(f"torch-{TORCH_VERSION}*.whl")) if d.is_dir() else []
                if hits:
                    wheel = hits[0]
                    break
        if wheel is None:
            raise SystemExit(f"torch {TORCH_VERSION}: not installed and no local wheel (use --torch-wheel); "
                             "not downloading a CUDA wheel")
        target.mkdir(parents=True)
        count = _unpack_wheel_py(wheel, target, top_filter="torch")
        origin = str(wheel)
    (target / MARKER).write_text(f"torch=={TORCH_VERSION} {count} files from {origin}\n")
    return target


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=None)
    ap.add_argument("--list", action="store_true", help="print the corpus entries and exit")
    ap.add_argument("--torch-wheel", type=Path, default=None)
    ap.add_argument("--only", nargs="*", default=None, help="only these names (e.g. timm torch)")
    args = ap.parse_args(argv)
    dest = (args.dest or default_dest()).expanduser()
    if args.list:
        have = present(dest)
        for name, version in corpus_entries():
            key = f"{name}-{version}"
            print(f"{key}\t{have.get(key, '(missing)')}")
        return 0
    dest.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip"]
    for name, version in corpus_entries():
        if args.only and name not in args.only:
            continue
        path = fetch_torch(dest, args.torch_wheel) if name == "torch" else fetch_package(name, version, dest, pip)
        print(f"{name}-{version}\t{path}\t{(path / MARKER).read_text().strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
