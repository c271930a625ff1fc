"""Agent seats (docs/AGENTS.md): a seat played by the account's own program, or by a person in
the console, instead of a model the service calls.

`roster` is what an agent seat may carry at launch; `exchange` the head node's Ray actor holding every
open agent turn between the workers that play and the API process that serves the agents; `player`
the agent seat as a world match or an arena game plays it, beside the model seats; `waits` the
long-polls of one process sharing one ask of the exchange per seat. The service functions that read
and answer a turn are the run service's (agent_turns): they read the run, which sits above.
"""
