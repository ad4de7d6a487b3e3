"""Fixtures for the static tests."""

import pytest

from _support import run_cli


@pytest.fixture
def cli():
    return run_cli
