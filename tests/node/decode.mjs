// Decode GTFS-Realtime .pb files with the npm gtfs-realtime-bindings package and print, as one
// JSON line per file, what Pontual's feed test compares: header, entity ids and the trip,
// route, stop and vehicle ids used. Usage: node decode.mjs FILE.pb [FILE.pb ...]
import { readFileSync } from "node:fs";
import GtfsRealtimeBindings from "gtfs-realtime-bindings";

const { FeedMessage } = GtfsRealtimeBindings.transit_realtime;

for (const path of process.argv.slice(2)) {
  const feed = FeedMessage.decode(readFileSync(path));
  const ids = { trips: new Set(), routes: new Set(), stops: new Set(), vehicles: new Set() };
  const relationships = {};
  let stopTimeUpdates = 0;
  const trip = (t) => {
    if (!t) return;
    if (t.tripId) ids.trips.add(t.tripId);
    if (t.routeId) ids.routes.add(t.routeId);
  };
  for (const e of feed.entity) {
    if (e.vehicle) {
      trip(e.vehicle.trip);
      if (e.vehicle.vehicle && e.vehicle.vehicle.id) ids.vehicles.add(e.vehicle.vehicle.id);
      if (e.vehicle.stopId) ids.stops.add(e.vehicle.stopId);
    }
    if (e.tripUpdate) {
      trip(e.tripUpdate.trip);
      const rel = e.tripUpdate.trip.scheduleRelationship || 0;
      relationships[rel] = (relationships[rel] || 0) + 1;
      if (e.tripUpdate.vehicle && e.tripUpdate.vehicle.id) ids.vehicles.add(e.tripUpdate.vehicle.id);
      for (const u of e.tripUpdate.stopTimeUpdate) {
        stopTimeUpdates += 1;
        if (u.stopId) ids.stops.add(u.stopId);
      }
    }
    if (e.alert) {
      for (const ie of e.alert.informedEntity) {
        if (ie.routeId) ids.routes.add(ie.routeId);
        trip(ie.trip);
      }
    }
  }
  console.log(
    JSON.stringify({
      file: path,
      version: feed.header.gtfsRealtimeVersion,
      incrementality: feed.header.incrementality || 0,
      timestamp: Number(feed.header.timestamp),
      entities: feed.entity.map((e) => e.id),
      trips: [...ids.trips].sort(),
      routes: [...ids.routes].sort(),
      stops: [...ids.stops].sort(),
      vehicles: [...ids.vehicles].sort(),
      relationships,
      stopTimeUpdates,
    }),
  );
}
