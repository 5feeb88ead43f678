"""One shared ``ene serve`` vs an engine in every app process: throughput, latency, memory.

    python benchmarks/serve_throughput.py                       # the default verifier, CPU
    python benchmarks/serve_throughput.py --oracle keyword      # plumbing only, no model
    python benchmarks/serve_throughput.py --clients 4 --concurrency 16 --json out.json

``--clients`` app processes each keep ``--concurrency`` requests in flight (through
``engine.submit``, as the handlers do) until each has sent ``--requests`` requests:

- shared: every process holds a ``RemoteEngine``; one ``ene serve`` (a local Ray Serve,
  ``--replicas`` replicas of ``--num-cpus`` CPUs) batches all of them together (``@serve.batch``)
- per-process: every process loads its own ``NecessityEngine`` (its own model and batcher)

Requests are the necessity dev set (benchmarks/data/necessity_dev.jsonl: ~4 chunks, ~3 claims
each), dealt out so that no two requests repeat (no score-cache hits in either mode). Clients
warm up (model loaded, one request) before a common start; throughput is all requests over the
wall time from that start to the last answer, latency is per request (submit to ENG). Memory is
the resident set (VmRSS, /proc) after the run: the client processes plus, in the shared mode,
every process of the service (``ene serve``, Ray's GCS, raylet, agents, controller, proxy and
replicas). Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEV_SET = ROOT / "benchmarks" / "data" / "necessity_dev.jsonl"
WARM_UP = {
    "answer": "The warm-up store opens at 8:00.",
    "contexts": ["The warm-up store opens at 8:00 every day.", "Parking is free."],
}


def dev_requests() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in DEV_SET.read_text().splitlines() if line.strip()]
    return [
        {"id": r["id"], "question": r["question"], "answer": r["answer"], "contexts": r["chunks"]}
        for r in rows
    ]


def rss_kib(pid: int | str = "self") -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kib(root: int) -> tuple[int, int]:
    """Resident memory of ``root`` and all its descendants, and how many processes."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    todo, seen = [root], []
    while todo:
        pid = todo.pop()
        seen.append(pid)
        todo.extend(children.get(pid, []))
    return sum(rss_kib(p) for p in seen), len(seen)


# -- one app process ------------------------------------------------------------------------------
def client(args: argparse.Namespace) -> None:
    if args.url:
        from ene_core.service.remote import RemoteEngine

        engine: Any = RemoteEngine(args.url, timeout=600, max_connections=args.concurrency)
    else:
        from ene_core.cli import build_engine

        engine = build_engine(
            argparse.Namespace(
                oracle=args.oracle, model=args.model, threshold=None, batch_size=None, device=None
            )
        )
    mine = dev_requests()[args.index :: args.clients][: args.requests]
    engine.submit(WARM_UP["answer"], WARM_UP["contexts"]).result()
    print("ready", flush=True)
    sys.stdin.readline()  # the common start

    def one(request: dict[str, Any]) -> float:
        began = time.perf_counter()
        engine.submit(
            request["answer"], request["contexts"], request["question"], id=request["id"]
        ).result()
        return time.perf_counter() - began

    started = time.time()
    with ThreadPoolExecutor(args.concurrency) as pool:
        latencies = list(pool.map(one, mine))
    ended = time.time()
    print(
        json.dumps({"latencies": latencies, "started": started, "ended": ended, "rss": rss_kib()})
    )
    engine.close()


# -- the driver -----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}


def start_service(args: argparse.Namespace) -> tuple[subprocess.Popen[str], str]:
    import httpx

    port = free_port()
    command = [sys.executable, "-m", "ene_core.cli", "serve", "--port", str(port)]
    command += ["--oracle", args.oracle, "--replicas", str(args.replicas)]
    command += ["--num-cpus", str(args.num_cpus), "--max-batch-size", str(args.max_batch_size)]
    if args.model:
        command += ["--model", args.model]
    service = subprocess.Popen(
        command,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and service.poll() is None:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return service, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    stop_service(service)
    sys.exit("ene serve did not come up")


def stop_service(service: subprocess.Popen[str]) -> None:
    if service.poll() is None:
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(service.pid, signal.SIGKILL)
            service.wait(10)


def run(args: argparse.Namespace, url: str | None) -> dict[str, Any]:
    """Start the clients, wait until all are warm, start them together, collect."""
    base = [sys.executable, __file__, "--role", "client", "--oracle", args.oracle]
    base += ["--clients", str(args.clients), "--concurrency", str(args.concurrency)]
    base += ["--requests", str(args.requests)]
    base += ["--url", url] if url else []
    base += ["--model", args.model] if args.model else []
    clients = [
        subprocess.Popen(
            [*base, "--index", str(i)],
            env=env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(args.clients)
    ]
    for process in clients:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    for process in clients:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    reports = []
    for process in clients:
        assert process.stdout is not None
        reports.append(json.loads(process.stdout.readline()))
    for process in clients:
        process.wait(60)
    latencies = sorted(x for r in reports for x in r["latencies"])
    wall = max(r["ended"] for r in reports) - min(r["started"] for r in reports)
    return {
        "requests": len(latencies),
        "wall_s": wall,
        "throughput": len(latencies) / wall,
        "p50_ms": 1000 * statistics.median(latencies),
        "p95_ms": 1000 * latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))],
        "clients_rss_mib": sum(r["rss"] for r in reports) / 1024,
    }


def shared_run(args: argparse.Namespace) -> dict[str, Any]:
    service, url = start_service(args)
    try:
        row = run(args, url)
        rss, count = tree_rss_kib(service.pid)
        row["service_rss_mib"], row["service_processes"] = rss / 1024, count
        return row
    finally:
        stop_service(service)


def local_run(args: argparse.Namespace) -> dict[str, Any]:
    return {**run(args, None), "service_rss_mib": 0.0, "service_processes": 0}


def median_row(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of every number over the repeats, and the runs themselves."""
    row = {key: statistics.median(r[key] for r in results) for key in results[0]}
    return {**row, "runs": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--role", choices=["driver", "client"], default="driver")
    parser.add_argument("--oracle", choices=["nli", "keyword"], default="nli")
    parser.add_argument("--model", help="NLI model dir (default: the embedded ene-nli-mini)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight per client")
    parser.add_argument("--requests", type=int, default=24, help="requests per client")
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--num-cpus", type=float, default=2, help="CPUs per replica")
    parser.add_argument("--max-batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=1, help="runs per mode (medians shown)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "client":
        return client(args)

    load = os.getloadavg()[0]  # other jobs on the machine
    runs: dict[str, list[dict[str, Any]]] = {"shared service": [], "per-process engines": []}
    for repeat in range(args.repeats):  # alternate the order: a busy machine drifts
        for mode in sorted(runs, reverse=repeat % 2 == 1):
            runs[mode].append(shared_run(args) if mode == "shared service" else local_run(args))
    rows = {mode: median_row(results) for mode, results in runs.items()}

    verifier = "keyword oracle (no model)" if args.oracle == "keyword" else "ene-nli-mini"
    print(
        f"{args.clients} clients x {args.concurrency} in flight, {args.requests} requests each; "
        f"{verifier}; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"service: {args.replicas} replica(s) x {args.num_cpus} CPUs; "
        f"median of {args.repeats} run(s), load average at start {load:.1f}"
    )
    header = f"| {'mode':<20} | req/s | p50 ms | p95 ms | RSS total MiB | of which service MiB |"
    print(header)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    for name, row in rows.items():
        total = row["clients_rss_mib"] + row["service_rss_mib"]
        print(
            f"| {name:<20} | {row['throughput']:5.1f} | {row['p50_ms']:6.0f} | "
            f"{row['p95_ms']:6.0f} | {total:13.0f} | {row['service_rss_mib']:20.0f} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
