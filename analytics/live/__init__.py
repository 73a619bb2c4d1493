"""The live engine: online trip assignment, vehicle state, arrival predictions and occupancy.

`engine.LiveEngine` holds the state and is fed one batch of MQTT records at a time
(`update(avl, fares)`, vectorised over the batch); the other modules are pure frame functions:
`reference` (the day's schedule, network, learned travel times and fleet capacities read from
the store), `runs` (current runs and their trips, with the batch matcher's rules), `predict`
(arrival predictions), `occupancy` (live load and its GTFS-RT occupancy), `feeds` (GTFS-RT
frames and messages).
"""
