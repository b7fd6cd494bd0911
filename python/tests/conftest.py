"""Shared helpers of the Python package's tests: the configurations every test runs over."""

import pytest

# (profile, seats, options, calls): every profile, and every option at least once.
CONFIGS = [
    ("classic", 4, "-", "challenge"),
    ("classic", 2, "single_round", "enforce"),
    ("penalty-points", 3, "deck32,nine_reverses,ace_skips", "challenge"),
    ("penalty-points", 5, "no_mau_penalty,limit150", "off"),
    ("brazilian", 4, "-", "challenge"),
    ("brazilian", 6, "jack_wild_on_paid_seven", "enforce"),
    ("romanian-32", 3, "-", "challenge"),
]


@pytest.fixture(params=CONFIGS, ids=[f"{p}-{s}-{o}-{c}" for p, s, o, c in CONFIGS])
def config(request):
    profile, seats, options, calls = request.param
    return dict(profile=profile, seats=seats, options=options, calls=calls)
