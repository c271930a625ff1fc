"""A results object as a plain-text table for terminals."""
from __future__ import annotations


def results_table(results: dict) -> str:
    rows = sorted(results["agents"] + results.get("anchors", []), key=lambda e: (e["rank"], e["seat"]))
    head = f"{'rank':>4}  {'name':<22} {'model':<26} {'fitness':>7} {'grade':<5} {'archetype':<10} {'status':<8} {'crafter':>7}"
    played = results.get("effective") or {}
    # the seeds replay the match: `studio simulate ... --seed S --spawn-seed P` plays it again
    seeds = f"  seed: {played['seed']}  spawn seed: {played['spawn_seed']}" if "seed" in played else ""
    lines = [f"{results['rubric']}  ticks played: {results['match_ticks']}  field: {results['field_size']}{seeds}",
             head, "-" * len(head)]
    for e in rows:
        lines.append(f"{e['rank']:>4}  {e['name'][:22]:<22} {e['model'][:26]:<26} {e['fitness_index']:>7.2f} "
                     f"{e['grade']:<5} {e['archetype']:<10} {e['status']:<8} {e['crafter_score']:>7.2f}")
    for e in rows:
        lines.append(f"  {e['name']}: {e['epilogue']}")
    return "\n".join(lines)
