"""The two ways kernels are compiled.

`hot` kernels never allocate: they are compiled without Numba's reference counting, which
otherwise costs 20-100 ns per call that passes arrays (measured: a 4-comparison helper took 117 ns
with refcounting and 0.9 ns without). `alloc` kernels create arrays and keep the runtime.
Calls between kernels pass every array by value, so the state is packed into a few tables
(state.py): the cost of a call grows with the number of arrays it carries.
"""
from numba import njit

hot = njit(cache=True, _nrt=False)
alloc = njit(cache=True)
