"""The flags a ruff user reaches for, with ruff's semantics where both tools have them."""

from __future__ import annotations

import json
from pathlib import Path

from _support import ROOT
from torchcopy_lint.codes import DEFAULT_CODES

HAZARD = b"import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\n"
TWO = HAZARD + b"z = torch.tensor(x)\nw = x.clone().detach()\n"


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def lines(result) -> list:
    return result.stdout.decode().splitlines()


def test_statistics(tmp_path, cli):
    write(tmp_path, "a.py", TWO)
    result = cli("--isolated", "--no-cache", "--statistics", str(tmp_path))
    assert result.returncode == 1
    assert lines(result) == ["2\tTCL103\t[*] clone-then-detach", "1\tTCL101\t[*] tensor-copy-construct"]
    data = json.loads(cli("--isolated", "--no-cache", "--statistics", "--output-format", "json",
                          str(tmp_path)).stdout)
    assert data[0] == {"code": "TCL103", "name": "clone-then-detach", "count": 2, "fixable": True}


def test_show_fixes(tmp_path, cli):
    path = write(tmp_path, "a.py", TWO)
    result = cli("--isolated", "--no-cache", "--fix", "--show-fixes", str(path))
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert f"Fixed 3 errors:\n- {path}:\n    1 \u00d7 TCL101 (tensor-copy-construct)\n" \
           "    2 \u00d7 TCL103 (clone-then-detach)\n" in err
    again = cli("--isolated", "--no-cache", "--fix", "--show-fixes", str(path))
    assert "No errors fixed." in again.stderr.decode()


def test_extend_select_exclude_and_extend_exclude(tmp_path, cli):
    write(tmp_path, "src/a.py", TWO)
    write(tmp_path, "gen/g.py", HAZARD)
    write(tmp_path, "build/b.py", HAZARD)
    files = lambda r: sorted({line.split(":")[0] for line in lines(r)})  # noqa: E731
    base = ("--isolated", "--no-cache", "-q")
    assert files(cli(*base, ".", cwd=tmp_path)) == ["./gen/g.py", "./src/a.py"]  # build/ by default
    assert files(cli(*base, "--extend-exclude", "gen", ".", cwd=tmp_path)) == ["./src/a.py"]
    # --exclude replaces the defaults (so build/ comes back), like ruff's.
    assert files(cli(*base, "--exclude", "gen", ".", cwd=tmp_path)) == ["./build/b.py", "./src/a.py"]
    assert files(cli(*base, "--exclude", "gen,src", ".", cwd=tmp_path)) == ["./build/b.py"]
    selected = cli(*base, "--select", "TCL101", "--extend-select", "TCL103", "src", cwd=tmp_path)
    assert sorted({line.split()[1] for line in lines(selected)}) == ["TCL101", "TCL103"]


def test_force_exclude(tmp_path, cli):
    write(tmp_path, "pyproject.toml", b'[tool.torchcopy-lint]\nextend-exclude = ["generated", "legacy/*.py"]\n')
    gen = write(tmp_path, "generated/deep/g.py", HAZARD)
    legacy = write(tmp_path, "legacy/old.py", HAZARD)
    kept = write(tmp_path, "src/a.py", HAZARD)
    names = [str(p.relative_to(tmp_path)) for p in (gen, legacy, kept)]
    # Given by name, as pre-commit does: linted without --force-exclude, like ruff.
    plain = cli("--no-cache", "-q", *names, cwd=tmp_path)
    assert len(lines(plain)) == 3
    forced = cli("--no-cache", "-q", "--force-exclude", *names, cwd=tmp_path)
    assert [line.split(":")[0] for line in lines(forced)] == ["src/a.py"]
    # The config key does the same; --no-force-exclude turns it off again.
    write(tmp_path, "pyproject.toml", b'[tool.torchcopy-lint]\nextend-exclude = ["generated"]\nforce-exclude = true\n')
    assert [line.split(":")[0] for line in lines(cli("--no-cache", "-q", *names, cwd=tmp_path))] == [
        "legacy/old.py", "src/a.py"]
    assert len(lines(cli("--no-cache", "-q", "--no-force-exclude", *names, cwd=tmp_path))) == 3
    # Only excluded files given: nothing to lint, a warning, exit 0.
    only = cli("--no-cache", names[0], cwd=tmp_path)
    assert only.returncode == 0 and b"No Python files found" in only.stderr
    # stdin with an excluded --stdin-filename: nothing reported; --fix echoes the input unchanged.
    piped = cli("--no-cache", "--stdin-filename", names[0], "-", cwd=tmp_path, input_bytes=HAZARD)
    assert piped.returncode == 0 and piped.stdout == b""
    fixed = cli("--no-cache", "--fix", "--stdin-filename", names[0], "-", cwd=tmp_path, input_bytes=HAZARD)
    assert fixed.stdout == HAZARD


def test_output_file(tmp_path, cli):
    path = write(tmp_path, "a.py", HAZARD)
    out = tmp_path / "reports" / "lint.json"
    result = cli("--isolated", "--no-cache", "--output-format", "json", "--output-file", str(out), str(path))
    assert result.returncode == 1 and result.stdout == b""
    assert [d["code"] for d in json.loads(out.read_text())] == ["TCL103"]
    blocked = cli("--isolated", "--no-cache", "--output-file", str(path / "x.txt"), str(path))
    assert blocked.returncode == 2 and b"cannot write" in blocked.stderr and b"Traceback" not in blocked.stderr


def test_add_noqa(tmp_path, cli):
    source = ("# -*- coding: latin-1 -*-\r\nimport torch\r\nname = '\xe9'\r\nx = torch.randn(3, requires_grad=True)\r\n"
              "a = x.clone().detach()\r\n"
              "b = x.clone().detach()  # noqa: E501\r\n"
              "c = x.clone().detach()  # keep this comment\r\n"
              "d = torch.tensor(x); e = x.clone().detach()\r\n"
              "f = g(x.clone().detach(), '''\r\ntext''')\r\n"
              "h = x.clone().detach()  # noqa\r\n").encode("latin-1")
    path = write(tmp_path, "a.py", source)
    result = cli("--isolated", "--no-cache", "--add-noqa", str(path))
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert "Added 4 noqa directives." in err
    assert f"{path}:9: the line ends inside a string" in err
    after = path.read_bytes()
    assert after.split(b"\r\n")[4:9] == [
        b"a = x.clone().detach()  # noqa: TCL103",
        b"b = x.clone().detach()  # noqa: E501, TCL103",
        b"c = x.clone().detach()  # keep this comment  # noqa: TCL103",
        b"d = torch.tensor(x); e = x.clone().detach()  # noqa: TCL101, TCL103",
        b"f = g(x.clone().detach(), '''",
    ]
    assert after.count(b"\r\n") == source.count(b"\r\n") and b"\n" not in after.replace(b"\r\n", b"")
    assert b"name = '\xe9'" in after  # still latin-1
    remaining = cli("--isolated", "--no-cache", "-q", str(path))
    assert [line.split(":")[1] for line in lines(remaining)] == ["9"]  # only the one it could not annotate
    idempotent = cli("--isolated", "--no-cache", "--add-noqa", str(path))
    assert "Added 0 noqa directives." in idempotent.stderr.decode() and path.read_bytes() == after


def test_add_noqa_conflicts_with_fix(tmp_path, cli):
    path = write(tmp_path, "a.py", HAZARD)
    result = cli("--isolated", "--add-noqa", "--fix", str(path))
    assert result.returncode == 2 and b"--add-noqa cannot be combined" in result.stderr
    assert path.read_bytes() == HAZARD


def test_show_settings(tmp_path, cli):
    write(tmp_path, "pyproject.toml", b'[tool.torchcopy-lint]\nignore = ["TCL104"]\n'
          b'per-file-ignores = { "tests/*" = ["TCL103"] }\n')
    write(tmp_path, "tests/t.py", HAZARD)
    result = cli("--show-settings", "--extend-select", "TCL104", "tests/t.py", cwd=tmp_path)
    assert result.returncode == 0
    rows = dict(line.split(" = ", 1) for line in lines(result)[1:])
    assert lines(result)[0] == "Resolved settings for: tests/t.py"
    assert json.loads(rows["config-file"]) == str(tmp_path / "pyproject.toml")
    assert json.loads(rows["enabled"]) == list(DEFAULT_CODES)
    assert json.loads(rows["enabled-for-path"]) == [code for code in DEFAULT_CODES if code != "TCL103"]
    assert json.loads(rows["selection-layers"]) == [
        {"select": None, "extend-select": [], "ignore": ["TCL104"]},
        {"select": None, "extend-select": ["TCL104"], "ignore": []}]


def test_path_without_python_files_warns(tmp_path, cli):
    write(tmp_path, "docs/readme.txt", b"hello\n")
    result = cli("--isolated", "--no-cache", str(tmp_path / "docs"))
    assert result.returncode == 0
    assert b"warning: No Python files found" in result.stderr and b"All checks passed" not in result.stderr


def test_directory_named_like_a_subcommand(tmp_path, cli):
    write(tmp_path, "rule/a.py", HAZARD)
    write(tmp_path, "check/b.py", HAZARD)
    for args in (("check", "rule/"), ("rule/",), ("check", "rule"), ("check", "check")):
        result = cli("--isolated", "--no-cache", "-q", *args, cwd=tmp_path)
        assert result.returncode == 1 and b"TCL103" in result.stdout, args
    # The bare name is the command (as in ruff), not the directory.
    explained = cli("rule", cwd=tmp_path)
    assert explained.returncode == 0 and b"clone-then-detach" in explained.stdout


def test_readme_select_ignore_example_does_something(tmp_path, cli):
    """The README's selection example must change the result, not be a no-op."""
    readme = (ROOT / "README.md").read_text()
    example = next(line.split("torchcopy-lint", 1)[1].split("PATHS")[0].split()
                   for line in readme.splitlines() if line.startswith("    torchcopy-lint") and "--ignore" in line)
    assert len(example) == 4, example  # two selection flags, each of which must matter
    path = write(tmp_path, "a.py", TWO + b"m = torch.nn.Linear(3, 3)\nout = m(x)\nfor p in m.parameters():\n"
                 b"    p.data.add_(1)\nout.sum().backward()\n")  # between a forward and its backward: TCL104
    codes = lambda r: sorted({line.split()[1] for line in lines(r)})  # noqa: E731
    everything = codes(cli("--isolated", "--no-cache", "-q", str(path)))
    selected = codes(cli("--isolated", "--no-cache", "-q", *example, str(path)))
    assert everything == ["TCL101", "TCL103", "TCL104"]
    assert selected and selected != everything
    for flag, value in zip(example[::2], example[1::2]):
        alone = codes(cli("--isolated", "--no-cache", "-q", flag, value, str(path)))
        assert alone != selected, f"{flag} {value} alone gives the same result: the other flag does nothing"


def test_noqa_line_is_the_add_noqa_edit_of_one_line():
    """The editor's "disable for this line" (server) and ``--add-noqa`` share add_noqa.noqa_line."""
    from torchcopy_lint.fixing.add_noqa import noqa_line

    text = 's = "# noqa: E1"; y = t.clone().detach()\nz = t.clone().detach()  # noqa:E501\nw = 1  # noqa\nq = "a\\\n"\n'
    assert noqa_line(text, 1, ["TCL103"]) == 's = "# noqa: E1"; y = t.clone().detach()  # noqa: TCL103'  # not inside the string
    assert noqa_line(text, 2, ["TCL103"]) == "z = t.clone().detach()  # noqa: E501, TCL103"
    assert noqa_line(text, 3, ["TCL103"]) is None  # a bare noqa already silences every code
    assert noqa_line(text, 4, ["TCL103"]) is None  # ends inside a string continued by a backslash
    assert noqa_line("x = (\n", 1, ["TCL103"]) is None  # does not tokenize
