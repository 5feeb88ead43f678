"""A checkpoint sweep in one GPU call: continue the shipped verifier on a mix in several variants
at once, score every checkpoint (and half-and-half weight averages of the best with the shipped
model) on the dev sets (contrast and the six necessity dev sets; never the sealed test) and on the
recipe's held-out NLI pairs and RTE, and bring back the best ones by a rule fixed before the run.

Here (packs the carried data into ``.whl/sweep``, xz; the device takes 64 MiB per call)::

    python scripts/build_v3_data.py --out runs/v3 --recipe
    python scripts/build_v3_data.py --out runs/lex --only '^(polarity|neg|priv|antonym|quant-|topic-|lex-)'
    python scripts/gpu_sweep.py pack

On the device (``carry: [".whl"]``; the wheels that ``ene_core`` needs in ``.whl``)::

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site:$PWD python3 scripts/gpu_sweep.py run   # results in $OUT

Runs (``RUNS``): from the shipped model and anchored to it (KL to its verdicts on the recipe
rows), each with its own learning rate, share of the mix in a batch, anchor weight and length; an
export every ``EVERY`` steps. This sweep (the third; tenth session, 2026-11-27) adds the small-edit pairs of
``synth_lexical`` to the same-topic mix: the shipped v3.1 reads a reworded sentence as a
contradiction. Then the ``SOUPS`` checkpoints best by S are averaged half and half with the
shipped model (as v3.1 was made) and scored by the same rule, time permitting (``LIMIT``: on the
H200, 17 models of eight jobs each took 300 s, so the soups needed a second call).

Selection, fixed before the run: S = mean of status and F1 on the six necessity dev sets (dev,
fresh, fresh2 ... fresh5); eligible if contrast >= the shipped model's - 0.05, supported ->
contradicted summed over the six sets <= the shipped model's, and every held-out NLI row (MNLI,
FEVER, Factcheck-GPT, ConjNLI, RTE) >= the shipped model's - 0.01, all measured in the same call.
The best eligible model comes back as ``best.weights.0-2`` (cat them), the best S overall (if
another) as ``top.weights.*``, with ``results.json`` and ``logs.tgz`` (the configs
``best.config.json`` / ``top.config.json``, the logs, every score). ``DRY=1`` runs every step
small on a CPU; ``SKIP_TRAIN=1`` scores the checkpoints already in ``$WORK``.
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
DEVICE = "cpu" if DRY else "cuda"
WORKERS = int(os.environ.get("WORKERS", "14"))


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
    tr, dv = lines(D / "mix_train.jsonl.xz"), lines(D / "mix_dev.jsonl.xz")
    if m:
        tr, dv = tr[:m], dv[: m // 4]
    write(W / "topic" / "v3_train.jsonl.gz", tr)
    write(W / "topic" / "v3_dev.jsonl.gz", dv)
    log(f"mix: {len(tr)} train / {len(dv)} dev")


#: name: (lr, share of the mix in each batch, anchor weight, steps; the schedule ends there)
RUNS = {
    "L": (1e-5, 0.4, 1.0, 1000),
    "M": (1.5e-5, 0.4, 1.0, 1000),
    "N": (1e-5, 0.5, 1.0, 1000),
    "P": (1e-5, 0.4, 3.0, 1000),
}
SOUPS = 4  # the best checkpoints by S averaged half and half with the shipped model
EVERY = 250


def train() -> None:
    procs = []
    for name, (lr, share, anchor_weight, steps) in RUNS.items():
        cmd = [
            PY,
            str(Path(__file__).with_name("train_default_verifier.py")),
            *("--pairs", str(W / "recipe"), "--mix", str(W / "topic")),
            *("--base", str(V3), "--anchor", str(V3)),
            *("--out", str(W / "m" / name), "--summary", str(W / "m" / f"{name}.json")),
            *("--mix-share", str(share), "--anchor-weight", str(anchor_weight)),
            *("--lr", str(lr), "--max-steps", str(20 if DRY else steps)),
            *("--export-every", str(10 if DRY else EVERY), "--keep-exports", "1"),
            *("--max-length", "256", "--batch-size", "32", "--threads", "3"),
            *("--max-minutes", "1.0" if DRY else "3.0"),
        ]
        if DRY:
            cmd += ["--device", "cpu"]
        logf = open(W / f"train_{name}.log", "w")  # noqa: SIM115
        procs.append(subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT))
    for p in procs:
        p.wait()
    log("training done: " + " ".join(str(p.returncode) for p in procs))


SETS = ("dev", "fresh", "fresh2", "fresh3", "fresh4", "fresh5")
NLI_ROWS = {  # eval_verifier row name (its opening) -> key
    "MNLI dev": "mnli",
    "FEVER symmetric": "fever",
    "Factcheck-GPT": "factcheck",
    "ConjNLI": "conjnli",
    "RTE": "rte",
}


def evaluate(name: str, model: Path) -> dict:
    ev = W / "eval"
    ev.mkdir(exist_ok=True)
    lim = ["--limit", "3"] if DRY else []
    sets = {s: ["--data", f"benchmarks/data/necessity_{s}.jsonl"] for s in SETS}
    jobs = [
        (
            "nli",
            [
                *("benchmarks/eval_verifier.py", "--model", str(model), "--device", DEVICE),
                *("--pairs", str(W / "recipe"), "--data", str(D)),
                *("--skip", "snli", "control", "qags", "sick", "summac", "hotpot", "engine"),
                "speed",
                *(["--limit", "40"] if DRY else []),
            ],
        ),
        ("contrast", ["benchmarks/contrast.py", "--model", str(model)]),
        *(
            (key, ["benchmarks/necessity_dev.py", "--model", str(model), *args, *lim])
            for key, args in sets.items()
        ),
    ]
    res: dict = {"name": name}
    for key, args in jobs:
        if time.time() - T0 > LIMIT - 25:
            return res
        path = ev / f"{name}_{key}.json"
        with open(ev / f"{name}_{key}.log", "w") as logf:
            subprocess.run([PY, *args, "--json", str(path)], stdout=logf, stderr=subprocess.STDOUT)
        if not path.exists():
            continue
        d = json.loads(path.read_text())
        if key == "nli":
            for row in d:
                for title, k in NLI_ROWS.items():
                    if row["name"].startswith(title) and row["acc"] is not None:
                        res[f"nli_{k}"] = row["acc"]
        elif key == "contrast":
            res["contrast"] = d["overall"]
        else:
            o, c = d["overall"], d["confusion"]
            res[f"{key}_status"] = o["status_accuracy"]
            res[f"{key}_f1"] = o["necessity_f1"]
            res[f"{key}_s2c"] = c["supported"]["contradicted"]
    return res


KEYS = ["contrast", *(f"{s}_{k}" for s in SETS for k in ("status", "f1", "s2c"))]


def select(results: list[dict]) -> list[dict]:
    """Score S, mark eligibility against the shipped model (the rule in the module docstring),
    print a table."""
    done = [r for r in results if all(k in r for k in KEYS)]
    for r in done:
        r["S"] = sum(r[f"{s}_{k}"] for s in SETS for k in ("status", "f1")) / (2 * len(SETS))
        r["s2c"] = sum(r[f"{s}_s2c"] for s in SETS)
    base = next((r for r in done if r["name"] == "shipped"), None)
    for r in done:
        r["eligible"] = bool(
            base
            and r["name"] != "shipped"
            and r["contrast"] >= base["contrast"] - 0.05
            and r["s2c"] <= base["s2c"]
            and all(
                r.get(f"nli_{k}", 0.0) >= base.get(f"nli_{k}", 0.0) - 0.01
                for k in NLI_ROWS.values()
            )
        )
    head = (
        "| model | contrast | "
        + " | ".join(SETS)
        + " | s->c | S | "
        + " | ".join(NLI_ROWS.values())
    )
    table = [head + " | ok |"]
    for r in results:
        if r not in done:
            table.append(f"| {r['name']} | unfinished {r} |")
            continue
        sets = " | ".join(f"{r[f'{s}_status']:.3f} / {r[f'{s}_f1']:.3f}" for s in SETS)
        nli = " | ".join(f"{r.get(f'nli_{k}', float('nan')):.3f}" for k in NLI_ROWS.values())
        table.append(
            f"| {r['name']} | {r['contrast']:.3f} | {sets} | {r['s2c']} | {r['S']:.4f} | {nli}"
            f" | {r['eligible']} |"
        )
    print("\n".join(table), flush=True)
    return done


def bring_back(prefix: str, src: Path) -> None:
    blob = (src / "model.safetensors").read_bytes()
    size = 15_200_000  # three parts of at most 16 MiB: at most 8 files come back
    for i in range(0, len(blob), size):
        (OUT / f"{prefix}.weights.{i // size}").write_bytes(blob[i : i + size])
    shutil.copy(src / "config.json", W / f"{prefix}.config.json")  # into logs.tgz


def pack(runs: Path = Path("runs")) -> None:
    """Here: the recipe, the same-topic mix and RTE dev, compressed, into ``.whl/sweep``."""
    (D / "nli").mkdir(parents=True, exist_ok=True)
    shutil.copy(runs / "v3/dev.jsonl.gz", D / "recipe_dev.jsonl.gz")
    shutil.copy(Path("../shared/data/nli/rte_dev.jsonl"), D / "nli" / "rte_dev.jsonl")
    for src, dst in [
        ("v3/train.jsonl.gz", "recipe_train"),
        ("lex/v3_train.jsonl.gz", "mix_train"),
        ("lex/v3_dev.jsonl.gz", "mix_dev"),
    ]:
        with lzma.open(D / f"{dst}.jsonl.xz", "wt", preset=9) as f:
            f.writelines(lines(runs / src))
    size = sum(p.stat().st_size for p in D.rglob("*") if p.is_file())
    log(f"packed {size / 1e6:.1f} MB into {D}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    W.mkdir(parents=True, exist_ok=True)
    if os.environ.get("SKIP_TRAIN") != "1":
        prep()
        log("data ready")
        train()
    models = {"shipped": V3}
    for run in RUNS:  # the final exports first, then the checkpoints from the last back
        if (W / "m" / run / "model.safetensors").exists():
            models[f"{run}-final"] = W / "m" / run
    exports = sorted((W / "m").glob("[A-Z]-*"), key=lambda p: -int(p.name.split("-")[1]))
    models.update((d.name, d) for d in exports)  # the latest exports first: the time may run out
    log(f"evaluating {len(models)} models")
    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(lambda kv: evaluate(*kv), models.items()))
    done = select(results)
    ranked = sorted((r for r in done if r["name"] != "shipped"), key=lambda r: -r["S"])[:SOUPS]
    soups = {}
    for r in ranked:
        name = f"soup-{r['name']}"
        subprocess.run(
            [
                *(PY, str(Path(__file__).with_name("soup.py")), "--a", str(models[r["name"]])),
                *("--b", str(V3), "--weight-b", "0.5", "--out", str(W / "m" / name)),
            ],
            check=True,
        )
        soups[name] = W / "m" / name
    log(f"evaluating {len(soups)} soups")
    models.update(soups)
    with ThreadPoolExecutor(WORKERS) as pool:
        results += list(pool.map(lambda kv: evaluate(*kv), soups.items()))
    done = select(results)
    (OUT / "results.json").write_text(json.dumps(results, indent=1))
    cands = [r for r in done if r["name"] != "shipped"]
    best = max((r for r in cands if r["eligible"]), key=lambda r: r["S"], default=None)
    top = max(cands, key=lambda r: r["S"], default=None)
    for prefix, r in (("best", best), ("top", top)):
        if r and (prefix == "best" or r is not best):
            log(f"bringing back {r['name']} as {prefix} (eligible {r['eligible']}, S {r['S']:.4f})")
            bring_back(prefix, models[r["name"]])
    configs = [p.name for p in W.glob("*.config.json")]
    subprocess.run(
        ["tar", "czf", str(OUT / "logs.tgz"), "--exclude", "*.safetensors"]
        + ["--exclude", "tokenizer.json", "-C", str(W), "eval", "m", *configs]
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
