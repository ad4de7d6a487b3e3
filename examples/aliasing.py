"""Values that share storage: a detached alias, a numpy view and a history written in place."""

import torch


def standardize(features: torch.Tensor) -> torch.Tensor:
    centered = features.detach()
    centered -= centered.mean(dim=0)  # TCL115: centers `features` too
    return features / features.std(dim=0)


def to_display(image: torch.Tensor):
    pixels = image.numpy()
    pixels *= 255  # TCL113: rescales `image` too
    return pixels, image.mean()


def trajectory(x: torch.Tensor, steps: int):
    history = []
    for _ in range(steps):
        history.append(x)  # TCL114: the same tensor every time
        x.mul_(0.5)
    return torch.stack(history)
