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
            m.weight.data.normal_(0.0, 0.02)  # TCL119 (opt-in: no graph is live while initialising)
            m.bias.data.zero_()  # TCL119


class MaskedScores(nn.Module):
    def forward(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        scores.data.masked_fill_(mask, -1e9)  # TCL104: a graph can be live in forward
        return scores.softmax(-1)


def ok(batch, values: list):
    ids = torch.tensor(values)  # a list: fine
    snapshot = batch.detach().clone()  # already the preferred form
    return ids, snapshot
