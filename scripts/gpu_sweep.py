"""A checkpoint sweep in one GPU call: continue the shipped verifier on four mixes in parallel,
score every checkpoint on the dev sets (contrast, necessity dev, fresh dev; never the sealed
test) and bring back the best one by a rule fixed before the run.

Here (packs the carried data into ``.whl/sweep``, xz; the device takes 64 MiB per call)::

    python scripts/build_v3_data.py --out runs/v3 --recipe
    python scripts/build_v3_data.py --out runs/topic --only '^(polarity|neg|priv|antonym|quant-|topic-)'
    python scripts/gpu_sweep.py pack            # also reads runs/mixG (run G's mix)

On the device (``carry: [".whl"]``; the wheels of ``scripts/gpu_check.sh`` in ``.whl``)::

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu_sweep.py run   # results in $OUT

Runs A-D (base and anchor: the shipped model, 40 % of each batch from the mix, 4,000 steps or
3.6 minutes, an export every 1,000 steps) on run D's mix, that mix with the same-topic pairs (two
learning rates), and run G's mix with them. Selection: S = mean(dev status, dev F1, fresh status,
fresh F1); eligible if contrast >= the shipped model's - 0.05 and supported -> contradicted on
dev + fresh <= its count; the best eligible S comes back as ``weights.0-2`` (cat them) and
``config.json``, with ``results.json`` and ``logs.tgz``. The GPU model tests
(``scripts/gpu_check.sh --no-bench``) run beside it. ``DRY=1`` runs every step small on a CPU;
``SKIP_TRAIN=1`` scores the checkpoints already in ``$WORK``.
"""

from __future__ import annotations

import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

T0 = time.time()
DRY = os.environ.get("DRY") == "1"
LIMIT = float(os.environ.get("LIMIT", "555"))
OUT = Path(os.environ.get("OUT", "/tmp/out"))
W = Path(os.environ.get("WORK", "/tmp/work"))
V3 = Path("ene_core/models/ene-nli-mini")
D = Path(".whl/sweep")
PY = sys.executable


def log(msg: str) -> None:
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


def lines(path: Path, n: int = 0) -> list[str]:
    op = lzma.open if path.suffix == ".xz" else gzip.open
    with op(path, "rt") as f:
        out = f.readlines()
    return out[:n] if n else out


def write(path: Path, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.writelines(rows)


def prep() -> None:
    n = 3000 if DRY else 0
    m = 600 if DRY else 0
    write(W / "recipe/train.jsonl.gz", lines(D / "recipe_train.jsonl.xz", n))
    shutil.copy(D / "recipe_dev.jsonl.gz", W / "recipe/dev.jsonl.gz")
    tt, td = lines(D / "topic_train.jsonl.xz"), lines(D / "topic_dev.jsonl.xz")
    gt, gd = lines(D / "g_train.jsonl.xz"), lines(D / "g_dev.jsonl.xz")

    def topic(row: str) -> bool:
        return ":topic-" in json.loads(row)["source"]

    mixes = {
        "pol2": ([r for r in tt if not topic(r)], [r for r in td if not topic(r)]),
        "topic": (tt, td),
        "gtopic": (gt + [r for r in tt if topic(r)], gd + [r for r in td if topic(r)]),
    }
    for name, (tr, dv) in mixes.items():
        if m:
            tr, dv = tr[:m], dv[: m // 4]
        write(W / name / "v3_train.jsonl.gz", tr)
        write(W / name / "v3_dev.jsonl.gz", dv)
        log(f"mix {name}: {len(tr)} train / {len(dv)} dev")


RUNS = {  # name: (mix, lr)
    "A": ("pol2", 1.5e-5),
    "B": ("topic", 1.5e-5),
    "C": ("topic", 3e-5),
    "D": ("gtopic", 1.5e-5),
}


def train() -> None:
    steps, every, minutes = (20, 10, 1.0) if DRY else (4000, 1000, 3.6)
    procs = []
    for name, (mix, lr) in RUNS.items():
        cmd = [
            PY,
            str(Path(__file__).with_name("train_default_verifier.py")),
            "--pairs",
            str(W / "recipe"),
            "--mix",
            str(W / mix),
            "--base",
            str(V3),
            "--anchor",
            str(V3),
            "--out",
            str(W / "m" / name),
            "--summary",
            str(W / "m" / f"{name}.json"),
            "--mix-share",
            "0.4",
            "--lr",
            str(lr),
            "--max-steps",
            str(steps),
            "--export-every",
            str(every),
            "--keep-exports",
            "1",
            "--max-length",
            "256",
            "--batch-size",
            "32",
            "--threads",
            "3",
            "--max-minutes",
            str(minutes),
        ]
        if DRY:
            cmd += ["--device", "cpu"]
        logf = open(W / f"train_{name}.log", "w")  # noqa: SIM115
        procs.append(subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT))
    for p in procs:
        p.wait()
    log("training done: " + " ".join(str(p.returncode) for p in procs))


def evaluate(name: str, model: Path) -> dict:
    ev = W / "eval"
    ev.mkdir(exist_ok=True)
    lim = ["--limit", "3"] if DRY else []
    jobs = [
        ("contrast", ["benchmarks/contrast.py", "--model", str(model)]),
        ("dev", ["benchmarks/necessity_dev.py", "--model", str(model), *lim]),
        (
            "fresh",
            [
                "benchmarks/necessity_dev.py",
                "--model",
                str(model),
                "--data",
                "benchmarks/data/necessity_fresh.jsonl",
                *lim,
            ],
        ),
    ]
    res: dict = {"name": name}
    for key, args in jobs:
        if time.time() - T0 > LIMIT - 25:
            return res
        path = ev / f"{name}_{key}.json"
        with open(ev / f"{name}_{key}.log", "w") as logf:
            subprocess.run([PY, *args, "--json", str(path)], stdout=logf, stderr=subprocess.STDOUT)
        if path.exists():
            d = json.loads(path.read_text())
            if key == "contrast":
                res["contrast"] = d["overall"]
                res["contrast_kinds"] = {k: v for k, v in d.items() if k != "overall"}
            else:
                o, c = d["overall"], d["confusion"]
                res[f"{key}_status"] = o["status_accuracy"]
                res[f"{key}_f1"] = o["necessity_f1"]
                res[f"{key}_s2c"] = c["supported"]["contradicted"]
    return res


def pack(runs: Path = Path("runs")) -> None:
    """Here: the recipe and the mixes, xz-compressed, into ``.whl/sweep``."""
    D.mkdir(parents=True, exist_ok=True)
    shutil.copy(runs / "v3/dev.jsonl.gz", D / "recipe_dev.jsonl.gz")
    for src, dst in [
        ("v3/train.jsonl.gz", "recipe_train"),
        ("topic/v3_train.jsonl.gz", "topic_train"),
        ("topic/v3_dev.jsonl.gz", "topic_dev"),
        ("mixG/v3_train.jsonl.gz", "g_train"),
        ("mixG/v3_dev.jsonl.gz", "g_dev"),
    ]:
        with lzma.open(D / f"{dst}.jsonl.xz", "wt", preset=9) as f:
            f.writelines(lines(runs / src))
    log(f"packed {sum(p.stat().st_size for p in D.iterdir()) / 1e6:.1f} MB into {D}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    W.mkdir(parents=True, exist_ok=True)
    tests = None
    if not DRY:  # the GPU model tests (scripts/gpu_check.sh), beside the sweep
        env = {**os.environ, "OUT": str(W / "gpu_check"), "ENE_SITE": "/tmp/site2"}
        env.pop("PYTHONPATH", None)
        tests = subprocess.Popen(
            ["bash", "scripts/gpu_check.sh", "--no-bench"],
            env=env,
            stdout=open(W / "gpu_check.log", "w"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
        )
    if os.environ.get("SKIP_TRAIN") != "1":
        prep()
        log("data ready")
        train()
    models = {"v3": V3}
    for run in RUNS:  # the final export first, then the checkpoints from the last back
        if (W / "m" / run / "model.safetensors").exists():
            models[f"{run}-final"] = W / "m" / run
    for run in RUNS:
        for d in sorted((W / "m").glob(f"{run}-*"), key=lambda p: -int(p.name.split("-")[1])):
            models[d.name] = d
    log(f"evaluating {len(models)} models")
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda kv: evaluate(*kv), models.items()))
    keys = ["contrast", "dev_status", "dev_f1", "dev_s2c", "fresh_status", "fresh_f1", "fresh_s2c"]
    done = [r for r in results if all(k in r for k in keys)]
    for r in done:
        r["S"] = (r["dev_status"] + r["dev_f1"] + r["fresh_status"] + r["fresh_f1"]) / 4
    base = next((r for r in done if r["name"] == "v3"), None)
    for r in done:
        r["eligible"] = bool(
            base
            and r["name"] != "v3"
            and r["contrast"] >= base["contrast"] - 0.05
            and r["dev_s2c"] + r["fresh_s2c"] <= base["dev_s2c"] + base["fresh_s2c"]
        )
    table = ["| model | contrast | dev status / F1 | s->c | fresh status / F1 | s->c | S | ok |"]
    for r in results:
        if r in done:
            table.append(
                f"| {r['name']} | {r['contrast']:.3f} | {r['dev_status']:.3f} / {r['dev_f1']:.3f}"
                f" | {r['dev_s2c']} | {r['fresh_status']:.3f} / {r['fresh_f1']:.3f}"
                f" | {r['fresh_s2c']} | {r['S']:.4f} | {r['eligible']} |"
            )
        else:
            table.append(f"| {r['name']} | unfinished {r} |")
    print("\n".join(table), flush=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=1))
    cands = [r for r in done if r["name"] != "v3"]
    pick = max((r for r in cands if r["eligible"]), key=lambda r: r["S"], default=None)
    pick = pick or max(cands, key=lambda r: r["S"], default=None)
    if pick:
        src = models[pick["name"]]
        log(f"bringing back {pick['name']} (eligible {pick['eligible']}, S {pick['S']:.4f})")
        blob = (src / "model.safetensors").read_bytes()
        size = 15_200_000  # three parts: at most 8 files come back
        for i in range(0, len(blob), size):
            (OUT / f"weights.{i // size}").write_bytes(blob[i : i + size])
        shutil.copy(src / "config.json", OUT / "config.json")
    if tests is not None:
        try:
            tests.wait(timeout=max(1.0, LIMIT - (time.time() - T0)))
        except subprocess.TimeoutExpired:
            tests.kill()
        log(f"gpu tests rc {tests.returncode}")
    subprocess.run(
        [
            "tar",
            "czf",
            str(OUT / "logs.tgz"),
            "-C",
            str(W),
            "eval",
            "m/A.json",
            "m/B.json",
            "m/C.json",
            "m/D.json",
            "gpu_check",
            "gpu_check.log",
        ]
        + [f"train_{r}.log" for r in RUNS],
        stderr=subprocess.DEVNULL,
    )
    log("done")


if __name__ == "__main__":
    if sys.argv[1:] == ["pack"]:
        pack()
    elif sys.argv[1:] == ["run"]:
        main()
    else:
        raise SystemExit("usage: gpu_sweep.py pack | run")
