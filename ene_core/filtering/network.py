"""The filter's network: the first layers of the shipped verifier with a relevance head.

A filter directory holds ``filter.json`` (the settings below and the calibrated threshold) and
``delta.safetensors``: only the tensors training changed (the kept encoder layers, the pooler
and the one-logit head). The word, position and type embeddings are read from the shipped
verifier's weights (``ene_core/models/ene-nli-mini``), so the filter adds a few MB, not 45.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
DEFAULT_FILTER_DIR = MODELS_DIR / "chunk-filter"
CONFIG_NAME = "filter.json"
DELTA_NAME = "delta.safetensors"


@dataclass
class FilterSettings:
    """What ``filter.json`` holds.

    ``base`` names a model folder under ``ene_core/models`` (or is a path); ``num_layers`` is
    how many of its encoder layers the filter keeps; ``max_length`` caps a (question, chunk)
    pair in tokens (the chunk is cut first); ``threshold`` is the calibrated keep threshold on
    the sigmoid score; ``min_keep`` / ``max_keep`` bound how many chunks are kept.
    """

    base: str = "ene-nli-mini"
    num_layers: int = 2
    max_length: int = 128
    threshold: float = 0.5
    min_keep: int = 1
    max_keep: int | None = None
    revision: str = "untrained"
    combine: dict[str, float] | None = None
    training: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, directory: str | Path) -> FilterSettings:
        data = json.loads((Path(directory) / CONFIG_NAME).read_text(encoding="utf-8"))
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def write(self, directory: str | Path) -> None:
        path = Path(directory) / CONFIG_NAME
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    def base_dir(self) -> Path:
        candidate = Path(self.base)
        if candidate.is_absolute() or (candidate / "config.json").exists():
            return candidate
        return MODELS_DIR / self.base


def delta_keys(state: dict[str, Any]) -> list[str]:
    """The names of the tensors a filter ships: everything but the embeddings."""
    return [k for k in state if not k.startswith("bert.embeddings.")]


def build_network(base_dir: str | Path, num_layers: int) -> Any:
    """A ``BertForSequenceClassification`` with one logit: the base's embeddings and first
    ``num_layers`` encoder layers (and pooler), a fresh head. Float32, eval mode."""
    import torch
    from safetensors.torch import load_file
    from transformers import BertConfig, BertForSequenceClassification

    base_dir = Path(base_dir)
    config = BertConfig.from_pretrained(base_dir)
    if not 1 <= num_layers <= config.num_hidden_layers:
        raise ValueError(f"num_layers must be 1..{config.num_hidden_layers}, not {num_layers}")
    config.num_hidden_layers = num_layers
    config.num_labels = 1
    config.id2label = {0: "needed"}
    config.label2id = {"needed": 0}
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    base = load_file(str(base_dir / "model.safetensors"))
    keep = {}
    for name, tensor in base.items():
        if name.startswith("classifier."):
            continue
        if name.startswith("bert.encoder.layer.") and int(name.split(".")[3]) >= num_layers:
            continue
        keep[name] = tensor.float()
    missing, _ = model.load_state_dict(keep, strict=False)
    unexpected_missing = [k for k in missing if not k.startswith("classifier.")]
    if unexpected_missing:
        raise ValueError(f"the base lacks {unexpected_missing[:3]}")
    return model.float().eval()


def load_delta(model: Any, path: str | Path) -> None:
    """Load the tensors of ``delta.safetensors`` into ``model`` (as float32)."""
    from safetensors.torch import load_file

    delta = {k: v.float() for k, v in load_file(str(path)).items()}
    own = model.state_dict()
    strange = [k for k in delta if k not in own]
    if strange:
        raise ValueError(f"the delta has tensors the network lacks: {strange[:3]}")
    model.load_state_dict(delta, strict=False)


def save_delta(model: Any, path: str | Path) -> None:
    """Write the trained tensors (all but the embeddings) as float16 safetensors."""
    from safetensors.torch import save_file

    state = model.state_dict()
    save_file(
        {k: state[k].detach().to("cpu").half().contiguous() for k in delta_keys(state)},
        str(path),
    )
