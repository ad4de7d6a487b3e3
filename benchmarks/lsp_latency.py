#!/usr/bin/env python
"""Editor latency of ``torchcopy-lint server``: time from ``didChange`` to ``publishDiagnostics``.

A real LSP client (pygls's) starts the server over stdio, opens _latency_file.py's deterministic
1,000-line training script, then makes edits and times each one until the diagnostics
for *that* document version arrive::

    python benchmarks/lsp_latency.py                 # 40 isolated edits + 10 typing bursts
    python benchmarks/lsp_latency.py --delay-ms 50 --edits 100 --json-out out.json

Each edit turns a site from `x.clone().detach()` into `x.detach().clone()` or back (so the
diagnostics really change) and renumbers a comment on the last line (so that no version's
text repeats and no cache can answer). Two kinds of edit:

- isolated: one edit after a quiet spell (the server's debounce lints it at once);
- burst: ``--burst`` keystrokes ``--burst-gap-ms`` apart, timed from the last keystroke
  (the debounce waits ``--delay-ms`` after it, then lints once).

It also reports the engine's own time on the same file, in this process, for reference,
and the machine's load (the figures are only as quiet as the machine was).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _latency_file import make_latency_file  # noqa: E402  (the 1,000-line file flake8_latency.py uses too)

SLOW, FAST = "x.clone().detach()", "x.detach().clone()"


class Timer:
    """Waits for the diagnostics of one document version."""

    def __init__(self) -> None:
        self.waiting: Dict[int, asyncio.Future] = {}

    def published(self, params: lsp.PublishDiagnosticsParams) -> None:
        future = self.waiting.pop(params.version, None)
        if future is not None and not future.done():
            future.set_result((time.perf_counter(), len(params.diagnostics)))

    def expect(self, version: int) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self.waiting[version] = future
        return future


def engine_ms(text: str, runs: int = 7) -> float:
    from torchcopy_lint.engine import lint_source
    from torchcopy_lint.rules import ALL_RULES

    times = []
    for _ in range(runs):
        start = time.perf_counter()
        lint_source(text.encode(), "bench.py", ALL_RULES)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def summary(values: List[float]) -> dict:
    values = sorted(values)
    return {"n": len(values), "median_ms": statistics.median(values), "min_ms": values[0], "max_ms": values[-1],
            "p90_ms": values[min(len(values) - 1, int(0.9 * len(values)))]}


LINTED = re.compile(r"linted (\S+) version (\d+) in ([\d.]+) ms")


def worker_times(log_file: Path) -> Dict[int, float]:
    """The server's own account (its INFO log): version -> ms in the worker, IPC included."""
    found = {}
    for match in LINTED.finditer(log_file.read_text()):
        found[int(match.group(2))] = float(match.group(3))
    return found


async def measure(args: argparse.Namespace, path: Path, log_file: Path) -> dict:
    lines = path.read_text().splitlines()
    lines[-1] = "# edit 0"  # each edit also renumbers this comment: no two versions are the same text
    text = "\n".join(lines) + "\n"
    last_line = len(lines) - 1
    site_line = next(i for i, line in enumerate(text.splitlines()) if SLOW in line)
    site_col = text.splitlines()[site_line].index(SLOW)
    timer = Timer()
    client = LanguageClient("lsp-latency", "1")

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        timer.published(params)

    await client.start_io(sys.executable, "-m", "torchcopy_lint", "server", "--log-level", "INFO",
                          "--log-file", str(log_file))
    options = {"lintDelay": args.delay_ms} if args.delay_ms is not None else None
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                       initialization_options=options))
    client.initialized(lsp.InitializedParams())
    uri = path.as_uri()
    first = timer.expect(1)
    opened = time.perf_counter()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", 1, text)))
    done, count = await asyncio.wait_for(first, 60)
    result = {"open_ms": (done - opened) * 1000, "diagnostics": count}
    version = 1
    state = [SLOW]

    def edit() -> None:
        nonlocal version
        version += 1
        new = FAST if state[0] == SLOW else SLOW
        end = lsp.Position(site_line, site_col + len(state[0]))
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(site_line, site_col), end), text=new),
             lsp.TextDocumentContentChangePartial(
                 range=lsp.Range(lsp.Position(last_line, 0), lsp.Position(last_line + 1, 0)),
                 text=f"# edit {version}\n")]))
        state[0] = new

    async def timed(keystrokes: int) -> Tuple[int, float]:
        """ms from the last of ``keystrokes`` edits (``--burst-gap-ms`` apart) to its diagnostics."""
        await asyncio.sleep(args.quiet_ms / 1000)
        for _ in range(keystrokes - 1):
            edit()
            await asyncio.sleep(args.burst_gap_ms / 1000)
        future = timer.expect(version + 1)
        start = time.perf_counter()
        edit()
        done, _ = await asyncio.wait_for(future, 60)
        return version, (done - start) * 1000

    isolated = [await timed(1) for _ in range(args.edits)]
    bursts = [await timed(args.burst) for _ in range(args.bursts)]
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    in_worker = worker_times(log_file)
    result["isolated"] = summary([ms for _, ms in isolated])
    result["burst"] = summary([ms for _, ms in bursts]) if bursts else None
    overhead = [ms - in_worker[v] for v, ms in isolated if v in in_worker]
    result["isolated_worker"] = summary([in_worker[v] for v, _ in isolated if v in in_worker]) if overhead else None
    result["isolated_outside_worker"] = summary(overhead) if overhead else None
    result["samples"] = {"isolated": isolated, "burst": bursts, "worker": in_worker}
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--bursts", type=int, default=10)
    parser.add_argument("--burst", type=int, default=5, help="keystrokes per burst")
    parser.add_argument("--burst-gap-ms", type=float, default=20)
    parser.add_argument("--quiet-ms", type=float, default=300, help="pause before each edit or burst")
    parser.add_argument("--delay-ms", type=int, default=None, help="the server's lintDelay (default: its own)")
    parser.add_argument("--json-out", default=None)
    args = parser.parse_args(argv)
    path = make_latency_file(Path(tempfile.mkdtemp(prefix="lsp-latency-")))
    load_before = os.getloadavg()
    result = asyncio.run(measure(args, path, path.parent / "server.log"))
    result["engine_ms"] = engine_ms(path.read_text())
    result["loadavg"] = {"before": load_before, "after": os.getloadavg()}
    result["cpus"] = os.cpu_count()
    result["lines"] = path.read_text().count("\n")
    iso, burst = result["isolated"], result["burst"]
    print(f"file: {result['lines']} lines, {result['diagnostics']} diagnostics; open -> diagnostics "
          f"{result['open_ms']:.0f} ms (includes the worker's start)")
    print(f"didChange -> publishDiagnostics, isolated edits: median {iso['median_ms']:.1f} ms "
          f"(p90 {iso['p90_ms']:.1f}, min {iso['min_ms']:.1f}, max {iso['max_ms']:.1f}, n={iso['n']}) "
          f"editor target <= 100 ms: {'met' if iso['median_ms'] <= 100 else 'NOT met'}; issue 19's <= 50 ms: "
          f"{'met' if iso['median_ms'] <= 50 else 'NOT met'}")
    inside, outside = result["isolated_worker"], result["isolated_outside_worker"]
    if inside:
        print(f"  of which in the worker (lint + IPC, the server's log): median {inside['median_ms']:.1f} ms; "
              f"the rest (protocol, scheduling, client): median {outside['median_ms']:.1f} ms")
    if burst:
        print(f"last keystroke of a {args.burst}-key burst -> publishDiagnostics: median {burst['median_ms']:.1f} ms "
              f"(p90 {burst['p90_ms']:.1f}, n={burst['n']})")
    print(f"engine alone (lint_source in this process): median {result['engine_ms']:.1f} ms")
    after = result["loadavg"]["after"][0]
    print(f"load average before/after: {load_before[0]:.2f} / {after:.2f} on {os.cpu_count()} cpus")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
