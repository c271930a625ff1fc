"""Scenario Studio's client, for notebooks and scripts that reach a running service over REST:

    from studio_client import Studio, frames
    studio = Studio("http://127.0.0.1:8000", token="dsk_...")
    run = studio.launch_run(scenario_id="svc:custom-base-v1", roster=[{"model": "local/random"}])["run"]
    frames.scorecards(studio, studio.wait(run["run_id"])["run"]["run_id"])

Methods are the service's tools (the MCP tools' names and arguments); docs/client.md has the rest.
"""
from studio_client.compat import Drift
from studio_client.rest import Studio
from studio_client.tools import StudioError
from studio_client.version import API_VERSION

__version__ = API_VERSION
__all__ = ["API_VERSION", "Drift", "Studio", "StudioError"]
