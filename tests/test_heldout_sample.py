"""The corpus splits (corpus.py --split) and the held-out sampler (benchmarks/heldout_sample.py), on a tiny fake
corpus directory: no network, no real corpus."""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

import pytest

from _support import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import corpus  # noqa: E402
import heldout_sample  # noqa: E402

DEV_COMMIT, HELD_COMMIT, FRESH_COMMIT, FRESH2_COMMIT = "1" * 40, "2" * 40, "3" * 40, "4" * 40


@pytest.fixture
def fake_corpus(tmp_path, monkeypatch):
    """One package, torch, one dev repository, two held-out ones (one left incomplete), a fresh one and a
    second fresh one under tmp_path."""
    monkeypatch.setattr(corpus, "PACKAGES", {"somepkg": "1.0"})
    monkeypatch.setattr(corpus, "GIT_REPOS", {"dev/repo": DEV_COMMIT})
    monkeypatch.setattr(corpus, "HELD_OUT_REPOS", {"held/repo": HELD_COMMIT, "held/unbuilt": HELD_COMMIT})
    monkeypatch.setattr(corpus, "FRESH_REPOS", {"fresh/repo": FRESH_COMMIT})
    monkeypatch.setattr(corpus, "FRESH2_REPOS", {"fresh2/repo": FRESH2_COMMIT})
    for name, version in corpus.corpus_entries("all"):
        path = corpus.entry_dir(tmp_path, name, version)
        path.mkdir()
        if name != "held/unbuilt":
            (path / corpus.MARKER).write_text("built\n")
    return tmp_path


def test_each_split_names_its_own_members(fake_corpus, capsys):
    dev = {"somepkg-1.0", f"torch-{corpus.TORCH_VERSION}", "dev+repo-111111111111"}
    assert set(corpus.present(fake_corpus)) == dev  # dev is the default
    assert set(corpus.present(fake_corpus, "dev")) == dev
    assert set(corpus.present(fake_corpus, "held-out")) == {"held+repo-222222222222"}
    assert set(corpus.present(fake_corpus, "fresh")) == {"fresh+repo-333333333333"}
    assert set(corpus.present(fake_corpus, "fresh2")) == {"fresh2+repo-444444444444"}
    assert set(corpus.present(fake_corpus, "all")) == dev | {"held+repo-222222222222", "fresh+repo-333333333333",
                                                             "fresh2+repo-444444444444"}
    assert corpus.split_entry("held+repo-222222222222") == ("held/repo", "222222222222")
    assert corpus.repo_commit("held/repo") == HELD_COMMIT and corpus.repo_commit("somepkg") is None
    assert corpus.repo_commit("fresh/repo") == FRESH_COMMIT and corpus.repo_commit("fresh2/repo") == FRESH2_COMMIT
    with pytest.raises(ValueError):
        corpus.corpus_entries("test")
    assert corpus.main(["--dest", str(fake_corpus), "--list", "--split", "held-out"]) == 0
    listed = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    assert listed == {"held+repo-222222222222": str(fake_corpus / "held+repo-222222222222"),
                      "held+unbuilt-222222222222": "(missing)"}


def _findings(counts):
    out = []
    for code, n in counts.items():
        for i in range(n):
            out.append({"member": f"m{i % 3}", "path": f"f{i}.py", "line": i + 1, "col": 1, "code": code,
                        "message": "m", "selections": ["default", "ALL"]})
    return out


def test_the_sample_is_fixed_by_its_seed_and_per_rule():
    findings = _findings({"TCL101": 45, "TCL104": 7})
    first = heldout_sample.draw(findings, 20, seed=1)
    assert {code: len(rows) for code, rows in first.items()} == {"TCL101": 20, "TCL104": 7}
    shuffled = findings[:]
    random.Random(0).shuffle(shuffled)
    assert heldout_sample.draw(shuffled, 20, seed=1) == first  # the input order does not matter
    # a rule's sample does not move when another rule's findings change
    only_101 = [f for f in findings if f["code"] == "TCL101"]
    assert heldout_sample.draw(only_101, 20, seed=1)["TCL101"] == first["TCL101"]
    assert heldout_sample.draw(findings, 20, seed=2)["TCL101"] != first["TCL101"]
    assert len(heldout_sample.draw(findings, 5, seed=1)["TCL104"]) == 5
    assert all(f in findings for f in first["TCL101"])


def test_a_sampled_item_carries_its_context(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "a.py").write_text("import torch\n\nclass A:\n    def f(self, t):\n        x = 1\n"
                                         "        return torch.tensor(t)\n\ny = 2\n")
    item = heldout_sample.Sources(tmp_path).item({"member": "m", "path": "a.py", "line": 6, "code": "TCL101"}, 2, 1)
    assert item["lines"] == [[4, "    def f(self, t):"], [5, "        x = 1"], [6, "        return torch.tensor(t)"],
                             [7, ""]]
    assert item["enclosing"] == [[3, "class A:"], [4, "    def f(self, t):"]]
    assert item["code"] == "TCL101"


def test_draw_then_score_on_a_fake_split(fake_corpus, tmp_path):
    member = fake_corpus / "held+repo-222222222222"
    shutil.copy(FIXTURES / "TCL101" / "comment_in_call.py", member / "a.py")
    out = tmp_path / "out"
    assert heldout_sample.main(["draw", "--dest", str(fake_corpus), "--out", str(out), "--per-rule", "2"]) == 0
    drawn = json.loads((out / "findings.json").read_text())
    assert drawn["members"] == ["held+repo-222222222222"] and drawn["per_rule"] == 2
    expected = [int(line.split(":")[0]) for line in
                (FIXTURES / "TCL101" / "comment_in_call.expected").read_text().splitlines() if "TCL101" in line]
    lines = sorted(f["line"] for f in drawn["findings"] if f["code"] == "TCL101")
    assert lines == expected
    assert all(f["selections"] == ["default", "ALL"] for f in drawn["findings"])
    sample = json.loads((out / "TCL101.json").read_text())
    assert sample["findings"] == len(expected) and len(sample["items"]) == 2
    assert all(item["lines"] and item["message"] for item in sample["items"])

    labels = tmp_path / "labels.tsv"
    labels.write_text("member\tpath\tline\tcode\tlabel\tnote\n"
                      f"held/repo\ta.py\t{expected[0]}\tTCL101\tTP\ta copy of a tensor\n"
                      "held+repo-222222222222\ta.py\t1\tTCL101\tFP\tno finding here\n")
    table = heldout_sample.score(heldout_sample.read_labels(labels), drawn["findings"],
                                 heldout_sample.draw(drawn["findings"], 2, drawn["seed"]))
    row = table["default"]["TCL101"]
    assert (row["findings"], row["sample_size"], row["labelled"], row["tp"], row["fp"]) == (len(expected), 2, 1, 1, 0)
    assert row["precision"] == 1.0
    assert heldout_sample.main(["score", "--out", str(out), "--labels", str(labels)]) == 0
