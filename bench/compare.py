"""This run's scheduler_perf figures beside the anchors, in one table.

Runs the workloads (or reads ``--from`` JSON files written by ``scheduler_perf --json``) and
prints, per workload, the median SchedulingThroughput Average and the last run's
Perc50/90/99 and CPU per pod beside the figures to beat:

* before: this project on this 2-core machine before the throughput work (idle machine);
* Go: upstream kube-scheduler's published figures for the same workload;
* CI floor: upstream's scheduler_perf threshold (what CI fails below).

    python -m bench.compare --workload 5000pods_500nodes,half_500nodes [--runs 3]
    python -m bench.compare --from a.json b.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench import scheduler_perf

ANCHORS: dict[str, dict[str, str]] = {
    "5000pods_500nodes": {
        "before": "164-197",
        "Go": "~375 (1.36, queueing hints, 6 threads)",
        "CI floor": "56 (queueing hints; 40 without)",
    },
    "empty_500nodes": {"Go": "typically > 81", "CI floor": "64"},
    "half_500nodes": {"Go": "typically > 78; ~115-122 in 2025", "CI floor": "70"},
    "full_500nodes": {"Go": "typically > 75", "CI floor": "60"},
}


def table(summaries: list[dict[str, Any]]) -> str:
    head = ("workload", "store", "pods/s (median avg)", "p50/p90/p99 (last run)",
            "CPU ms/pod (last run)", "load / calibration", "before", "Go", "CI floor")
    rows = [head]
    for summary in summaries:
        workload = summary["workload"]
        anchors = ANCHORS.get(workload, {})
        for backend, result in summary["backends"].items():
            last = result["runs"][-1]
            t = last["throughput"]
            cpu = ", ".join(f"{k} {v:.2f}" for k, v in last["cpu_ms_per_pod"].items())
            rows.append((workload, backend, f"{result['median_pods_per_second']:.1f}",
                         f"{t['Perc50']:.0f}/{t['Perc90']:.0f}/{t['Perc99']:.0f}", cpu,
                         f"{last['load_average']:.1f} / {last['calibration_ms']:.0f} ms",
                         anchors.get("before", "-"), anchors.get("Go", "-"),
                         anchors.get("CI floor", "-")))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="5000pods_500nodes,half_500nodes",
                        help="comma-separated workloads of scheduler_perf")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--from", dest="sources", nargs="+", type=Path, default=[],
                        help="scheduler_perf --json files to show instead of running")
    parser.add_argument("--smoke", action="store_true", help="the 'fast' workload, one run")
    args = parser.parse_args(argv)
    if args.sources:
        summaries = [json.loads(p.read_text()) for p in args.sources]
    else:
        workloads, runs = ((["fast"], 1) if args.smoke
                           else ([w for w in args.workload.split(",") if w], args.runs))
        unknown = sorted(set(workloads) - set(scheduler_perf.WORKLOADS))
        if unknown:
            parser.error(f"unknown workloads: {', '.join(unknown)}")
        summaries = [scheduler_perf.run(w, runs, ["sqlite"]) for w in workloads]
    print(table(summaries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
