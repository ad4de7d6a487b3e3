"""A small training script that keeps "best model" snapshots the expensive way."""

import copy

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, features: int, classes: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, x):
        return self.body(x)


def main(loader, epochs: int = 3):
    model = Classifier(8, 3)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best_model, best_loss = None, float("inf")
    for _ in range(epochs):
        for inputs, labels in loader:
            loss = nn.functional.cross_entropy(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if loss.item() < best_loss:
                best_loss = loss.item()
                best_model = copy.deepcopy(model)  # TCL105: a state_dict snapshot is enough
    return best_model
