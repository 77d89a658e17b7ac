"""Fixtures of the content-cache tests: the built-in settings, and a store in
the test's temporary folder."""

import pytest

from engine.ccm import config
from engine.ccm.store import Store


@pytest.fixture(scope="module")
def settings():
    return config.load(config.builtin_path())


@pytest.fixture
def store(settings, tmp_path):
    return Store(settings, str(tmp_path / "ccm"), log=lambda m: None)
