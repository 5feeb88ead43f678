#!/usr/bin/env bash
# One command for a GPU machine: the model tests on the device, then the throughput benchmark.
#
#   bash scripts/gpu_check.sh                  # --device cuda; logs to $OUT (else runs/gpu_check)
#   bash scripts/gpu_check.sh --device cpu --quick     # dry run of the same steps on a CPU
#   options: --device D  --quick (small benchmark)  --no-bench  --no-tests
#
# Wheels: when .whl/*.whl exist (pydantic, pydantic-core, annotated-types, typing-inspection,
# syntok, pytest-asyncio), they are installed with --no-index --no-deps into $ENE_SITE
# (/tmp/site) and put first on PYTHONPATH; .whl/fallback/ adds pytest, typing-extensions and
# hypothesis when the machine's are missing or too old. The benchmark's HotpotQA sample is
# taken from .whl/hotpot_dev_distractor_first100.json, $ENE_HOTPOT or ../shared/data.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

DEVICE=cuda QUICK="" BENCH=1 TESTS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE="$2"; shift 2 ;;
    --quick) QUICK=--quick; shift ;;
    --no-bench) BENCH=0; shift ;;
    --no-tests) TESTS=0; shift ;;
    *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
LOGS=${OUT:-runs/gpu_check}
SITE=${ENE_SITE:-/tmp/site}
mkdir -p "$LOGS"

step() { printf '\n== %s ==\n' "$*"; }

if compgen -G ".whl/*.whl" >/dev/null; then
  step "install .whl into $SITE"
  # Fallback wheels only for what this machine lacks: pytest >= 8.4 (pytest-asyncio 1.x),
  # typing-extensions >= 4.16 (pydantic 2.14), hypothesis.
  FALLBACK=$("$PY" - <<'EOF'
import importlib.metadata as md
import re


def version(name):
    try:
        return tuple(int(x) for x in re.findall(r"\d+", md.version(name))[:2])
    except md.PackageNotFoundError:
        return None


need = []
if (version("pytest") or (0,)) < (8, 4):
    need += ["pytest", "pluggy", "iniconfig", "packaging", "pygments"]
if (version("typing_extensions") or (0,)) < (4, 16):
    need.append("typing_extensions")
if version("hypothesis") is None:
    need += ["hypothesis", "sortedcontainers"]
print(" ".join(need))
EOF
)
  wheels=(.whl/*.whl)
  for name in $FALLBACK; do
    wheels+=(.whl/fallback/"$name"-*.whl)
  done
  echo "fallback: ${FALLBACK:-none}"
  "$PY" -m pip install -q --no-index --no-deps --upgrade --target "$SITE" "${wheels[@]}" \
    2>&1 | grep -v "^WARNING: Target directory" || true
  export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
for data in .whl/hotpot_dev_distractor_first100.json ../shared/data/hotpotqa/hotpot_dev_distractor_first100.json; do
  if [ -z "${ENE_HOTPOT:-}" ] && [ -f "$data" ]; then export ENE_HOTPOT="$PWD/$data"; fi
done

step "machine"
{
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
  else
    echo "no nvidia-smi"
  fi
  "$PY" - "$DEVICE" <<'EOF'
import importlib.metadata as md
import platform
import sys

import torch

print("python", platform.python_version(), "| torch", torch.__version__, "| cuda", torch.version.cuda)
for name in ("transformers", "tokenizers", "safetensors", "pydantic", "syntok", "pytest",
             "pytest-asyncio", "hypothesis", "typing_extensions"):
    try:
        print(f"  {name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"  {name} MISSING")
if torch.cuda.is_available():
    print("cuda device:", torch.cuda.get_device_name(0), "| bf16:", torch.cuda.is_bf16_supported())
import ene_core  # noqa: E402  (must import with only pydantic and syntok)

print("ene_core", ene_core.__version__, "from", ene_core.__file__)
if sys.argv[1].startswith("cuda") and not torch.cuda.is_available():
    sys.exit(f"--device {sys.argv[1]} but torch sees no CUDA device: the GPU tests would only skip")
EOF
} 2>&1 | tee "$LOGS/machine.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "machine check failed" >&2; exit 3; }

tests_rc=skipped
if [ "$TESTS" = 1 ]; then
  step "tests --device $DEVICE"
  timeout 270 "$PY" -m pytest -q -p no:cacheprovider -rs --device "$DEVICE" \
    --junitxml "$LOGS/pytest.xml" \
    tests/test_oracle.py tests/test_default_verifier.py tests/test_engine.py \
    tests/test_concurrency.py tests/test_gpu.py 2>&1 | tee "$LOGS/pytest.log"
  tests_rc=${PIPESTATUS[0]}
fi

bench_rc=skipped
if [ "$BENCH" = 1 ]; then
  step "benchmarks/engine_throughput.py --device $DEVICE $QUICK"
  timeout 300 "$PY" benchmarks/engine_throughput.py --device "$DEVICE" $QUICK \
    --json "$LOGS/engine_throughput.json" 2>&1 | tee "$LOGS/engine_throughput.md"
  bench_rc=${PIPESTATUS[0]}
fi

step "summary"
echo "tests: rc=$tests_rc  benchmark: rc=$bench_rc  logs: $LOGS" | tee "$LOGS/summary.txt"
[ "$tests_rc" = 0 ] || [ "$tests_rc" = skipped ] || exit 1
[ "$bench_rc" = 0 ] || [ "$bench_rc" = skipped ] || exit 1
