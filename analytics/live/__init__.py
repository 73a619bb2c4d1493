"""The live engine: online trip assignment, vehicle state, arrival predictions and occupancy.

`engine.LiveEngine` holds the state and is fed one batch of MQTT records at a time
(`ingest(avl, fares)`: the positions at once; `refresh()`: the trip state; `update` does both),
vectorised over the batch; the other modules are pure frame functions: `reference` (the day's
schedule with the previous day's trips still running, network, learned travel times and fleet
capacities read from the store), `runs` (current runs and their trips, with the batch
matcher's rules), `continuity` (the next trip of a vehicle's block, checked on its shape),
`predict` (arrival predictions), `occupancy` (live load and its GTFS-RT occupancy), `feeds`
(GTFS-RT frames and messages).
"""
