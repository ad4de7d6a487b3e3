import copy
from copy import deepcopy

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def train(loader, epochs: int):
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    best, best_loss = None, float("inf")
    for _ in range(epochs):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if loss.item() < best_loss:
            best_loss = loss.item()
            best = copy.deepcopy(model)
    return best


def fit(model: nn.Module, loader, optimizer):
    history = []
    for x, y in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
        history.append(deepcopy(model))
    return history


def fit_unknown(net, loader, opt):
    net.train()
    while True:
        for x in loader:
            net(x).sum().backward()
            opt.step()
            snapshot = copy.deepcopy(net)
            print(snapshot)
