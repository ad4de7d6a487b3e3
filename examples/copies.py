"""Tensor copies as they appear in tutorials and forum answers."""

import torch
import torch.nn as nn


def make_target(logits: torch.Tensor, labels: torch.Tensor):
    target = torch.tensor(labels, dtype=torch.float32)  # TCL101
    like = logits.new_tensor(labels)  # TCL102
    frozen = logits.clone().detach()  # TCL103
    return target, like, frozen


def init(module: nn.Module):
    for m in module.modules():
        if isinstance(m, nn.Linear):
            m.weight.data.normal_(0.0, 0.02)  # TCL119 (opt-in: no graph is live in an initialiser)
            m.bias.data.zero_()  # TCL119


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, mask):
        out = self.proj(x)
        self.proj.weight.data.masked_fill_(mask, 0.0)  # TCL104: the graph saved the weight
        return out


def ok(batch, values: list):
    ids = torch.tensor(values)  # a list: fine
    snapshot = batch.detach().clone()  # already the preferred form
    return ids, snapshot
