"""The catalogue of the command line's user-facing messages: pt-BR by default, English by
setting (`PONTUAL_LANG=en`).

A message's id is its English text, a template with ``{named}`` fields (docs/adr/0075); its
pt-BR text is in the one catalogue of user-facing texts,
`core/locale/pt_BR/LC_MESSAGES/pontual.po` (`core.texts`, docs/adr/0106), and `MESSAGES` lists
the ids. `gettext(msgid, **fields)` formats a message in the chosen language;
`translate(text)` turns an English text that the layers below produce (ingest notes, e.g. "no
records read: the file has a header line and no records") into the chosen language by matching
it against the templates of `MESSAGES` (a text no template matches is shown as it is).
Imported at start-up: the catalogue is read on the first message shown (`--help` included, as
it is translated).
"""

from __future__ import annotations

import re
from functools import cache

from cases.errors import MESSAGES as CASE_MESSAGES
from core.texts import (
    DEFAULT_LANG,
    LANG_ENV,
    N_,
    catalogue,
    compile_templates,
    gettext,
    language,
    match_template,
)

__all__ = [
    "DEFAULT_LANG",
    "LANG_ENV",
    "MESSAGES",
    "gettext",
    "language",
    "translate",
    "translate_issue",
    "translate_where",
]

MESSAGES: tuple[str, ...] = (
    # -- the error printer (pontual/cli.py) ------------------------------------------------
    N_("error: {text}"),
    N_("where: {text}"),
    N_("hint: {text}"),
    N_("interrupted"),
    N_("internal error: {name}: {text} (run with --debug for the traceback)"),
    # -- argparse's own texts (pontual/parser.py; Python 3.11 to 3.13) ------------------------
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("optional arguments"),
    N_("show this help message and exit"),
    N_("see `{prog} --help`"),
    N_("argument {name}: {text}"),
    N_("invalid {kind} value: {value}"),
    N_("invalid choice: {value} (choose from {choices})"),
    N_("the following arguments are required: {names}"),
    N_("unrecognized arguments: {names}"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("expected {n} arguments"),
    N_("expected {n} argument"),
    N_("ambiguous option: {option} could match {matches}"),
    N_("not allowed with argument {name}"),
    N_("one of the arguments {names} is required"),
    N_("ignored explicit argument {value}"),
    N_("expected a date YYYY-MM-DD, got {text}"),
    N_("show the version and exit"),
    # -- help texts of the options and verbs (pontual/verbs/*; shown by pontual/parser.py) ---
    N_(
        "Pontual: how well a city's buses keep their promises (ICV, IPK, lotação, grades) "
        "from GTFS, AVL and ticketing data."
    ),
    N_("DuckDB store file (env PONTUAL_STORE; default data/pontual.duckdb)"),
    N_("regulation profile id or .toml path (env PONTUAL_PROFILE)"),
    N_(
        "read a Parquet lake (pontual export parquet) instead of the store file (env "
        "PONTUAL_LAKE); verbs that write the store refuse it"
    ),
    N_("print only errors"),
    N_("show tracebacks"),
    N_("create or migrate the store and the card-hashing key"),
    N_("list regulation profiles or show one with its sources"),
    N_("check the digests of the raw data per day and of the cases' evidence"),
    N_("only check (do not record the digest of new days; opens the store read-only)"),
    N_("simulate a city's bus operation with its ground truth (GTFS, AVL, fares, registers)"),
    N_("validate and load GTFS feeds; materialise scheduled trips"),
    N_("load AVL pings, fare taps, the fleet register, incidents, surveys, inspections"),
    N_("list quarantined records with their reasons"),
    N_("consume live AVL and fare messages from an MQTT broker (QoS 1, no loss)"),
    N_("match AVL pings to scheduled trips: outcomes, stop visits, breakdowns"),
    N_("place taps, infer alightings, compute loads and crowding (art. 59)"),
    N_("ICV, IQS, km, IPK, fleet, grades and suggested infractions of a period"),
    N_("semester report, monthly operating report, annual renewal dossier (PDF/XLSX/CSV)"),
    N_("export the store: TIDES tables, or the partitioned Parquet lake"),
    N_("the partitioned Parquet lake (same as export parquet)"),
    N_("live feed: consume the MQTT streams and serve GTFS-Realtime and stop arrivals"),
    N_("publish a recorded AVL file through MQTT in event-time order (demos, real-day trials)"),
    N_("open the planners' dashboard (reads the published snapshot, never locks the store)"),
    N_("simulate a sample city, run every pipeline stage into the store, start the dashboard"),
    N_("shipped profiles"),
    N_("every value of a profile with its article"),
    N_("profile id or path to a .toml file"),
    N_("output folder (created)"),
    N_("simulate on this GTFS feed instead of the built-in city"),
    N_("first service date (default 2026-03-02)"),
    N_("number of days (default 7)"),
    N_(
        "simulate a sampled year instead of --start/--days: --days-per-month working days "
        "of each month of YEAR"
    ),
    N_("with --year: working days simulated in each month, spread over it (default 1)"),
    N_("random seed (same seed -> same files)"),
    N_("vehicles at the peak (default 40; above 200 a synthetic grid city is used)"),
    N_("AVL ping interval, s"),
    N_("GPS noise σ, metres"),
    N_("add reported_trip_id to the AVL"),
    N_("days covered by avl.csv and the MQTT files (0: all; Parquet has all)"),
    N_("validate a feed (zip or folder) and load it"),
    N_("check a feed and list its errors and warnings"),
    N_("materialise scheduled trips for a date range"),
    N_("GTFS .zip or folder of .txt files"),
    N_("first service day to schedule"),
    N_("last service day to schedule"),
    N_(
        "warn of a stop farther than this from its trip's shape, m (default 100, as the "
        "canonical GTFS validator)"
    ),
    N_("list every issue, not the first 40"),
    N_("YYYY-MM-DD"),
    N_("ingest avl files into vehicle_locations"),
    N_("ingest fares files into fare_transactions"),
    N_("ingest vehicles files into vehicles"),
    N_("ingest incidents files into incidents"),
    N_("ingest surveys files into iqs_surveys"),
    N_("ingest counts files into passenger_counts"),
    N_("ingest inspections files into inspections"),
    N_("vendor mapping: shipped name (e.g. sube) or .toml path"),
    N_("IANA zone of times without offset (default: the profile's)"),
    N_("strptime format of the source's times"),
    N_("records per transaction (default 1 000 000)"),
    N_("allowed clock skew into the future, s"),
    N_("margin around the stops' box, m"),
    N_("highest believable speed, m/s"),
    N_("Olho Vivo: oldest fix kept, s"),
    N_("records dated before 1 January of this year are refused (default 2000)"),
    N_("store records of vehicles absent from the fleet register"),
    N_("GPX: vehicle id of the track (default: track name)"),
    N_("GTFS-RT VehiclePositions URL to poll"),
    N_("polling interval, s"),
    N_("number of polls (default: until interrupted)"),
    N_("only records whose source contains this text"),
    N_("rows to show (default 50)"),
    N_(
        "Subscribe to {root}/avl/+/+ and {root}/fares/+/+ with QoS 1 in a persistent "
        "session and write the messages to the store in batches; a message is "
        "acknowledged only after its batch is committed."
    ),
    N_("broker host (default 127.0.0.1)"),
    N_("broker port (default 1883)"),
    N_("broker account of the listener"),
    N_("its password (better: env PONTUAL_MQTT_PASSWORD)"),
    N_("CA certificate file: connect with TLS"),
    N_("client certificate (mutual TLS)"),
    N_("client private key (mutual TLS)"),
    N_("do not check the host name"),
    N_("fixed client id naming the session (pontual-listener)"),
    N_("first topic level (default pontual)"),
    N_("MQTT 5 shared subscription group (several listeners)"),
    N_("commit every N messages (default 5000)"),
    N_("or every S seconds (default 1.0)"),
    N_("publish the readers' snapshot every S s (60)"),
    N_("stop after N messages (tests)"),
    N_("stop after S seconds without messages"),
    N_("first service day (YYYY-MM-DD)"),
    N_("last service day (default: --from)"),
    N_(
        "processes for the vehicle partitions (each runs two batches at once in threads; "
        "default: one per two cores)"
    ),
    N_("local: this machine, the store file (default); spark: Spark jobs over a lake"),
    N_("with --engine spark: the Spark master (local[N] or spark://host:7077)"),
    N_("with --engine spark: the lake to read and write (default: the global --lake)"),
    N_("pings per vehicle batch, the unit of work (default 150000)"),
    N_("with --engine spark: JVM memory per executor (the work runs in Python workers)"),
    N_(
        "local: the store file (default); spark: a lake, the period rolled up on DuckDB "
        "over its partitions (indices have no per-day step)"
    ),
    N_("YYYY-MM-DD (default: --from)"),
    N_(
        "Computes the quality indices of a period from the matched trips, writes "
        "`indicators`, `fleet_days`, `annual_grades` (year periods) and "
        "`suggested_infractions`, and prints them."
    ),
    N_("YYYY-MM (month), YYYY (year) or YYYY-MM-DD..YYYY-MM-DD"),
    N_("last service day (YYYY-MM-DD)"),
    N_(
        "show one scope: system, operator[:ID], lot[:ID] or line[:ID] (default: system "
        "and operators)"
    ),
    N_("print every indicator, not the main ones"),
    N_("list the trips (and pings) behind a value"),
    N_("with --trace: list the pings too"),
    N_("operating cost per km (R$) for the tariff"),
    N_("CSV operator_id,month,cost_per_km (R$/km) for the tariff"),
    N_("CSV lat,lon,people,area for stop coverage (CGS art. 4)"),
    N_("CSV scope,scope_id,year,grade of earlier years"),
    N_("compute and print only"),
    N_(
        "with a year --period: each of its months first, then the year, in one run (the "
        "same rows as one command per month then the year; months without matched trips are "
        "left out)"
    ),
    N_(
        "Builds the reports of BG Anexo I XLII (semester), art. 62-VII (monthly) and the "
        "annual renewal dossier from the store, as PDF (pt-BR), XLSX (one sheet per "
        "table) and CSV (one file per table: ';' and decimal commas for pt-BR "
        "spreadsheets; csv-raw for machines)."
    ),
    N_("semester report (BG Anexo I XLII)"),
    N_("monthly operating report (BG art. 62-VII)"),
    N_("annual renewal dossier per operator or lot"),
    N_("YYYY-1 (January-June) or YYYY-2"),
    N_("CSV operator_id,month,item,cost_brl of maintenance costs"),
    N_("output folder (default: <store folder>/reports)"),
    N_("who takes the report, for the audit log (default: the system user)"),
    N_(
        "pdf, xlsx, csv (pt-BR spreadsheets) or csv-raw (machines); repeatable; default: "
        "pdf, xlsx and csv"
    ),
    N_("YYYY-MM"),
    N_("CSV route_id,month,n_drivers,n_inspectors"),
    N_("calendar year"),
    N_("one operator (default: every operator graded)"),
    N_("one concession lot"),
    N_(
        "TIDES (tides-transit.org) CSV tables with a data-package descriptor, or the "
        "store's tables as Hive-partitioned Parquet (zstd) that DuckDB and Spark read."
    ),
    N_("TIDES tables (CSV) and datapackage.json"),
    N_("the lake: Hive-partitioned Parquet"),
    N_("the matched days as GTFS-RT VehiclePositions, one FeedMessage per minute (zip)"),
    N_("output folder"),
    N_("folder of the TIDES table schemas: copy them beside the data and validate"),
    N_("folder of the lake (created if absent)"),
    N_("first service day YYYY-MM-DD"),
    N_("last service day YYYY-MM-DD"),
    N_("the zip file to write"),
    N_("write the store's tables to the lake"),
    N_(
        "Consume the AVL and fare topics (as `pontual listen`, writing the store), keep "
        "the live state of every vehicle, and serve GTFS-Realtime VehiclePositions, "
        "TripUpdates and Alerts, a JSON stop-arrivals API and /health over HTTP."
    ),
    N_("commit and update every S s (0.25)"),
    N_("or every N messages (default 5000)"),
    N_("HTTP bind address (127.0.0.1)"),
    N_("HTTP port (8080)"),
    N_("allowed CORS origin (default: any)"),
    N_("service date YYYY-MM-DD (default: today in the feed's zone)"),
    N_("re-read incidents every S s"),
    N_("stop after S seconds (tests, demos)"),
    N_(
        "Publish every ping of AVL_FILE as one MQTT message on "
        "{root}/avl/{operator}/{vehicle}, in event-time order, at --speed times the "
        "recorded pace."
    ),
    N_("AVL file (.csv, .parquet, .jsonl; as `ingest`)"),
    N_("times real time (1; 0 = no pause)"),
    N_("operator topic level (default: the username, or 'replay')"),
    N_("column mapping name or TOML file (as `pontual ingest --map`)"),
    N_("withhold the reported trip ids"),
    N_("publish only the first N pings"),
    N_("port (default 8501)"),
    N_("address to listen on"),
    N_(
        "open the dashboard in this machine's browser once it answers (default: only "
        "print its address; Streamlit itself always runs headless, so it never stops at "
        "its first-run e-mail prompt)"
    ),
    N_("the default; kept for older scripts"),
    N_("serve the public transparency page instead (published aggregates, no login)"),
    N_("folder for the simulated city (default: beside the store)"),
    N_("days to simulate (default 7)"),
    N_("simulator seed"),
    N_("run the pipeline and exit"),
    N_("dashboard port"),
    N_(
        "write the simulated city into the store of --store / PONTUAL_STORE (default: the "
        "demo's own, data/demo/pontual.duckdb)"
    ),
    N_("no live feed (broker, serve, replay) on the side"),
    N_("replay at S times real time (10)"),
    N_(
        "local time of the last simulated day the replay starts at (06:30, or 5 min before that day's first departure when later)"
    ),
    N_("compile the analytics kernels into the user cache"),
    N_(
        "record that this report reached SEGIMU on that day (its due day is tracked: BG "
        "art. 62-VII, Anexo I XLII)"
    ),
    # -- the MQTT consumer's lines (ingest/mqtt.py; `listen`, `serve`) -----------------------
    N_("connected to {address} (session resumed)"),
    N_("connected to {address} (session new)"),
    N_("subscription refused ({codes})"),
    N_("disconnected from the broker ({reason}); will reconnect"),
    N_(
        "batch {n}: {n_messages} messages, {n_accepted} accepted, {n_duplicate} "
        "duplicate, {n_quarantined} quarantined ({commit_ms} ms)"
    ),
    N_("broker unreachable ({error}); retrying"),
    # -- quarantine reasons (stored in English; shown translated by `ingest`, `quarantine`) ----
    N_("missing {column}"),
    N_("cannot read {column} as {kind}"),
    N_("a time (ISO 8601 with offset, local ISO 8601, or epoch seconds)"),
    N_("a date (YYYY-MM-DD)"),
    N_("yes/no"),
    N_("a number"),
    N_("a whole number"),
    N_("vehicle_id not in the fleet register (load it, or pass --accept-unknown-vehicles)"),
    N_("vehicle of another operator (the fleet register names {registered})"),
    N_("record could not be processed (internal error, see the log)"),
    N_("{column} before {year}: a clock that was never set"),
    N_("{column} more than {skew_s} s in the future (clock skew allowance)"),
    N_("lat outside -90..90 degrees"),
    N_("lon outside -180..180 degrees"),
    N_("position 0,0: the device had no GPS fix"),
    N_("stale fix: more than {age_s} s older than its snapshot"),
    N_("speed_m_s outside 0..{max_m_s} m/s"),
    N_("heading_deg outside 0..360"),
    N_("reported_direction_id not 0 or 1"),
    N_("position outside the network's area (bounding box of the stops plus {margin_m} m)"),
    N_("{column} unknown, expected one of {allowed} ({what})"),
    N_("fare_class unknown, expected one of {allowed}"),
    N_("amount outside 0..{max_amount}"),
    N_("manufacture_year outside 1950..{year}"),
    N_("n_seats negative"),
    N_("standing_area_m2 negative"),
    N_("ends_at before starts_at"),
    N_("period not YYYY, YYYY-S1/S2 or YYYY-MM (month 01..12)"),
    N_("period year outside {year}..next year"),
    N_("score outside {low}..{high} (profile quality.iqs_score_scale)"),
    N_("n_respondents negative"),
    N_("n_boardings negative"),
    N_("n_alightings negative"),
    N_(
        "valid_from before the version in force since {since}: the register's history is "
        "only extended forward (correct the newer version instead)"
    ),
    N_("key already stored with different content (conflict): {key}"),
    N_("not valid JSON: expected one JSON object a line"),
    N_("not a JSON object: expected one object a line"),
    N_("topic is not {root}/avl/{operator}/{vehicle} or {root}/fares/{operator}/{vehicle}"),
    N_("payload is empty (expected a JSON object)"),
    N_("payload larger than {limit} bytes (max_message_bytes)"),
    N_("payload is not UTF-8 text (expected a JSON object)"),
    N_("payload is not a JSON object with text/number fields"),
    N_("payload is not a JSON object (expected {...} with the documented fields)"),
    N_("field longer than {limit} bytes (max_field_bytes)"),
    N_("payload vehicle_id differs from the topic's vehicle"),
    N_("payload operator_id differs from the topic's operator"),
    N_("message could not be decoded (internal error, see the listener's log)"),
    # -- errors raised by the verbs ------------------------------------------------------------
    N_("period ends ({end}) before it starts ({start})"),
    N_("give --to on or after --from"),
    N_("demo stage '{title}' failed with exit code {code}"),
    N_("run that command alone with --debug to see why"),
    N_("--to is before --from"),
    N_("schema folder not found"),
    N_("give both --from and --to, or neither"),
    N_("give the first service day, then the last"),
    N_("--from and --to go together"),
    N_("give both service dates"),
    N_("no period given"),
    N_("e.g. --period 2026-03, --period 2026, or --from 2026-03-01 --to 2026-03-15"),
    N_("give --period or --from/--to, not both"),
    N_("unknown scope {scope}"),
    N_("system, operator:O1, lot:L1, line:T10"),
    N_("system, operator:ID, lot:ID or line:ID"),
    N_("invalid date: {text}"),
    N_("nothing to ingest for {kind}"),
    N_("give FILE... (or --url URL for avl)"),
    N_("--limit must be 0 or more"),
    N_("cannot fetch the feed: all {n} tries failed"),
    N_("check the URL and the network (each failure is shown above)"),
    N_("--to {end} is before --from {start}"),
    N_("swap the two dates"),
    N_("no operator has an annual grade for {year}"),
    N_("run `pontual indices --period {year}` first"),
    N_("invalid --delivered-on {date}: expected YYYY-MM-DD"),
    N_("e.g. --delivered-on 2026-04-20"),
    N_("no GTFS feed loaded: the live engine needs the timetable"),
    N_("load one with `pontual gtfs load PATH`"),
    N_("--date is not a date: {given}"),
    N_("write it as YYYY-MM-DD, e.g. 2026-03-03"),
    N_("--vehicles and --ping-interval must be positive"),
    N_("e.g. --vehicles 40"),
    N_("--out is a file, not a folder"),
    N_("--start must be a date YYYY-MM-DD, got {given}"),
    N_("e.g. --start 2026-03-02"),
    N_(
        "--year {year} --days-per-month {days}: expected a year YYYY and 1 to 20 working "
        "days a month"
    ),
    N_("e.g. --year 2026 --days-per-month 1"),
    N_("compiling the analytics kernels failed at `{command}`"),
    N_("run `pontual --debug warm` to see why"),
    # -- core/settings.py ------------------------------------------------------------------
    N_("no card-hashing key"),
    N_("run `pontual init` or set {name}"),
    N_("the card-hashing key file is missing, and this store's cards were hashed with it"),
    N_(
        "restore the key file from the backup (docs/key-rotation.md); a new key would "
        "make every card a new one"
    ),
    N_("the card-hashing key is {n} bytes; at least {min} are required"),
    N_("a key of {n} random bytes, hex-encoded ({chars} characters), e.g. from `pontual init`"),
    N_("--store is empty"),
    N_("give the store file's path"),
    N_(
        "{name}={years} is shorter than the longest legal horizon ({n} years: cassação, "
        "BG art. 72-VII)"
    ),
    N_("use {n} or more"),
    N_("the card-hashing key file can be read by others (mode {mode})"),
    N_("chmod 600 {path}"),
    N_("{name} must be a whole number of years"),
    N_("{name} must be hex"),
    N_("e.g. 64 hex characters (32 bytes)"),
    N_("the card-hashing key file is corrupt (expected hex text)"),
    N_("restore it from the backup (see docs/key-rotation.md)"),
    # -- core/store.py ---------------------------------------------------------------------
    N_("cannot open the store: {text}"),
    N_("the store is open for writing by another process"),
    N_("the store is open for writing by another process (PID {pid})"),
    N_(
        "one process writes the store at a time: wait for it or stop it (`pontual "
        "listen`/`serve` hold it while running); readers use the snapshot"
    ),
    N_("the store file is damaged or is not a Pontual store (not a DuckDB database)"),
    N_("restore the store from the backup, or give the right --store path"),
    N_("no permission to open the store file"),
    N_("run as the store's owner, or check the file's permissions"),
    N_("no published snapshot of the store"),
    N_("run a pipeline command (e.g. `pontual demo --no-serve`) to publish one"),
    N_("store not found"),
    N_("run `pontual demo` or `pontual init` first"),
    N_("the store path is a folder"),
    N_(
        "store schema version {current} is newer than this Pontual ({version}) knows (up "
        "to {latest})"
    ),
    N_("upgrade Pontual to open this store"),
    N_("the store is open read-only"),
    N_("the card-hashing key is not the one this store's cards were hashed with"),
    N_(
        "use the store's key file (or PONTUAL_HASH_KEY) from the backup; to change keys "
        "see docs/key-rotation.md"
    ),
    N_("store schema version {current} is older than {latest}"),
    N_("open it once with a writing command (e.g. `pontual init`) to migrate it"),
    N_("cannot create the store's folder: {text}"),
    N_("check the path given with --store (or PONTUAL_STORE)"),
    # -- core/profile.py ---------------------------------------------------------------------
    N_("unknown profile {name}"),
    N_("shipped profiles: {names}; or give a path to a .toml file"),
    N_("profile file not found"),
    N_("not valid TOML: {text}"),
    N_("not a text file: a profile is TOML in UTF-8"),
    N_("see `pontual profiles show bento-goncalves-2021` for a complete example"),
    N_("key {key}: missing key"),
    N_("key {key}: unknown key"),
    # -- core/periods.py -------------------------------------------------------------------
    N_("invalid period {text}: expected {expected}"),
    N_("give --from YYYY-MM-DD --to YYYY-MM-DD with --to on or after --from"),
    N_("invalid semester {text}: expected YYYY-1 (January-June) or YYYY-2 (July-December)"),
    N_("e.g. --half 2026-1"),
    N_("invalid period {text}: {why}"),
    N_("expected {expected}"),
    N_(
        "YYYY-MM (month), YYYY (year), YYYY-S1/YYYY-S2 (semester), YYYY-MM-DD (day) or "
        "YYYY-MM-DD..YYYY-MM-DD (range)"
    ),
    # -- gtfs/read.py and the feed's refusal ---------------------------------------------------
    N_("GTFS feed not found"),
    N_("give a .zip file or a folder of .txt"),
    N_("not a GTFS feed: expected a zip archive or a folder of .txt files"),
    N_("check that the download completed; a GTFS feed is a .zip of CSV .txt files"),
    N_(
        "{name} unpacks to more than {ratio} times its compressed size ({n} bytes "
        "compressed): refused as a zip bomb"
    ),
    N_("a GTFS feed compresses 5 to 30 times; re-export the feed"),
    N_("{name} unpacks to more than {limit} MiB (at least {size} MiB): refused"),
    N_("the feed's files unpack to more than {limit} MiB (at least {size} MiB): refused"),
    N_("a GTFS feed this large is not expected; check the archive (a zip bomb?)"),
    N_("cannot read the zip archive: {text}"),
    N_(
        "the zip archive holds a member named {name}, outside its own folder (path "
        "traversal): refused"
    ),
    N_(
        "a GTFS feed's files are plain names (stops.txt, trips.txt...); re-export the "
        "feed from its source"
    ),
    N_("GTFS feed refused, {n} error(s): {issues}"),
    N_("run `pontual gtfs validate PATH` for the full list; fix the feed and load it again"),
    N_("no GTFS feed in force on {date}"),
    N_("load a feed that covers this date with `pontual gtfs load PATH`"),
    # -- ingest/ (files, mappings, readers, brokers) ---------------------------------------------
    N_("file not found"),
    N_("a folder, not a file"),
    N_("mapping {name} is for {kind}, not {other}"),
    N_("unknown file format {suffix}"),
    N_("expected .csv, .parquet, .jsonl, .json (Olho Vivo), .pb (GTFS-RT) or .gpx"),
    N_("not a readable GPX file: {text}"),
    N_(
        "give `ingest avl` the VehiclePositions feed of the same source (TripUpdates are "
        "the vendor's predictions; `pontual serve` publishes Pontual's own)"
    ),
    N_("mapping {name} gives no column for {columns}"),
    N_('add {column} = "<source column>" under [columns] in the mapping'),
    N_("mapping {name} not found"),
    N_("shipped mappings: {names}; or give the path of a .toml mapping"),
    N_("mapping kind {kind} unknown, expected one of {kinds}"),
    N_("the file lacks the column(s) {missing} that mapping {name} reads"),
    N_("its columns are {columns}; pick another --map or fix the mapping"),
    N_("mapping is not valid TOML: {text}"),
    N_("mapping key {key}: {text}"),
    N_("see ingest/README.md for the mapping format"),
    N_("the MQTT broker refused the connection: {text}"),
    N_("check --username/--password, the password file and the ACL"),
    N_("cannot reach the MQTT broker: {text}"),
    N_(
        "the broker's certificate must be signed by the CA of --tls-ca and name --host "
        "(or pass --tls-insecure to skip the name check)"
    ),
    N_("check --host/--port, that Mosquitto is running, and the TLS options"),
    N_("the MQTT broker did not answer the connection in time"),
    N_("check that the port is an MQTT listener (TLS port needs --tls-ca)"),
    N_("the MQTT broker closed the connection"),
    N_("the MQTT broker closed the connection before answering"),
    N_("check the credentials and the broker log"),
    N_(
        "if the port is a TLS listener, give --tls-ca (the CA that signed the broker's "
        "certificate); else check the credentials and the broker log"
    ),
    N_("listener option {field}: {text}"),
    N_("see `pontual listen --help` for the accepted values"),
    N_("not an Olho Vivo /Posicao snapshot"),
    N_("snapshot without any readable fix time (ta)"),
    N_("not valid JSON: {text}"),
    N_("snapshot time hr={hr} is not HH:MM"),
    N_("ingest option {field}: {text}"),
    N_("see `pontual ingest --help` for the accepted ranges"),
    N_("cannot read as Parquet: {text}"),
    N_("expected an Apache Parquet file"),
    N_("the first line is longer than {n} MiB: not a header line"),
    N_("expected a comma-separated file whose first line names the columns"),
    N_("expected one JSON object a line, a JSON array of objects, or one object"),
    N_("JSON document larger than {n} MiB"),
    N_("write large files as JSON lines (.jsonl, one object a line)"),
    N_("JSON document is a {type}, not records"),
    N_("expected an array of objects, one per record"),
    N_("cannot read as CSV: {text}"),
    N_("expected a comma-separated file with a header line"),
    N_("cannot read the header line as CSV: {text}"),
    N_("cannot read as JSON lines: {text}"),
    N_("not UTF-8 text: the file ends in the middle of a character (truncated?)"),
    N_("JSON object with no single array of records (keys: {keys})"),
    N_(
        "expected one JSON object a line, a JSON array of objects, or one object holding "
        "one array of objects"
    ),
    N_("not a GTFS-Realtime FeedMessage: {text}"),
    N_("expected protobuf bytes of a GTFS-RT feed (VehiclePositions, TripUpdates)"),
    N_("GTFS-Realtime feed without a header"),
    N_("is this a GTFS-RT feed?"),
    # -- analytics/ -------------------------------------------------------------------------
    N_("no trip outcomes between {start} and {end}"),
    N_("run `pontual match` for those days first (or choose another --period)"),
    N_("indicator {indicator} is not traced to trips"),
    N_("traceable: {names}"),
    N_("cannot read the {what} CSV: {text}"),
    N_("the {what} CSV lacks the column(s) {missing}; expected {header}"),
    N_("first line of the file: {header}"),
    N_("header: {header}"),
    N_("{what} file not found"),
    N_("invalid {field} {value} in the {what} CSV: expected {expected}"),
    N_("{n} line(s) with this problem; header: {header}"),
    N_("repeated {key} in the {what} CSV: {values} appears more than once"),
    N_("give one line per {key}"),
    N_("staff"),
    N_("maintenance-cost"),
    N_("a non-empty id"),
    N_("a non-empty text"),
    N_("a month YYYY-MM"),
    N_("a whole number >= 0"),
    N_("an amount in reais >= 0 (decimal point, e.g. 1234.50)"),
    N_("invalid month {month}: expected YYYY-MM"),
    N_("e.g. --month 2026-03"),
    N_("unknown scope {scope}: expected operator or lot"),
    N_("two values of the taps' {column} share a 64-bit hash"),
    N_("report it: the indices cannot tell those taps apart"),
    N_("the taps changed while the indices read them"),
    N_("run the indices again"),
    N_("more than 16 million distinct values of the taps' {column}"),
    N_("no indices of {scope} {scope_id} in {year} in the store"),
    N_("run `pontual indices --period {year}` (and each month) first"),
    N_("cannot read the cost-per-km CSV: {text}"),
    N_("cost-per-km CSV lacks columns {missing}; expected {expected}"),
    N_("invalid {field} {value} in the cost-per-km CSV: expected {expected}"),
    N_("a cost >= 0"),
    N_("cannot read the population CSV: {text}"),
    N_("population CSV lacks columns {missing}; expected {expected}"),
    N_("invalid {field} {value} in the population CSV: expected {expected}"),
    N_("cannot read the grade history CSV: {text}"),
    N_("grade history lacks columns {missing}; expected {expected}"),
    N_("lake not found"),
    N_("--lake goes with --engine spark (the local engine writes the store file)"),
    N_("add --engine spark"),
    N_("the spark engine reads and writes a Parquet lake: --lake is missing"),
    N_("write the lake with `pontual export parquet --lake PATH` and pass --lake PATH"),
    N_("write one with `pontual export parquet --lake PATH`"),
    N_("write one with `pontual lake export --lake PATH`"),
    # -- success and progress lines of the verbs ------------------------------------------
    N_("feed {feed_id} is already loaded (same content): nothing to do"),
    N_("loaded feed {feed_id} (valid {start} to {end}, EPSG:{epsg}): {counts}"),
    N_("scheduled trips {start} to {end}: {n}"),
    N_("{n} warning(s); {seconds} s"),
    N_("no loaded feed covers {start} to {end}: nothing scheduled"),
    N_("feed {feed_id}: {n} scheduled trips"),
    N_("listening on {topics} (client id {client_id})"),
    N_(
        "stopped: {n_messages} messages in {n_batches} batches, {n_accepted} accepted, "
        "{n_duplicate} duplicate, {n_quarantined} quarantined"
    ),
    N_("store {path} at schema version {version}"),
    N_(
        "simulated {n_days} day(s), {n_routes} lines, {n_vehicles} vehicles in the "
        "register, {n_trips} scheduled trips ({outcomes}), {n_pings} pings, {n_taps} fare "
        "taps in {seconds} s -> {folder} (see README.md there)"
    ),
    N_("live update failed: {error}"),
    N_("live refresh failed: {error}"),
    N_(
        "serving http://{host}:{port}/gtfs-rt/vehicle-positions.pb (trip-updates.pb, "
        "alerts.pb, /api/stops/<id>/arrivals, /health) and the passengers' stop page "
        "http://{host}:{port}/paradas; listening on {topics}"
    ),
    N_(
        "stopped: {n_messages} messages, {n_accepted} accepted, {n_duplicate} duplicate, "
        "{n_quarantined} quarantined; {n_updates} live updates"
    ),
    # -- GTFS findings (gtfs/read.py, validate.py, geography.py; shown by `print_issues`) ----
    N_("looks like UTF-16 but cannot be decoded; expected UTF-8 text"),
    N_("file is UTF-16; decoded (GTFS files should be UTF-8)"),
    N_("file is not UTF-8; decoded as Latin-1 (ISO-8859-1) — check accented names"),
    N_("invalid UTF-8 byte {byte} (and not Latin-1 text either); expected UTF-8 text"),
    N_("NUL byte in the text; expected plain text"),
    N_("stray carriage return (bad line ending); read as a line break"),
    N_("mixed line endings (CRLF and LF)"),
    N_("no header line; expected comma-separated column names"),
    N_("column named twice in the header"),
    N_("header has an empty column name; that column is ignored"),
    N_("cannot be read as CSV: {error}"),
    N_("{n} cells where the header has {n_header}; extra cells ignored"),
    N_(
        "{n} row(s) have fewer cells than the header's {n_header} (first here); missing "
        "cells read as empty"
    ),
    N_("{n} blank line(s) skipped"),
    N_("and {n} more rows with the same problem"),
    N_("required column missing from the header"),
    N_("required value missing"),
    N_("'{value}' is not {expected}"),
    N_("an integer"),
    N_("a decimal number"),
    N_("a time H:MM:SS (hours may pass 24)"),
    N_("a date YYYYMMDD"),
    N_("'{value}' out of range; expected {bounds}"),
    N_("between {low} and {high}"),
    N_("at least {low}"),
    N_("a 32-bit integer"),
    N_("{n} midnight wrap(s) inside trips (first here); times after midnight read as 24:xx+"),
    N_("required file missing from the feed"),
    N_("file is empty; expected a header line and rows"),
    N_("file has a header but no rows"),
    N_("neither calendar.txt nor calendar_dates.txt in the feed; one is required"),
    N_("duplicate {label} '{value}'; each must be unique"),
    N_("'{value}' is not defined in {what}"),
    N_("calendar.txt or calendar_dates.txt"),
    N_("'{value}' is not an IANA time zone (e.g. America/Sao_Paulo)"),
    N_("agencies with different time zones; all must share one"),
    N_("agency_id missing; required when the feed has several agencies"),
    N_("column required when the feed has several agencies"),
    N_("shape_id given but shapes.txt is missing; shapes are built from the stop sequences"),
    N_(
        "no shapes.txt; each trip's shape is built from its stop sequence (planned km are "
        "then straight lines between stops)"
    ),
    N_("{n} trip(s) without shape_id (first here); their shape is built from the stop sequence"),
    N_("departure_time missing where arrival_time is given; expected both or neither"),
    N_("arrival_time missing where departure_time is given; expected both or neither"),
    N_("first and last stop of a trip must have times; this one has none"),
    N_("trip '{value}' has fewer than two stop times; expected at least two timed stops"),
    N_("departure_time before arrival_time"),
    N_(
        "time earlier than at the previous stop of the trip; expected times that never "
        "decrease along stop_sequence"
    ),
    N_("{n} trip(s) without stop times (first here); they are not scheduled"),
    N_("stop used by stop_times has no coordinates"),
    N_("coordinates out of range (latitude -90..90, longitude -180..180, not 0,0)"),
    N_("unused stop with coordinates out of range"),
    N_("stop '{value}' is not used by any trip"),
    N_("stops {ids} are at the same place (duplicate stop?)"),
    N_("end_date before start_date"),
    N_("end_time not after start_time"),
    N_(
        "frequency window of trip '{value}' starts before its previous window ends; "
        "expected windows that do not overlap"
    ),
    N_("shape '{value}' has fewer than two points; it is rebuilt from the stops"),
    N_("stop '{value}' is {place}: coordinates a device or export wrote by mistake"),
    N_("a point of shape '{value}' is {place}: coordinates written by mistake"),
    N_("near (0,0)"),
    N_("near a pole"),
    N_(
        "stop '{value}' lies far from the network, and inside it once stop_lat and "
        "stop_lon are swapped: latitude and longitude look swapped"
    ),
    N_(
        "stop '{stop}' is {dist_km} km from the nearest other stop of the feed (more than "
        "{max_km} km), too far to reach in its trips' times: misplaced?"
    ),
    N_(
        "the used stops span {width_km} km × {height_km} km (more than {max_km} km): not "
        "one city's network; the network's extent (AVL position check) leaves out {n} "
        "stop(s) far from the rest"
    ),
    N_(
        "stop '{stop}' is {dist_m} m from shape '{shape}' of trip '{trip}' (more than "
        "{max_m} m): the stop or the shape is misplaced"
    ),
    N_("no service date in the feed"),
    N_("GTFS issues"),
    N_("severity"),
    N_("file"),
    N_("line"),
    N_("column"),
    N_("message"),
    N_("error"),
    N_("warning"),
    N_("... and {n} more (`pontual gtfs validate --all`)"),
    N_("{n_errors} error(s), {n_warnings} warning(s) in {seconds} s"),
    N_("matching"),
    N_("id"),
    N_("name"),
    N_("effective from"),
    N_("values"),
    N_("defaults (to be fixed by decree)"),
    N_("({id}, version {version}, in force from {start})"),
    N_("key"),
    N_("value"),
    N_("unit"),
    N_("group"),
    N_("item"),
    N_("description"),
    N_("penalty"),
    N_("URM 1st"),
    N_("URM repeat"),
    # -- errors found uncatalogued by tests/pontual/test_errors_catalogued.py ----------------
    # core/lake.py, core/schema.py, core/settings.py, core/store.py
    N_("table {name} has no service day to partition by"),
    N_("table {name} is partitioned by service day"),
    N_("frame for table {name} lacks required column {column}"),
    N_("frame for table {name} has nulls in required columns {columns}"),
    N_("this is a bug in the job that built the frame"),
    N_("--lake is empty"),
    N_("give the lake folder's path"),
    N_("unknown snapshot mode {mode}"),
    N_("copy (the default) or months"),
    N_("{n} rows for table {name} have the same key ({key})"),
    N_(
        "this is a bug in the job that wrote them: a derived table's rows are written once "
        "per key, replacing their partition (Store.replace)"
    ),
    # analytics/ (indices' input files, matching's batches), exports/validate.py
    N_("header line: lat,lon,people,area (area is urban or rural)"),
    N_("header line: scope,scope_id,year,grade (e.g. operator,O1,2024,E)"),
    N_("invalid {field} {value} in the grade history: {expected}"),
    N_("expected a year like 2024"),
    N_("expected a grade A, B, C, D or E"),
    N_("header line: operator_id,month,cost_per_km (e.g. O1,2026-03,8.15)"),
    N_("pings without x_m/y_m and no CRS to project their lat/lon to"),
    N_("pass crs_epsg (the feed's metric CRS, feed_versions.crs_epsg)"),
    N_("a matching worker process ended before finishing its work"),
    N_(
        "the machine may have run out of memory: run again with --workers 1 or a smaller "
        "--batch-pings"
    ),
    N_("validating a TIDES export needs the 'frictionless' package"),
    N_("pip install 'pontual[tides]'"),
    # dashboard/server.py (`pontual dashboard`, `pontual demo`)
    N_("the dashboard did not answer at {url} within {timeout_s} s"),
    N_("the dashboard process exited with status {status}"),
    N_("run `pontual dashboard` in a terminal to see Streamlit's messages"),
    # pontual/context.py, live_demo.py, verbs/indices.py, verbs/match.py (the last three were
    # written in pt-BR: their pt-BR texts are the old ones)
    N_("this command writes the store; with --lake the lake is only read"),
    N_(
        "run it without --lake (on the file) and export with `pontual export parquet`, or use "
        "`pontual match --engine spark` to write the lake"
    ),
    N_("the live server exited with code {code} before answering"),
    N_("the live server did not answer within {timeout_s} s"),
    N_("run `pontual serve` alone with --debug to see why"),
    N_("the MQTT broker did not open port {port} within {timeout_s} s"),
    N_("Mosquitto is not installed: the live part of the demo needs it"),
    N_("make sysdeps (or apt-get install mosquitto mosquitto-clients), or pontual demo --no-live"),
    N_("--months goes with a year period"),
    N_("e.g. --period 2026 --months"),
    N_("--months reads the store file, not a lake"),
    N_("run one `pontual indices --period YYYY-MM` per month over the lake"),
    N_("--batch-pings must be at least 1"),
    # -- dashboard/auth.py (`pontual dashboard` refuses before starting) -------------------
    N_("PONTUAL_DASHBOARD_AUTH={mode} is not a dashboard authentication mode"),
    N_("use one of: {modes}"),
    N_("PONTUAL_DASHBOARD_AUTH=oidc needs the provider's settings"),
    N_(
        "set PONTUAL_DASHBOARD_SECRETS to a Streamlit secrets file with an [auth] section "
        "(see deploy/README.md)"
    ),
    N_(
        "the dashboard without authentication cannot listen on {address}: anyone on the "
        "network would see infractions, plates and cases"
    ),
    N_(
        "create an account (`pontual users add NAME --role planejamento`) or set "
        "PONTUAL_DASHBOARD_AUTH=oidc; for the public page use `pontual dashboard --public`"
    ),
    # -- verbs' errors first written in pt-BR, now English ids ---------------------------------
    N_("--speed must be 0 or more"),
    N_("e.g. --speed 10"),
    N_("no position with a vehicle, a time and coordinates"),
    N_("check the columns (vehicle_id, event_at, lat, lon) or use --map"),
    N_("cannot connect to the broker {address}: {text}"),
    N_("start Mosquitto or correct the address"),
    N_("HTTP port {port} on {host} is not free ({why})"),
    N_("choose another port with --http-port, or stop the process using it"),
    N_("no terminal to ask for the password"),
    N_("use --password-stdin and send the password on stdin"),
    N_("the passwords do not match"),
    N_("--limit must be 1 or more"),
    N_("the demo does not write the simulated city into {store} without --into-store"),
    N_("run `pontual demo` without --store (it uses {store}) or add --into-store"),
    N_("folder {folder} exists and was not made by the demo: it will not be overwritten"),
    N_("choose another folder with --sample FOLDER"),
    N_("the TIDES export does not validate: {text}"),
    N_("no case for suggestion {ref}"),
    N_("record it as a case or dismiss it first"),
    # -- ingest: per-file summary ---------------------------------------------------------
    N_(
        "{name}: {n_read} read, {n_accepted} stored, {n_duplicate} duplicate, "
        "{n_quarantined} quarantined"
    ),
    N_("warning: {text}"),
    N_("reason"),
    N_("records"),
    N_("example"),
    N_("record {key}"),
    N_("quarantined in {name}, by reason"),
    # -- pontual quarantine -----------------------------------------------------------------
    N_("quarantine: {n} records"),
    N_("source"),
    N_("record"),
    N_("table"),
    N_("field"),
    N_("original"),
    # -- ingest: notes from ingest/ -------------------------------------------------------
    N_("no GTFS stops loaded: positions not checked against the network's area"),
    N_("fleet register empty: vehicle ids not checked (run `pontual ingest vehicles`)"),
    N_("columns taken by their common names: {pairs}"),
    N_("times read as {how}"),
    N_("columns not loaded (no place in the {kind} layout): {names}"),
    N_("epoch seconds"),
    N_("epoch milliseconds"),
    N_("ISO 8601 with offset"),
    N_("ISO 8601 local time"),
    N_("layout of mapping {name} ({description})"),
    N_("JSON document: {n} records ({where})"),
    N_("no records read: {why}"),
    N_("the file has a header line and no records"),
    N_("the file is empty (only blanks)"),
    N_("the reader found no record in it"),
    N_(
        "GPX: {n} route(s) ({n_points} points) not loaded: a route is a planned path, not "
        "a vehicle's trace"
    ),
    N_(
        "GPX: {n} waypoint(s) not loaded: a waypoint is a place, not a vehicle's trace "
        "(record inspections with `pontual ingest inspections`)"
    ),
    N_("cannot fetch the feed ({url}): {error}; next try in {wait_s} s"),
    # -- ingest: refusals (InputError texts from ingest/, translated by the verb) ------------
    N_(
        "the file's columns do not match the {kind} layout: no column for {lacking}. "
        "Columns found: {found}; expected: {expected} (optional: {optional})"
    ),
    N_("save this mapping as vendor.toml and pass --map vendor.toml:{toml}"),
    N_("the header names the column(s) {names} more than once"),
    N_("rename or remove the repeated column, so that each name says one thing"),
    N_("the file is {name} text, not UTF-8"),
    N_("convert it: iconv -f {name} -t UTF-8 FILE > FILE.utf8"),
    N_("binary data, not text (a NUL byte at byte {n})"),
    N_("is this the right file? expected a UTF-8 text file"),
    N_("not UTF-8 text: byte {byte} at byte {n} cannot be read"),
    N_(
        "save the file as UTF-8, or convert it: iconv -f latin1 -t UTF-8 FILE > FILE.utf8 "
        "(if it is Latin-1/Windows-1252)"
    ),
    N_(
        "a GTFS-Realtime {feed} feed ({held}, no vehicle positions): it carries no "
        "vehicle positions, so it cannot be loaded as AVL"
    ),
    N_("{n} trip updates"),
    N_("{n} alerts"),
    N_("GPX track {n} has no name, so its vehicle is unknown"),
    N_("give the vehicle's fleet number: pontual ingest avl FILE.gpx --vehicle N"),
    N_("JSON array element {n} is not an object"),
    N_("not JSON lines: none of the first {n} lines is a JSON object"),
    N_("{what}; the {n} records read before it were taken back"),
    # -- raw days archived to the lake, pruned past the retention, verified (docs/retention.md)
    N_("move the raw days (pings and taps) before a date from the store into the lake"),
    N_(
        "Each raw day before --before is written to the lake, digested there, and leaves "
        "the store only when the lake copy gives the day's recorded reference digest."
    ),
    N_("first day kept in the store YYYY-MM-DD"),
    N_("--before {date} is after today ({today}): a day still receiving data cannot be archived"),
    N_("archive closed periods only (docs/retention.md)"),
    N_("folder of the lake (default: the global --lake)"),
    N_(
        "delete from the lake the raw days past the retention and without legal hold (a "
        "dry run by default)"
    ),
    N_(
        "Lists the lake's raw days before --before that may be deleted (past the "
        "retention, held by no case) and those kept with the reason; deletes only with "
        "--apply."
    ),
    N_("delete only days before YYYY-MM-DD"),
    N_("delete (without it, a dry run that only lists)"),
    N_("no lake given"),
    N_("give --lake PATH (the lake folder)"),
    N_("nothing to archive before {date}"),
    N_("{days} day(s) archived to {lake}: {rows} raw rows left the store"),
    N_(
        "the lake copy of {days} does not give the recorded reference digest: those "
        "days stay in the store"
    ),
    N_("run `pontual verify` to see which raw data changed"),
    N_("{day}: may be deleted"),
    N_("{day}: kept: legal hold of case(s) {cases}"),
    N_("{day}: kept: retention of {years} years (until {until})"),
    N_("dry run: nothing deleted (--apply deletes the {n} day(s))"),
    N_("{n} day(s) of raw data deleted from {lake}"),
    N_("verifying the lake {lake} alone"),
    N_("digests recorded for {n} new table-day(s)"),
    N_("{day} ({table}: archived, its lake partition is missing)"),
    N_("{day} ({table}: archived, its lake files cannot be read)"),
    N_("{day} ({table}: archived, yet the store has rows of it again)"),
    N_("{day} ({table}: {n} rows recorded, {n_now} now)"),
    N_(", legal hold of case(s) {cases}"),
    N_("{ok} of {n} table-day(s) check out"),
    N_("{n} table-day(s) deleted past the retention (digest kept)"),
    N_("raw data changed on {days}"),
    N_("raw data missing from the store and the lake on {days}"),
    N_("{day} (legal hold of case(s) {cases})"),
    N_("evidence package changed in cases {cases}"),
    N_("restore the day from the backup; the recorded digest is the reference (art. 77)"),
    N_("no changes"),
    N_(
        "the raw data of {n} day(s) of the period ({first} to {last}) were archived to "
        "the lake: computing on the store would leave them out"
    ),
    N_("compute that period over the lake (global --lake), or leave those days out"),
    # -- pontual cases / users / audit (pontual/verbs/cases.py, users.py) ---------------
    N_("infraction cases: from suggestion to sanction (art. 63-73)"),
    N_("case number (or the suggestion's infraction_key)"),
    N_("account that performs the act"),
    N_("date of the act (default: today, local time)"),
    N_("reason / grounds"),
    N_("attached file (repeatable)"),
    N_("cases the account can see"),
    N_("only the cases in this state"),
    N_("one case, its deadlines and its acts"),
    N_("cases with an overdue act of the administration"),
    N_("reference date (default: today)"),
    N_("draw up the infraction notice (inspector; art. 68 §1)"),
    N_("notice number"),
    N_("date and time of the fact (default: the suggestion's)"),
    N_("place: stop (stop_id)"),
    N_("place: latitude WGS 84"),
    N_("place: longitude WGS 84"),
    N_("plate (default: from the fleet register)"),
    N_("provision violated (default: the suggestion's)"),
    N_("notice sent to the operator (inspector; art. 68 §2)"),
    N_("written defence of the operator (art. 69)"),
    N_("judgement (authority; art. 69)"),
    N_("appeal of the operator (art. 69-III)"),
    N_("close the case (after an appeal: --appeal)"),
    N_("decision on the appeal"),
    N_("dismiss the suggestion, with the reason"),
    N_("legal hold of the case's evidence (planning)"),
    N_("lift the hold"),
    N_("local accounts (roles: planejamento, fiscal, ...)"),
    N_("create an account (password by prompt or stdin)"),
    N_("account name"),
    N_("the account's operator (role operadora)"),
    N_("planning account that creates it (except the first account)"),
    N_("read the password from standard input"),
    N_(
        "account without a password, that signs in only through the OpenID Connect provider (name = e-mail)"
    ),
    N_("list the accounts"),
    N_("audit log (role planejamento)"),
    N_("planning account that consults it"),
    N_("most recent lines (default 200)"),
    N_("expected a date and time YYYY-MM-DDTHH:MM (local time) or with a time zone, got {text}"),
    *CASE_MESSAGES,
)
"""The English ids of the command line's messages and of the texts made below it that
it translates (`translate`); their pt-BR texts are in the one catalogue (`core.texts`)."""


def __getattr__(name: str) -> dict[str, str]:
    if name == "CATALOGUE":  # English id -> pt-BR text, as this module's dict was
        texts = catalogue(DEFAULT_LANG).singular
        return {msgid: texts.get(msgid, msgid) for msgid in MESSAGES}
    raise AttributeError(f"module 'pontual.messages' has no attribute {name!r}")


@cache
def _ids() -> frozenset[str]:
    return frozenset(MESSAGES)


# The words `core.errors.where` and the raising code put at the start of a location's parts
# ("stops.txt, line 3, column stop_lat"; "option --limit"; "store x.duckdb, table trips").
_WHERE_WORDS = (
    N_("line"),
    N_("field"),
    N_("column"),
    N_("columns"),
    N_("key"),
    N_("option"),
    N_("store"),
    N_("table"),
    N_("tables"),
    N_("user"),
    N_("command line"),
    N_("case"),
    N_("suggestion"),
)
_WHERE_PART = re.compile(
    r"(^|, )("
    + "|".join(sorted(map(re.escape, _WHERE_WORDS), key=len, reverse=True))
    + r")(?=[ ,]|$)"
)


def translate_where(text: str) -> str:
    """A location ("file, line N, field F", "option --x") in the chosen language: only the
    words naming its parts are translated; file names, fields and values stay as they are."""
    if language() == "en":
        return text
    text = _WHERE_PART.sub(lambda m: f"{m[1]}{gettext(m[2])}", text)
    return text.replace(" and ", gettext(" and "))


@cache
def _patterns() -> list[tuple[re.Pattern[str], str]]:
    """The catalogue's templates as patterns, the most specific first (`compile_templates`)."""
    return compile_templates(MESSAGES)


def translate(text: str) -> str:
    """An English text produced below the command line, in the chosen language: the first
    catalogue template it matches, its fields translated in turn; else the text as it is."""
    if language() == "en":
        return text
    if text in _ids():
        return gettext(text)
    matched = match_template(text, _patterns())
    if matched is None:
        return text
    msgid, found = matched
    return gettext(msgid, **{k: _translate_field(k, v) for k, v in found.items()})


# A field named for a quantity by its unit (`{dist_m}`, `{max_km}`, `{size_mib}`) holding a
# number is written with pt-BR digits; `{issues}` holds GTFS findings ("where: message; ...").
_QUANTITY_FIELD = re.compile(r"(^|_)(km|m|s|mib)$")
_NUMBER = re.compile(r"-?\d+(?:\.(\d+))?")
_ISSUE = re.compile(r"^(?P<where>[^:;]+?): (?P<message>.+)$", re.DOTALL)


def _translate_field(name: str, value: str) -> str:
    if name == "issues":
        return "; ".join(translate_issue(part) for part in value.split("; "))
    if name == "fields":  # a list of catalogue texts (`cases.errors.AUTO_FIELDS`)
        return "; ".join(translate(part) for part in value.split("; "))
    number = _NUMBER.fullmatch(value)
    if number and _QUANTITY_FIELD.search(name):
        from core.pt_br import to_number

        return to_number(float(value), decimals=len(number[1] or ""))
    return translate(value)


def translate_issue(text: str) -> str:
    """A finding written "file, line N, column C: message" (`gtfs.errors.GtfsIssue`) in the
    chosen language: its location's words and its message."""
    found = _ISSUE.match(text)
    if found is None or language() == "en":
        return translate(text)
    return f"{translate_where(found['where'])}: {translate(found['message'])}"
