"""Hypothesis strategies for JSON values as clients and providers send them: numbers of every kind
(huge, tiny, negative, integral floats, 1e400 which parses to infinity, integers of 30 digits) and
nestings, for the property tests of issue 50."""
from hypothesis import strategies as st

# numbers as a JSON text can carry them: 1e400 parses to inf, 400 digits to one int
NUMBERS = st.one_of(
    st.integers(min_value=-(10 ** 30), max_value=10 ** 30), st.floats(allow_nan=False), st.just(1e400),
    st.just(-1e400), st.sampled_from([0.0, 1.0, 300.0, -2.0, 1e-320, 5e-324, 1e308, 2 ** 63, -(2 ** 63) - 1]),
    st.integers(min_value=0, max_value=5).map(float))
SCALARS = st.one_of(NUMBERS, st.booleans(), st.none(), st.text(max_size=8))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                    max_leaves=12)


