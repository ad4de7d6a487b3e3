"""Build the real-world precision corpus: pinned PyTorch-using packages and repositories, `.py` files only.

    python benchmarks/corpus.py                 # fetch + unpack everything missing
    python benchmarks/corpus.py --list          # print <name>-<version> and its directory
    python benchmarks/corpus.py --dest DIR      # another cache directory
    python benchmarks/corpus.py --mirror-dir D  # where the git mirrors are (default /work/.mirror)
    python benchmarks/corpus.py --split all     # the dev split (default), held-out, or both

Each package is fetched with ``pip download --no-deps --only-binary=:all:`` (pure-Python
wheels; pip's own index configuration is used) and its ``.py`` files are unpacked into
``<dest>/<name>-<version>/`` (default dest: ``$TORCHCOPY_CORPUS`` or
``~/.cache/torchcopy-lint/corpus``). torch is never downloaded (a CUDA wheel is
gigabytes): its Python sources are copied from the installed torch when its version
matches ``TORCH_VERSION``, else from a local ``torch-<version>*.whl`` found in pip's
``find-links`` directories or given with ``--torch-wheel``.

Repositories (``GIT_REPOS``, training scripts rather than libraries) are pinned to a commit and
read from a local bare mirror ``<mirror-dir>/<owner>+<name>/repo`` (this tool never clones):
the commit's ``.py`` blobs are unpacked, into
``<dest>/<owner>+<name>-<commit[:12]>/``. A missing mirror or commit is reported and skipped.
``HELD_OUT_REPOS`` (the held-out split, ``--split held-out``), ``FRESH_REPOS`` (``--split fresh``) and
``FRESH2_REPOS`` (``--split fresh2``) are read the same way.

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
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _unpack import unpack_git_py, unpack_wheel_py  # noqa: E402

PACKAGES: Dict[str, str] = {
    "timm": "1.0.31",
    "transformers": "5.23.0",
    "pytorch-lightning": "2.6.6",
    "diffusers": "0.42.1",
    "accelerate": "1.15.0",
    "torchmetrics": "1.9.0",
    "ultralytics": "8.4.190",
    "pytorch-ignite": "0.5.5",
    "skorch": "1.4.0",
}
"""PyPI name -> pinned version (pure-Python wheels)."""

GIT_REPOS: Dict[str, str] = {
    "anon767/RandomWiredGNN": "361d7396f9856334c2c60ef1461942d2493de7fd",
    "BatsResearch/labelmodels": "04e8890f78721a8f2686e75a5e0ef959690bacf3",
    "BJohnBraddock/BigGAN-PyTorch": "4d2dd217d333314482ef4f6a209f074fe156068c",
    "CCIIPLab/GCE-GNN": "212575302e42d64b8cf0b9ffe1b71b0db398d5be",
    "CompVis/stable-diffusion": "21f890f9da3cfbeaba8e2ac3c425ee9e998d5229",
    "CRIPAC-DIG/SR-GNN": "e21cfa431f74c25ae6e4ae9261deefe11d1cb488",
    "CRIPAC-DIG/TAGNN": "475e0f2c70108224b41532868765dda5c5aa696a",
    "dragen1860/MAML-Pytorch": "98a00d41724c133bd29619a2fb2cc46dd128a368",
    "driptaRC/BCO-PyTorch": "8d4db8f9161d16e3c8f54dbe251dd280c79d9694",
    "eriklindernoren/PyTorch-GAN": "36d3c77e5ff20ebe0aeefd322326a134a279b93e",
    "facebookresearch/deit": "7e160fe43f0252d17191b71cbb5826254114ea5b",
    "facebookresearch/detr": "29901c51d7fe8712168b8d0d64351170bc0f83e0",
    "facebookresearch/dino": "7c446df5b9f45747937fb0d72314eb9f7b66930a",
    "facebookresearch/mae": "efb2a8062c206524e35e47d04501ed4f544c0ae8",
    "florianmahner/object-dimensions": "858a87c79c971a631f99cf88ff58f7e0c3f157c6",
    "GuilhemROLLAND/PyTorch_Tuto": "f137883479149bf6ed98e308cc2ca5ce121afb8a",
    "huggingface/pytorch-image-models": "aa4b5850c1543fa488abf260f18390eda46cf85d",
    "hunkim/PyTorchZeroToAll": "e5a260fac0b4ff1e2ec434fc6f0d962ac97fc289",
    "jacobgil/pytorch-pruning": "eb1b7a6d4222c7d0a884183983b274f1aa06fc7f",
    "jindongwang/transferlearning": "f951df1188858f6eb561b89e37deb93295ff1c82",
    "karpathy/minGPT": "37baab71b9abea1b76ab957409a1cc2fbfba8a26",
    "karpathy/nanoGPT": "3adf61e154c3fe3fca428ad6bc3818b27a3b8291",
    "kuangliu/pytorch-cifar": "49b7aa97b0c12fe0d4054e670403a16b6b834ddd",
    "L1aoXingyu/pytorch-beginner": "a57dd7ea35c9965a41f4963dee62d38884f92a65",
    "learnables/learn2learn": "db5cee3795490071282bbdfa81179ef732349196",
    "Lightning-AI/lit-gpt": "3cf6493cdc7c90c72c5a5bf12d07490cf798327f",
    "liu654042016/PyTorchBase": "885fc8d798113a33d54bd74c9c73b86b1ddea995",
    "lucidrains/denoising-diffusion-pytorch": "faed4db28e724735323fa91c70aa9b28a6e1cbac",
    "lucidrains/ema-pytorch": "72d498dc544bd43f7ebe963cc8533021dde44f88",
    "lucidrains/vit-pytorch": "69d24fe9e3024c0d4b02761123b8583a24ebed1e",
    "NVlabs/stylegan2-ada-pytorch": "d72cc7d041b42ec8e806021a205ed9349f87c6a4",
    "openai/improved-diffusion": "1bc7bbbdc414d83d4abf2ad8cc1446dc36c4e4d5",
    "patrickloeber/pytorchTutorial": "69637721ed9fa2ccf81a1093a928a52bbb591439",
    "peppe-99/Inpainting-PyTorch": "6bb59ff5427346f9fecb3151114be0107c7b3f04",
    "pytorch/examples": "77f55b912142e11fcfdf5b530231fb9c52f181e8",
    "qinhaihong-red/TorchDaily": "553c9cff317d64d910c6d47bee1b7a658aea2a04",
    "samuelyu2002/ImVisible": "a463a0a2b17fec7cd40d35558e43d78a338eb769",
    "sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning": "cc9c7e2f4017938d414178d3781fed8dbe442852",
    "Sheepsody/Batched-Impala-PyTorch": "2de12f14e7c33458a4af742b8cb7bc7416c0c68e",
    "shumaym/iMOACOR-PyTorch": "e386feb6239d6cd52c001a267c48625bdff8c591",
    "sonercand/PyTorchRefresher": "e5a3ec57fb237baec0596e1148af81d6f7210d5b",
    "Spandan-Madan/Pytorch_fine_tuning_Tutorial": "4699392d7287745e4bc79568421b488c50c1e4b8",
    "spro/practical-pytorch": "c520c52e68e945d88fff563dba1c028b6ec0197b",
    "sxdeng-hepyrion/learn_torch": "92d4f8ce3ace83e0536cc496d267b6e937ac2273",
    "tewei/PlayTorch": "a81ce882643b2bcf13d4fc7f69969395716733da",
    "TranquilRock/Pytorch-Adversarial-Object-Detection-Toolkit": "58a0ceb1c9f96da0539ccca08fc864d15366cebd",
    "trisha025/Deep-Learning-with-PyTorch": "f1215a141c07ba0650a1b3239ef967fbe2f02392",
    "ultralytics/yolov3": "97b87b1347d6d927d27227d2225140da38e4d308",
    "ultralytics/yolov5": "5081342f04fb287fc2e5f2b5a4e06752b7937b1c",
    "vdivakar/PyTorch_learnings": "da98f1d9dc4b933024a8fbbfc1b2930f6c571087",
    "WenjieDu/PyPOTS": "95d0ae9c1bad2027c2d822a24b80940e8760be86",
    "WongKinYiu/PyTorch_YOLOv4": "6e88dc21813e614c9848a2767fd0bac13d26fd51",
    "WongKinYiu/yolov7": "a207844b1ce82d204ab36d87d496728d3d2348e7",
    "xiaxin1998/COTREC": "ccf215b97d9033418455ab1e9c167fe9c4ad6206",
    "xiaxin1998/DHCN": "b39ec892f8beabe2923a996bd00ae49169a6ce3a",
    "yunjey/pytorch-tutorial": "0500d3df5a2a8080ccfccbc00aca0eacc21818db",
}
"""GitHub owner/name -> pinned commit (read from a local mirror, see ``fetch_git``)."""

HELD_OUT_REPOS: Dict[str, str] = {
    "allenai/allennlp": "80fb6061e568cb9d6ab5d45b661e86eb61b92c82",
    "catalyst-team/catalyst": "e99f90655d0efcf22559a46e928f0f98c9807ebf",
    "chr5tphr/zennit": "6204e31e1d5d2cb7471d249084712a20c787b360",
    "cornellius-gp/gpytorch": "7c4ec80f0f05cf530348a8a8972d67a11dd26ed2",
    "DLR-RM/stable-baselines3": "e05d2dbe6eda0acd0ef2e316e3e4065677add3eb",
    "huggingface/peft": "5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40",
    "huggingface/trl": "f2cd57710ae345ea6428ae95363267fcf38a3dc8",
    "kornia/kornia": "b4f5a78a13891c7ac4c1cd9695941380273e981d",
    "pyro-ppl/pyro": "ff6ae1c9572591791aae8842bcd702fcf0b46fd6",
    "pytorch/captum": "faac08773131888714b15709b28494ebeea7f6eb",
    "pytorch/rl": "ae9719f17b1517af5c2523a36c4616f003ee55cf",
    "sbi-dev/sbi": "900821dc78aafeb63bca5692d4d9cecfe3c605ae",
    "thu-ml/tianshou": "f2402056b03acafeedf2518a5088db55add004ab",
    "vwxyzjn/cleanrl": "fe8d8a03c41a7ef5b523e2e354bd01c363e786bb",
}
"""The held-out split: repositories the rules were never developed against, from fields the dev split lacks
(reinforcement learning, probabilistic programming, Gaussian processes, attribution, fine-tuning, training
frameworks, differentiable vision, simulation-based inference). Read like ``GIT_REPOS``; never labelled in
labels.tsv: heldout_sample.py draws their sample for independent labelling (heldout_labels.tsv)."""

FRESH_REPOS: Dict[str, str] = {
    "facebookresearch/pytorch3d": "9381c4016376345bb795b97c45a6c2de66db354a",
    "Project-MONAI/MONAI": "d388d1c6fec8cb3a0eebee5b5a0b9776ca59ca83",
    "pyg-team/pytorch_geometric": "5c6461b2305ad068a6d61165b3c55852a11aaa41",
    "speechbrain/speechbrain": "9c826ef3937bac885c8a6ca86c6889a30f256fb5",
}
"""The fresh held-out split (session 13): repositories no session had read or linted before its sample was drawn
(3-D vision, medical imaging, graph learning, speech). The held-out split's repositories served issue 32's recall
work (kornia's parametrized tests, peft's fields), so its figure is no longer one of untouched code; this one is.
Read like ``GIT_REPOS``; its sample is labelled in heldout_labels.tsv like the held-out split's."""

FRESH2_REPOS: Dict[str, str] = {
    "facebookresearch/detectron2": "02b5c4e295e990042a714712c21dc79b731e8833",
    "facebookresearch/fairseq": "3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99",
    "pytorch/torchrec": "a48cef79ebc333da92af1311c04b041ee21a8e75",
    "unit8co/darts": "2be8e43fbdc1265209f33bbe8bae81f3e4d9146f",
}
"""The second fresh split (session 14): object detection, sequence modelling, recommendation, time series; fetched
and drawn from before anyone read them, after session 13's fresh split had served TCL101's and TCL104's mends.
Read like ``GIT_REPOS``; its sample is labelled in fresh2_labels.tsv."""

SPLITS = ("dev", "held-out", "fresh", "fresh2", "all")
"""``dev``: the packages, torch and ``GIT_REPOS`` (labels.tsv); ``held-out``: ``HELD_OUT_REPOS``; ``fresh``:
``FRESH_REPOS``; ``fresh2``: ``FRESH2_REPOS``; ``all``: every member."""

GIT_VERSION_LEN = 12
DEFAULT_MIRROR_DIR = Path(os.environ.get("TORCHCOPY_MIRROR_DIR", "/work/.mirror"))

TORCH_VERSION = "2.13.0"
MARKER = ".complete"


def default_dest() -> Path:
    env = os.environ.get("TORCHCOPY_CORPUS")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "torchcopy-lint" / "corpus"


def corpus_entries(split: str = "dev") -> List[Tuple[str, str]]:
    """(name, version) of the members of ``split`` (see ``SPLITS``): packages, torch, then repositories
    (``owner/name``, short commit), then the held-out repositories."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: one of {', '.join(SPLITS)}")
    dev = (sorted(PACKAGES.items()) + [("torch", TORCH_VERSION)]
           + [(repo, commit[:GIT_VERSION_LEN]) for repo, commit in sorted(GIT_REPOS.items())])
    held_out = [(repo, commit[:GIT_VERSION_LEN]) for repo, commit in sorted(HELD_OUT_REPOS.items())]
    fresh = [(repo, commit[:GIT_VERSION_LEN]) for repo, commit in sorted(FRESH_REPOS.items())]
    fresh2 = [(repo, commit[:GIT_VERSION_LEN]) for repo, commit in sorted(FRESH2_REPOS.items())]
    return {"dev": dev, "held-out": held_out, "fresh": fresh, "fresh2": fresh2,
            "all": dev + held_out + fresh + fresh2}[split]


def repo_commit(name: str) -> Optional[str]:
    """The pinned commit of a repository member of either split; None for a package."""
    return GIT_REPOS.get(name) or HELD_OUT_REPOS.get(name) or FRESH_REPOS.get(name) or FRESH2_REPOS.get(name)


def add_split_argument(ap: argparse.ArgumentParser) -> None:
    """The ``--split`` option every corpus tool takes (default dev: the figures labels.tsv scores)."""
    ap.add_argument("--split", choices=SPLITS, default="dev",
                    help="dev: the labelled members; held-out: HELD_OUT_REPOS; fresh: FRESH_REPOS; fresh2: FRESH2_REPOS; "
                         "all: every member "
                         "(default %(default)s)")


def entry_name(name: str, version: str) -> str:
    """The directory name of a member: ``timm-1.0.31``, ``ultralytics+yolov5-5081342f04fb``."""
    return f"{name.replace('/', '+')}-{version}"


def split_entry(entry: str) -> Tuple[str, str]:
    """(name, version) of a directory name made by ``entry_name``."""
    for name, version in corpus_entries("all"):
        if entry_name(name, version) == entry:
            return name, version
    name, _, version = entry.rpartition("-")
    return name.replace("+", "/"), version


def entry_dir(dest: Path, name: str, version: str) -> Path:
    return dest / entry_name(name, version)


def present(dest: Optional[Path] = None, split: str = "dev") -> Dict[str, Path]:
    """The complete corpus directories of ``split`` under ``dest``: ``{"<name>-<version>": path}``."""
    dest = dest or default_dest()
    out = {}
    for name, version in corpus_entries(split):
        path = entry_dir(dest, name, version)
        if (path / MARKER).exists():
            out[entry_name(name, version)] = path
    return out


def fetch_git(repo: str, commit: str, dest: Path, mirror_dir: Path) -> Optional[Path]:
    """Unpack the ``.py`` files of ``repo`` at ``commit`` from its local bare mirror; None (reported) if absent."""
    target = entry_dir(dest, repo, commit[:GIT_VERSION_LEN])
    if (target / MARKER).exists():
        return target
    gitdir = mirror_dir / repo.replace("/", "+") / "repo"
    if (gitdir / ".git").is_dir():  # some snapshots arrive as a work tree with its .git inside
        gitdir = gitdir / ".git"
    if not gitdir.is_dir():
        print(f"{repo}@{commit}: no mirror at {gitdir}: skipped", file=sys.stderr)
        return None
    try:
        probe = subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "-e", f"{commit}^{{commit}}"],
                               capture_output=True)
    except OSError as exc:
        print(f"{repo}@{commit}: cannot run git ({exc}): skipped", file=sys.stderr)
        return None
    if probe.returncode != 0:
        print(f"{repo}@{commit}: commit not in {gitdir}: skipped", file=sys.stderr)
        return None
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    try:
        count, missing = unpack_git_py(gitdir, commit, target)
    except (OSError, subprocess.CalledProcessError) as exc:
        shutil.rmtree(target, ignore_errors=True)
        print(f"{repo}@{commit}: reading {gitdir} failed ({exc}): skipped", file=sys.stderr)
        return None
    if missing:
        print(f"{repo}@{commit}: {missing} .py blobs absent from the mirror: left out", file=sys.stderr)
    (target / MARKER).write_text(f"{repo}@{commit} {count} files from {gitdir}\n")
    return target


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
        count = unpack_wheel_py(Path(wheels[0]), target)
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
        count = unpack_wheel_py(wheel, target, top_filter="torch")
        origin = str(wheel)
    (target / MARKER).write_text(f"torch=={TORCH_VERSION} {count} files from {origin}\n")
    return target


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=None)
    ap.add_argument("--list", action="store_true", help="print the corpus entries and exit")
    ap.add_argument("--torch-wheel", type=Path, default=None)
    ap.add_argument("--only", nargs="*", default=None, help="only these names (e.g. timm torch karpathy/nanoGPT)")
    ap.add_argument("--mirror-dir", type=Path, default=DEFAULT_MIRROR_DIR,
                    help="local bare git mirrors, <owner>+<name>/repo (default %(default)s)")
    add_split_argument(ap)
    args = ap.parse_args(argv)
    dest = (args.dest or default_dest()).expanduser()
    if args.list:
        have = present(dest, args.split)
        for name, version in corpus_entries(args.split):
            key = entry_name(name, version)
            print(f"{key}\t{have.get(key, '(missing)')}")
        return 0
    dest.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip"]
    skipped = 0
    for name, version in corpus_entries(args.split):
        if args.only and name not in args.only:
            continue
        commit = repo_commit(name)
        if commit:
            path = fetch_git(name, commit, dest, args.mirror_dir.expanduser())
            if path is None:
                skipped += 1
                continue
        elif name == "torch":
            path = fetch_torch(dest, args.torch_wheel)
        else:
            path = fetch_package(name, version, dest, pip)
        print(f"{entry_name(name, version)}\t{path}\t{(path / MARKER).read_text().strip()}")
    if skipped:
        print(f"{skipped} repositories skipped (no local mirror); the rest of the corpus is built", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
