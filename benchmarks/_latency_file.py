"""The deterministic 1,000-line training script the editor-latency benchmarks lint.

``make_latency_file(directory)`` writes ``train_synthetic.py``: plausible PyTorch code (modules,
EMA updates, training loops, checkpoints) with copy hazards of every rule, the same bytes on every
call. flake8_latency.py and lsp_latency.py measure on it.
"""
from __future__ import annotations

import ast
from pathlib import Path

HAZARD_BLOCKS = [
    # each block is a template; {i} is replaced by the block index
    '''

class Encoder{i}(nn.Module):
    """Small convolutional encoder number {i}."""

    def __init__(self, in_ch: int = 3, width: int = {w}) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, width, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width * 2, kernel_size=3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.register_buffer("running_scale", torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.conv2(x))
        return self.pool(x).flatten(1)
''',
    '''

def make_ema_{i}(model: nn.Module, decay: float = 0.99{i}) -> nn.Module:
    ema = copy.deepcopy(model)
    for p in ema.parameters():
        p.requires_grad_(False)
    return ema


def update_ema_{i}(ema: nn.Module, model: nn.Module, decay: float) -> None:
    with torch.no_grad():
        for pe, pm in zip(ema.parameters(), model.parameters()):
            pe.data = pe.data * decay + pm.data * (1.0 - decay)
''',
    '''

def snapshot_{i}(x: torch.Tensor) -> torch.Tensor:
    saved = x.clone().detach()
    also = torch.tensor(x)
    good = x.detach().clone()
    return saved + also + good
''',
    '''

def train_epoch_{i}(model, loader, optimizer, device="cpu"):
    model.train()
    best_loss = float("inf")
    best_state = None
    losses = []
    for step, (inputs, targets) in enumerate(loader):
        inputs = inputs.to(device)
        targets = targets.to(device)
        optimizer.zero_grad()
        logits = model(inputs)
        loss = F.cross_entropy(logits, targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if loss.item() < best_loss:
            best_loss = loss.item()
            best_state = model.state_dict()
    return best_state, losses
''',
    '''

def to_numpy_{i}(t: torch.Tensor) -> np.ndarray:
    arr = t.numpy()
    arr *= 2.0
    back = torch.from_numpy(arr)
    return back.cpu().numpy()
''',
    '''

def checkpoint_{i}(model: nn.Module, optimizer, path: str) -> dict:
    state = {{
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": {i},
    }}
    torch.save(state, path)
    weights = {{k: v.clone() for k, v in model.state_dict().items()}}
    return weights
''',
    '''

def stats_{i}(batch: torch.Tensor) -> tuple:
    mean = batch.mean(dim=0, keepdim=True)
    std = batch.std(dim=0, keepdim=True).clamp_min(1e-6)
    normed = (batch - mean) / std
    hist = normed.detach().cpu()
    grads = [p.grad.clone() for p in [batch] if p.grad is not None]
    return normed, hist, grads
''',
]

HEADER = '''"""Synthetic training script used by benchmarks/flake8_latency.py and lsp_latency.py."""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

'''


def make_latency_file(directory: Path, n_lines: int = 1000) -> Path:
    """A deterministic ~n_lines file of plausible PyTorch code with some copy hazards."""
    text = HEADER
    i = 0
    while True:
        block = HAZARD_BLOCKS[i % len(HAZARD_BLOCKS)].format(i=i, w=16 + (i % 7) * 8)
        if (text + block).count("\n") > n_lines - 1:
            break
        text += block
        i += 1
    while text.count("\n") < n_lines:
        text += f"CONSTANT_{text.count(chr(10))} = {i}\n"
    ast.parse(text)
    path = directory / "train_synthetic.py"
    path.write_text(text)
    return path
