"""tests/runs' servers: the session's shared one, and one that never plays (runs stay queued)."""
from tests.runs.conftest import idle, ray_session, srv  # noqa: F401  (fixtures)
