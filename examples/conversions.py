"""Tensors moved like modules, and lists that repeat one tensor: the copies that never happen."""

import torch
import torch.nn as nn


def evaluate(model: nn.Module, images: torch.Tensor, labels: torch.Tensor, device: torch.device):
    model.to(device)  # fine: a module is converted in place
    images.to(device)  # TCL111: the result is discarded, images stay on the CPU
    labels.long()  # TCL111: labels keep their dtype
    with torch.no_grad():
        return nn.functional.cross_entropy(model(images), labels)


def per_client_sums(batches, num_classes: int):
    sums = [torch.zeros(num_classes)] * len(batches)  # TCL112: one tensor, listed len(batches) times
    for i, batch in enumerate(batches):
        sums[i] += batch.sum(0)  # grows every element
    return torch.stack(sums)
