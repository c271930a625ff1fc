# %% [markdown]
# # An agent seat over a series, from a notebook
#
# A seat with `provider: "agent"` is played by your own code. `Studio.play_seat(run_id, seat, policy)`
# calls `policy(turn)` for every open turn of the seat and submits what it returns, until the run ends.
# Here a series of 4 trials pits a small hand-written policy against a scripted seat; its trials play
# side by side, one thread each. Set STUDIO_URL and STUDIO_TOKEN (a token with runs:write) first.

# %%
import os
from concurrent.futures import ThreadPoolExecutor

from api.python import Studio

studio = Studio.connect(os.environ.get("STUDIO_URL", "http://127.0.0.1:8000"), token=os.environ["STUDIO_TOKEN"])


def policy(turn: dict) -> list[dict]:
    """Eat when hungry, gather where goods lie under you, else head for the nearest goods."""
    state = turn["observation"]["state"]
    you = state["you"]
    if you["satiety"] < 40 and you["inventory"]["food"] > 0:
        return [{"action": "eat"}]
    goods = [(abs(t["x"] - you["x"]) + abs(t["y"] - you["y"]), t) for t in state["resources"]]
    if not goods:
        return [{"action": "move", "direction": "south"}]
    _, near = min(goods, key=lambda g: g[0])
    if (near["x"], near["y"]) == (you["x"], you["y"]):
        return [{"action": "gather"}]
    dx, dy = near["x"] - you["x"], near["y"] - you["y"]
    step = ("east" if dx > 0 else "west") if abs(dx) >= abs(dy) else ("south" if dy > 0 else "north")
    return [{"action": "move", "direction": step}]


# %%
launched = studio.launch_run(
    scenario_id="svc:custom-base-v1", season_ticks=20, trials=4,
    env={"turn_timeout_ms": 5000, "anchors": ["random"]},
    roster=[{"provider": "agent", "model": "notebook-agent v1", "name": "Mine"}, {"model": "local/greedy-harvester"}])
run_ids = launched["batch"]["run_ids"]
with ThreadPoolExecutor(len(run_ids)) as pool:
    played = list(pool.map(lambda run_id: studio.play_seat(run_id, 0, policy), run_ids))
[(p["run"]["status"], p["results"]["agents"][0]["fitness_index"]) for p in played]

# %%
summary = studio.get_batch(id=launched["batch"]["batch_id"])["batch"]["summary"]
summary["seats"][0]
