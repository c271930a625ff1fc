"""Inspect AI models play Scenario Studio's world (docs/FORMATS.md, "Inspect models in our worlds").

Inspect finds this package through the `inspect_ai` entry point of pyproject.toml, named
scenario_studio, so `inspect eval scenario_studio/world --model <provider/model> -T scenario=...
-T seats=inspect,local/random` resolves without a file path. inspect_ai is imported only here,
never by the service.
"""
from api.inspect_task.world import world

__all__ = ["world"]
