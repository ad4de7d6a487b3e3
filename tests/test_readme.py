"""The README works as written: its pre-commit snippet runs, its rev exists."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from _support import ROOT

HAZARD = b"import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\n"


def _snippet() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### pre-commit", 1)[1]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


def _git(*args, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)


def _checkout_is_git() -> bool:
    return shutil.which("git") is not None and _git("rev-parse", "HEAD", cwd=ROOT).returncode == 0


def test_snippet_rev_is_a_commit_with_the_hooks():
    rev = re.search(r"^\s*rev:\s*(\S+)", _snippet(), re.M).group(1)
    assert re.fullmatch(r"[0-9a-f]{40}", rev), f"rev must be a full commit sha, not {rev!r}"
    if not _checkout_is_git():
        pytest.skip("not a git checkout: cannot check that the rev exists")
    if _git("cat-file", "-e", f"{rev}^{{commit}}", cwd=ROOT).returncode != 0:
        shallow = _git("rev-parse", "--is-shallow-repository", cwd=ROOT).stdout.strip() == "true"
        if shallow:
            pytest.skip(f"shallow clone: {rev} is not in the fetched history")
        pytest.fail(f"README's pre-commit rev {rev} is not a commit of this repository")
    hooks = _git("show", f"{rev}:.pre-commit-hooks.yaml", cwd=ROOT)
    assert hooks.returncode == 0 and "id: torchcopy-lint" in hooks.stdout


def test_snippet_runs_with_pre_commit(tmp_path):
    """pre-commit installs the hook from a clone of this checkout (at HEAD) and runs it on a repository
    with a hazard and an excluded file."""
    pytest.importorskip("pre_commit", reason="pre-commit is in the test extra")
    if not _checkout_is_git():
        pytest.skip("not a git checkout: pre-commit needs a repository to clone")
    head = _git("rev-parse", "HEAD", cwd=ROOT).stdout.strip()
    config = re.sub(r"(?m)^(\s*- repo:\s*)\S+", lambda m: m.group(1) + f"file://{ROOT}", _snippet())
    config = re.sub(r"(?m)^(\s*rev:\s*)\S+", lambda m: m.group(1) + head, config)
    repo = tmp_path / "project"
    (repo / "generated").mkdir(parents=True)
    (repo / ".pre-commit-config.yaml").write_text(config)
    (repo / "pyproject.toml").write_text('[tool.torchcopy-lint]\nextend-exclude = ["generated"]\n')
    (repo / "a.py").write_bytes(HAZARD)
    (repo / "generated" / "g.py").write_bytes(HAZARD)
    (repo / "clean.py").write_bytes(b"x = 1\n")
    assert _git("init", "-q", cwd=repo).returncode == 0
    assert _git("add", ".", cwd=repo).returncode == 0
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "home"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    result = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
                            cwd=repo, capture_output=True, text=True, env=env, timeout=300)
    out = result.stdout + result.stderr
    if "An unexpected error has occurred" in out and ("pip" in out or "network" in out.lower()):
        pytest.skip(f"pre-commit could not install the hook here: {out[-500:]}")
    assert result.returncode == 1, out
    assert "a.py:3:5: TCL103" in out
    assert "generated/g.py" not in out  # --force-exclude in the hook keeps the exclusion
