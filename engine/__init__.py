"""The world engine: rules as data, compiled kernels, the rubric. No I/O, no HTTP, no database."""
