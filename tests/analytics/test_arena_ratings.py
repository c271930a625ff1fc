"""Bradley-Terry ratings and paired comparisons read arena results like the world's."""
from analytics.archive.store import Archive
from analytics.compare import compare_seats, leaderboard
from analytics.data import open_data_dir
from orchestrator.play import Job, play_job


def _series(data_dir, batch_id, models, games, seed0):
    archive, played = Archive.of(data_dir), []
    for k in range(games):
        job = Job(run_id=f"run_{batch_id}_{k}", match_id=f"{batch_id}{k:04d}", data_dir=str(data_dir),
                  season_ticks=21, env={"seed": seed0 + k, "spawn_seed": 0, "first_seat": k % 2,
                                        "turn_timeout_ms": 5000},
                  seats=[{"name": m, "model": m, "provider": "local", "scaffold": "local"} for m in models],
                  meta={"scenario_id": "arena:connect-four", "scenario_hash": "h", "config_hash": f"c{k}",
                        "batch_id": batch_id})
        out = play_job(job)
        assert out.status == "finished" and out.results["rubric"] == "arena-connect-four-1"
        archive.land(out.match_id, out.events, out.seats, out.transcript, out.game)  # as the head does
        played.append(out.match_id)
    archive.compact(batch_id, played)


def test_the_solver_tops_a_connect_four_leaderboard_with_intervals(tmp_path):
    _series(tmp_path, "batA", ["local/solver", "local/random"], 6, 100)
    _series(tmp_path, "batB", ["local/solver-2", "local/random"], 6, 200)
    _series(tmp_path, "batC", ["local/solver", "local/solver-2"], 4, 300)
    data = open_data_dir(tmp_path)
    board = leaderboard(data, scenario_id="arena:connect-four", n_resamples=200)
    names = [r.model for r in board.rows]
    assert names[0] == "local/solver" and names[-1] == "local/random" and board.n_matches == 16
    assert all(r.low <= r.estimate <= r.high for r in board.rows)
    cmp = compare_seats(data, "batA", 0, 1)  # paired per game: the solver's optimal-move share is higher
    assert cmp["n"] == 6 and cmp["difference"]["estimate"] > 0 and cmp["mean_a"] == 100.0
