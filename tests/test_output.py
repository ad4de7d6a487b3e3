"""Machine output: SARIF valid against the OASIS schema, GitHub annotations escaped, one severity."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from _support import ROOT
from torchcopy_lint.codes import ALL_CODES, META_CODES, RULE_CODES, severity
from torchcopy_lint.diagnostics import Diagnostic
from torchcopy_lint.output.formats import escape_data, escape_property, format_github
from torchcopy_lint.output.ruledocs import code_name

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the test extra")

SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
HAZARD = b"import torch\nx = torch.randn(3, requires_grad=True)\ny = x.clone().detach()\nz = torch.tensor(x)\n"


def _validator():
    # Every format jsonschema knows (draft-04's list lacks "uri-reference", which the SARIF schema uses).
    # Without a URI checker installed the "uri" formats would pass unchecked: make sure they are checked.
    checker = jsonschema.FormatChecker()
    assert {"uri", "uri-reference"} <= set(checker.checkers), "install rfc3986-validator (test extra)"
    return jsonschema.Draft4Validator(SCHEMA, format_checker=checker)


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_bytes(HAZARD)
    (tmp_path / "pkg" / "with space é.py").write_bytes(HAZARD)
    (tmp_path / "pkg" / "bad.py").write_bytes(b"import torch\ndef f(:\n    x.clone().detach()\n")
    (tmp_path / "pkg" / "gone.py").symlink_to(tmp_path / "nowhere.py")  # TCL002
    return tmp_path


def _sarif(cli, *args, cwd):
    result = cli("--isolated", "--no-cache", "--output-format", "sarif", *args, cwd=cwd)
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_sarif_validates_against_the_schema(tmp_path, cli, where):
    tree = _tree(tmp_path)
    log = _sarif(cli, "pkg" if where == "relative" else str(tree / "pkg"), cwd=tree)
    errors = sorted(_validator().iter_errors(log), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert {r["ruleId"] for r in results} == {"TCL001", "TCL002", "TCL101", "TCL103"}
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == severity(result["ruleId"])
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    if where == "relative":
        assert "pkg/with%20space%20%C3%A9.py" in uris
        assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
                   for r in results)
    else:
        assert (tree / "pkg" / "with space é.py").as_uri() in uris


def test_sarif_rules_come_from_the_code_table(tmp_path, cli):
    (tmp_path / "a.py").write_bytes(HAZARD)
    rules = _sarif(cli, "a.py", cwd=tmp_path)["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(ALL_CODES)
    assert set(META_CODES) <= {r["id"] for r in rules} and set(RULE_CODES) <= {r["id"] for r in rules}
    for rule in rules:
        assert "helpUri" not in rule  # the docs are embedded instead of linked relatively
        assert rule["help"]["markdown"].startswith(f"# {rule['name']}") or rule["id"] in META_CODES
        assert rule["defaultConfiguration"]["level"] == severity(rule["id"])


def test_schema_check_can_fail(tmp_path, cli):
    """The validation above is not vacuous: the old output's relative helpUri is rejected."""
    (tmp_path / "a.py").write_bytes(HAZARD)
    log = _sarif(cli, "a.py", cwd=tmp_path)
    broken = copy.deepcopy(log)
    broken["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = "docs/rules/TCL101.md"
    assert any(e.validator == "format" for e in _validator().iter_errors(broken))
    broken = copy.deepcopy(log)
    broken["runs"][0]["results"][0]["ruleIndex"] = -2
    assert list(_validator().iter_errors(broken))


def test_github_escaping():
    assert escape_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    d = Diagnostic("dir:x/a,b%.py", 3, 5, 3, 9, "TCL103", "50% slower:\nsee docs, really")
    assert format_github([d]) == (
        "::warning title=torchcopy-lint (TCL103),file=dir%3Ax/a%2Cb%25.py,line=3,col=5,endLine=3,endColumn=9"
        "::TCL103 50%25 slower:%0Asee docs, really\n")
    error = Diagnostic("a.py", 1, 1, 1, 1, "TCL001", "syntax error: x")
    assert format_github([error]).startswith("::error title=torchcopy-lint (TCL001),file=a.py,")


def test_one_severity_in_every_format(tmp_path, cli):
    tree = _tree(tmp_path)
    args = ("--isolated", "--no-cache", "pkg")
    as_json = json.loads(cli(*args, "--output-format", "json", cwd=tree).stdout)
    github = cli(*args, "--output-format", "github", cwd=tree).stdout.decode().splitlines()
    sarif = json.loads(cli(*args, "--output-format", "sarif", cwd=tree).stdout)["runs"][0]["results"]
    assert len(as_json) == len(github) == len(sarif) > 3
    for d, line, result in zip(as_json, github, sarif):
        assert d["code"] == result["ruleId"]
        assert d["severity"] == result["level"] == line[2:].split(" ", 1)[0] == severity(d["code"])
    assert {d["severity"] for d in as_json} == {"error", "warning"}


def test_every_meta_code_has_a_name():
    from torchcopy_lint.codes import META_NAMES

    assert set(META_CODES) <= set(META_NAMES)


def test_rule_names_from_docs_match_the_rules():
    from torchcopy_lint.rules import ALL_RULES

    assert [code_name(r.code) for r in ALL_RULES] == [r.name for r in ALL_RULES]
