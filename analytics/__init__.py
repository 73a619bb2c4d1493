"""Analytics: four jobs, one room each, that meet only in the store.

- `analytics.matching`: pings -> runs -> trips performed, stop visits, trip outcomes,
  breakdowns, headways (`pontual match`).
- `analytics.indices`: outcomes, fleet, taps, surveys -> indicators, fleet days, annual grades,
  suggested infractions (`pontual indices`).
- `analytics.crowding`: taps + stop visits -> boardings, alightings, loads (`pontual crowding`).
- `analytics.live`: online matching and predictions for the real-time feed (`pontual serve`);
  it reuses `analytics.matching` and nothing else.

Matching, indices and crowding never import each other (import-linter contract in
pyproject.toml): each reads its inputs from the store and writes its tables back.
"""
