"""The verifier's training loop pieces (scripts/train_default_verifier.py) that decide what a
continued run keeps: the anchor loss."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sklearn")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import train_default_verifier as tv  # noqa: E402

MODEL_DIR = Path(__file__).resolve().parents[1] / "ene_core" / "models" / "ene-nli-mini"
PAIRS = [
    ("The museum never closes.", "The museum is open every day."),
    ("The bridge opened in 1932.", "The bridge opened in 1950."),
    ("A dog sleeps on the porch.", "An animal is resting."),
]


@pytest.fixture(scope="module")
def student_and_batch():  # type: ignore[no-untyped-def]
    model, tok = tv.load_model(MODEL_DIR)
    model.eval()
    batch = dict(
        tok([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="pt")
    )
    return model, batch


def test_the_anchor_loss_is_zero_for_the_anchor_itself(student_and_batch) -> None:  # type: ignore[no-untyped-def]
    model, batch = student_and_batch
    anchor = copy.deepcopy(model).requires_grad_(False)
    logits = model(**batch).logits
    assert tv.anchor_loss(anchor, batch, logits, [0, 1, 2], 2.0).item() == pytest.approx(
        0, abs=1e-5
    )
    assert tv.anchor_loss(anchor, batch, logits, [], 2.0).item() == 0.0  # mix rows only


def test_the_anchor_loss_pulls_a_moved_student_back_on_the_recipe_rows_only(
    student_and_batch,
) -> None:  # type: ignore[no-untyped-def]
    model, batch = student_and_batch
    anchor = copy.deepcopy(model).requires_grad_(False)
    logits = model(**batch).logits.detach()
    moved = (logits + torch.tensor([4.0, 0.0, -4.0])).requires_grad_(True)
    loss = tv.anchor_loss(anchor, batch, moved, [1], 2.0)
    assert loss.item() > 0.1
    loss.backward()
    assert moved.grad is not None
    assert moved.grad[1].abs().sum() > 0  # the recipe row is pulled back
    assert moved.grad[0].abs().sum() == 0 and moved.grad[2].abs().sum() == 0  # the rest free
    assert all(p.grad is None for p in anchor.parameters())  # the anchor stays frozen
