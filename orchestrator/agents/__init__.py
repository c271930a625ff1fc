"""Agent seats (docs/AGENTS.md): a seat played by the account's own program, or by a person in
the console, instead of a model the service calls.

- `roster`: what an agent seat may carry at launch (a label, skills, instructions; no model settings);
- `exchange`: the head node's Ray actor that holds every open agent turn, between the workers that
  play the matches and the API process that serves the agents' long-polls and submissions;
- `player`: the agent seat as a match plays it, in the world (`AgentSeat.act`) and in arena games
  (`AgentArenaSeat.answer`), beside the model seats;
- `waits`: the long-polls of one process waiting on one seat, sharing one ask of the exchange.

The service functions that REST, MCP, the Python surface and the console call to read and answer a
turn are the run service's (orchestrator.runs.agent_turns): they read the run, which sits above.
"""
