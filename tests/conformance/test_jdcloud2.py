"""JD Cloud conformance with the last SDK that signs JDCLOUD2 (jdcloud_sdk 1.6.93, the .venv-jd2
interpreter): the same cases as test_jdcloud.py, so the emulator answers both signing generations
and both SDK generations parse its answers. Under the current SDK (JDCLOUD3) these cases skip.
"""

import pytest

from test_jdcloud import *  # noqa: F401,F403 - the shared cases
from test_jdcloud import Jd, signing_generation


@pytest.fixture
def jd(sim):
    if signing_generation() != 2:
        pytest.skip("run this file with jdcloud_sdk 1.6.93 (.venv-jd2/bin/python) to exercise JDCLOUD2")
    return Jd(sim)
