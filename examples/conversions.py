"""Moving a batch to the GPU the way a module is moved: the tensor stays where it was."""

import torch
import torch.nn as nn


def evaluate(model: nn.Module, images: torch.Tensor, labels: torch.Tensor, device: torch.device):
    model.to(device)  # fine: a module is converted in place
    images.to(device)  # TCL111: the result is discarded, images stay on the CPU
    labels.long()  # TCL111: labels keep their dtype
    with torch.no_grad():
        return nn.functional.cross_entropy(model(images), labels)
