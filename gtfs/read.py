"""Read a GTFS feed (zip or folder) into typed Polars frames, collecting issues as it goes.

Every file is read with all columns as text, then typed column by column following
`gtfs.spec`. Reading never raises for bad content: unreadable values become null and an issue
(file, line, column, what was expected) is recorded; `validate_feed` adds the cross-file checks.
Only a path that is neither a folder nor a zip raises (`InputError`).

Text handling: UTF-8 with or without BOM; UTF-16 (BOM or NUL-interleaved) is decoded with a
warning; text that is not UTF-8 but reads as Latin-1 letters (ISO-8859-1 without C1 control
bytes, what Brazilian exports often are) is decoded with a warning; anything else is an error,
so no mojibake reaches the store. CRLF is accepted; stray CRs and mixed line endings are
normalised with a warning; NUL bytes are an error; blank lines are skipped with a warning.
"""

from __future__ import annotations

import csv
import hashlib
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

import polars as pl

from core.errors import InputError, where
from core.settings import ArchiveLimits
from gtfs.errors import ERROR, WARNING, GtfsIssue, Severity
from gtfs.spec import FILE_SPECS, FieldSpec, FileSpec

LINE = "_line"  # 1-based line of the row in its file (header = line 1)

# How many rows of one kind of problem in one column are listed individually.
MAX_ROWS_PER_PROBLEM = 20

_EXPECTED = {
    "int": "an integer",
    "float": "a decimal number",
    "time": "a time H:MM:SS (hours may pass 24)",
    "date": "a date YYYYMMDD",
}


@dataclass(frozen=True)
class Feed:
    """A read feed: one typed frame per GTFS file present, plus what reading found.

    Each frame has the file's columns (typed per `gtfs.spec`; unknown columns kept as text) and
    `_line`, the row's line in its file. `sha256` hashes every file's bytes (the feed's identity).
    """

    source: str
    tables: Mapping[str, pl.DataFrame]
    issues: tuple[GtfsIssue, ...] = ()
    sha256: str = ""
    files: tuple[str, ...] = field(default=())

    def has(self, name: str) -> bool:
        return name in self.tables

    def get(self, name: str) -> pl.DataFrame | None:
        return self.tables.get(name)

    def __getitem__(self, name: str) -> pl.DataFrame:
        return self.tables[name]


# -- sources ---------------------------------------------------------------------------------


def read_feed_files(path: str | Path, limits: ArchiveLimits | None = None) -> dict[str, bytes]:
    """The raw bytes of every *.txt of a feed folder or zip, by file name.

    A zip is unpacked in bounded steps under `limits` (sizes and compression ratio, see
    `core.settings.ArchiveLimits`); an archive past them is an `InputError` naming the file
    and the limit, and no more of it is read.
    """
    path = Path(path)
    limits = limits or ArchiveLimits()
    if not path.exists():
        raise InputError(
            "GTFS feed not found", where=where(path), hint="give a .zip file or a folder of .txt"
        )
    if path.is_dir():
        return {p.name: p.read_bytes() for p in sorted(path.glob("*.txt")) if p.is_file()}
    if not zipfile.is_zipfile(path):
        raise InputError(
            "not a GTFS feed: expected a zip archive or a folder of .txt files",
            where=where(path),
            hint="check that the download completed; a GTFS feed is a .zip of CSV .txt files",
        )
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                _check_member_name(path, info.filename)
            infos = [
                i
                for i in zf.infolist()
                if i.filename.endswith(".txt") and not i.filename.startswith("__MACOSX")
            ]
            # Feeds zipped with their folder keep files one level down: take the shallowest.
            depth = min((i.filename.count("/") for i in infos), default=0)
            chosen = sorted(
                (i for i in infos if i.filename.count("/") == depth), key=lambda i: i.filename
            )
            # The sizes the archive declares are checked first (cheap); the unpacking checks
            # the real ones, as a crafted archive may declare anything.
            for info in chosen:
                _check_entry(path, info.filename, info.file_size, info.compress_size, limits)
            declared = sum(i.file_size for i in chosen)
            if declared > limits.max_total_bytes:
                raise _too_large(path, "the feed's files unpack", declared, limits.max_total_bytes)
            out: dict[str, bytes] = {}
            total = 0
            for info in chosen:
                data = _unpack(zf, info, path, limits, limits.max_total_bytes - total)
                total += len(data)
                out[PurePosixPath(info.filename).name] = data
            return out
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InputError(f"cannot read the zip archive: {exc}", where=where(path)) from exc


_UNPACK_STEP_BYTES = 4 * 1024**2


def _unpack(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, limits: ArchiveLimits, room: int
) -> bytes:
    """One entry, unpacked in steps, stopping at the first limit passed."""
    parts: list[bytes] = []
    size = 0
    with zf.open(info) as fh:
        while chunk := fh.read(_UNPACK_STEP_BYTES):
            size += len(chunk)
            _check_entry(path, info.filename, size, info.compress_size, limits)
            if size > room:
                raise _too_large(path, "the feed's files unpack", size, limits.max_total_bytes)
            parts.append(chunk)
    return b"".join(parts)


def _check_member_name(path: Path, name: str) -> None:
    """Refuse a member whose name climbs out of the archive's folder (``../../evil.txt``,
    ``/etc/passwd``, ``C:\\x``): a feed never needs one, and a tool that unpacks the archive
    as it is would write outside its folder (zip slip)."""
    posix = name.replace("\\", "/")
    if posix.startswith("/") or ".." in posix.split("/") or PureWindowsPath(name).drive:
        raise InputError(
            f"the zip archive holds a member named {name}, outside its own folder "
            "(path traversal): refused",
            where=where(path),
            hint="a GTFS feed's files are plain names (stops.txt, trips.txt...); re-export the "
            "feed from its source",
        )


def _check_entry(path: Path, name: str, size: int, compressed: int, limits: ArchiveLimits) -> None:
    if size > limits.max_entry_bytes:
        raise _too_large(path, f"{name} unpacks", size, limits.max_entry_bytes)
    if size >= limits.ratio_floor_bytes and size > limits.max_ratio * max(compressed, 1):
        raise InputError(
            f"{name} unpacks to more than {limits.max_ratio:g} times its compressed size "
            f"({compressed} bytes compressed): refused as a zip bomb",
            where=where(path),
            hint="a GTFS feed compresses 5 to 30 times; re-export the feed",
        )


def _too_large(path: Path, what: str, size: int, limit: int) -> InputError:
    return InputError(
        f"{what} to more than {limit / 1024**2:,.0f} MiB "
        f"(at least {size / 1024**2:,.0f} MiB): refused",
        where=where(path),
        hint="a GTFS feed this large is not expected; check the archive (a zip bomb?)",
    )


def compute_sha256(files: Mapping[str, bytes]) -> str:
    """Hash of the feed's files (names and bytes, in name order): the same feed, the same hash."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


# -- text ------------------------------------------------------------------------------------


def _line_of(text: str | bytes, offset: int) -> int:
    sep: str | bytes = "\n" if isinstance(text, str) else b"\n"
    return text.count(sep, 0, offset) + 1  # type: ignore[arg-type]


def _looks_utf16(data: bytes) -> bool:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    head = data[:200]
    # ASCII text in UTF-16 has a NUL in every other byte
    return len(head) >= 8 and head[1::2].count(0) > 0.8 * len(head[1::2])


def _is_latin1_text(data: bytes) -> bool:
    """True when the non-ASCII bytes are all printable ISO-8859-1 (no C1 controls 0x80-0x9F)."""
    return not re.search(rb"[\x80-\x9f]", data)


def decode_text(name: str, data: bytes) -> tuple[bytes | None, list[GtfsIssue]]:
    """UTF-8 bytes with LF line endings, or None when the file cannot be read as text."""
    issues: list[GtfsIssue] = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text: str | None = None
    if _looks_utf16(data):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            issues.append(
                GtfsIssue(
                    ERROR,
                    name,
                    None,
                    None,
                    "looks like UTF-16 but cannot be decoded; expected UTF-8 text",
                )
            )
            return None, issues
        issues.append(
            GtfsIssue(
                WARNING, name, None, None, "file is UTF-16; decoded (GTFS files should be UTF-8)"
            )
        )
        text = text.lstrip("\ufeff")
    else:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = _line_of(data, exc.start)
            if _is_latin1_text(data):
                text = data.decode("latin-1")
                issues.append(
                    GtfsIssue(
                        WARNING,
                        name,
                        line,
                        None,
                        "file is not UTF-8; decoded as Latin-1 (ISO-8859-1) — check accented names",
                    )
                )
            else:
                issues.append(
                    GtfsIssue(
                        ERROR,
                        name,
                        line,
                        None,
                        f"invalid UTF-8 byte 0x{data[exc.start]:02x} (and not Latin-1 text either); "
                        "expected UTF-8 text",
                    )
                )
                return None, issues
    raw: bytes = text.encode("utf-8") if text is not None else data
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = _line_of(raw, nul)
        start = raw.rfind(b"\n", 0, nul) + 1
        header = next(csv.reader([raw.split(b"\n", 1)[0].decode("utf-8", "replace")]), [])
        col_idx = raw.count(b",", start, nul)
        column = header[col_idx].strip() if col_idx < len(header) else None
        issues.append(
            GtfsIssue(ERROR, name, line, column, "NUL byte in the text; expected plain text")
        )
        return None, issues
    if b"\r" in raw:
        n_crlf = raw.count(b"\r\n")
        raw = raw.replace(b"\r\n", b"\n")
        n_lf = raw.count(b"\n") - n_crlf
        stray = raw.find(b"\r")
        if stray >= 0:
            issues.append(
                GtfsIssue(
                    WARNING,
                    name,
                    _line_of(raw, stray),
                    None,
                    "stray carriage return (bad line ending); read as a line break",
                )
            )
            raw = raw.replace(b"\r", b"\n")
        elif n_crlf and n_lf > 1:
            issues.append(GtfsIssue(WARNING, name, None, None, "mixed line endings (CRLF and LF)"))
    return raw, issues


# -- parsing ---------------------------------------------------------------------------------


def _field_counts(raw: bytes) -> pl.Series:
    """Number of fields on each line after the header (quote-aware, one line at a time)."""
    lines = pl.read_csv(
        raw,
        has_header=False,
        separator="\x01",
        quote_char=None,
        infer_schema=False,
        new_columns=["l"],
    )["l"].slice(1)
    # quoted text (which may hold commas) is taken out first; most files have no quote at all
    # and skip the regex (when/then would run it on every line)
    text = (
        pl.when(pl.lit(lines).str.contains('"', literal=True))
        .then(pl.lit(lines).str.replace_all(r'"(?:[^"]|"")*"', ""))
        .otherwise(pl.lit(lines))
        if b'"' in raw
        else pl.lit(lines)
    )
    return (
        pl.select(text.str.count_matches(",", literal=True).fill_null(-1) + 1)
        .to_series()
        .alias("n_fields")
    )


def parse_csv(name: str, raw: bytes) -> tuple[pl.DataFrame | None, list[GtfsIssue]]:
    """All columns as stripped text (empty -> null), plus `_line`; rows of blank lines dropped."""
    issues: list[GtfsIssue] = []
    first = raw.split(b"\n", 1)[0]
    header = [h.strip() for h in next(csv.reader([first.decode("utf-8")]), [])]
    if not any(header):
        issues.append(
            GtfsIssue(ERROR, name, 1, None, "no header line; expected comma-separated column names")
        )
        return None, issues
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        issues.append(GtfsIssue(ERROR, name, 1, dupes[0], "column named twice in the header"))
        return None, issues
    empty_names = [i for i, h in enumerate(header) if not h]
    if empty_names:
        issues.append(
            GtfsIssue(
                WARNING, name, 1, None, "header has an empty column name; that column is ignored"
            )
        )
        header = [h or f"_unnamed_{i}" for i, h in enumerate(header)]
    try:
        df = pl.read_csv(
            raw,
            has_header=False,
            skip_rows=1,
            schema={h: pl.String() for h in header},
            truncate_ragged_lines=True,
            row_index_name=LINE,
            row_index_offset=2,
            quote_char='"',
            missing_columns="insert",
        )
    except pl.exceptions.PolarsError as exc:
        issues.append(GtfsIssue(ERROR, name, None, None, f"cannot be read as CSV: {exc}"))
        return None, issues
    # values are stripped of surrounding blanks; an empty value is a missing one (null)
    stripped = [pl.col(h).str.strip_chars() for h in header]
    df = df.with_columns(
        pl.col(LINE).cast(pl.Int64()),
        *[
            pl.when(c.str.len_bytes() > 0).then(c).alias(h)
            for c, h in zip(stripped, header, strict=True)
        ],
    )
    counts = _field_counts(raw)
    if counts.len() == df.height:
        n = len(header)
        all_null = df.select(pl.all_horizontal(pl.col(header).is_null())).to_series(0)
        blank = counts.is_null() | (all_null & (counts <= 1))
        df = df.with_columns(counts.alias("_n_fields"), blank.alias("_blank"))
        bad = df.filter(~pl.col("_blank") & (pl.col("_n_fields") != n))
        if bad.height:
            # Ragged rows are warnings: a misaligned value still fails its column's type check.
            more = bad.filter(pl.col("_n_fields") > n)
            less = bad.filter(pl.col("_n_fields") < n)
            for row in more.head(MAX_ROWS_PER_PROBLEM).iter_rows(named=True):
                issues.append(
                    GtfsIssue(
                        WARNING,
                        name,
                        row[LINE],
                        None,
                        f"{row['_n_fields']} cells where the header has {n}; extra cells ignored",
                    )
                )
            if less.height:
                # Trailing optional cells left out are common and harmless: one line per file.
                issues.append(
                    GtfsIssue(
                        WARNING,
                        name,
                        int(less[LINE][0]),
                        None,
                        f"{less.height} row(s) have fewer cells than the header's {n} "
                        "(first here); missing cells read as empty",
                    )
                )
        blanks = df.filter(pl.col("_blank"))
        if blanks.height:
            issues.append(
                GtfsIssue(
                    WARNING,
                    name,
                    int(blanks[LINE][0]),
                    None,
                    f"{blanks.height} blank line(s) skipped",
                )
            )
        df = df.filter(~pl.col("_blank")).drop("_n_fields", "_blank")
    else:
        # Quoted fields spanning lines: line numbers are row-based from here on.
        df = df.filter(~pl.all_horizontal(pl.col(header).is_null()))
    return df, issues


# -- typing ----------------------------------------------------------------------------------


def rows_issues(
    bad: pl.DataFrame,
    severity: Severity,
    file: str,
    column: str | None,
    message: str,
    value_column: str | None = None,
) -> list[GtfsIssue]:
    """One issue per offending row (the first few), then one summarising the rest.

    `message` may use {value}, the text of `value_column` (default `column`) in that row.
    """
    out = []
    value_column = value_column or column
    for row in bad.head(MAX_ROWS_PER_PROBLEM).iter_rows(named=True):
        value = row.get(value_column) if value_column else None
        out.append(GtfsIssue(severity, file, row[LINE], column, message.format(value=value)))
    if bad.height > MAX_ROWS_PER_PROBLEM:
        out.append(
            GtfsIssue(
                severity,
                file,
                None,
                column,
                f"and {bad.height - MAX_ROWS_PER_PROBLEM} more rows with the same problem",
            )
        )
    return out


def _typed_expr(spec: FieldSpec) -> pl.Expr:
    """The column parsed to its kind (Int64 / Float64 / seconds / Date); null when unparseable.

    Times are parsed by position ("H:MM:SS", hours of any width) rather than by regex: the
    same strictness, several times faster on stop_times.
    """
    c = pl.col(spec.name)
    if spec.kind == "int":
        return c.str.strip_prefix("+").cast(pl.Int64(), strict=False)
    if spec.kind == "float":
        f = c.cast(pl.Float64(), strict=False)
        return pl.when(f.is_finite()).then(f)
    if spec.kind == "time":
        hh = c.str.head(-6).cast(pl.Int64(), strict=False)
        mm = c.str.slice(-5, 2).cast(pl.Int64(), strict=False)
        ss = c.str.tail(2).cast(pl.Int64(), strict=False)
        shaped = (
            (c.str.slice(-3, 1) == ":")
            & (c.str.slice(-6, 1) == ":")
            & c.str.len_bytes().is_between(7, 9)
            & (hh >= 0)
            & (mm < 60)
            & (ss < 60)
            & (mm >= 0)
            & (ss >= 0)
        )
        return pl.when(shaped).then(hh * 3600 + mm * 60 + ss)
    if spec.kind == "date":
        d = c.str.strptime(pl.Date(), "%Y%m%d", strict=False)
        return pl.when(c.str.len_bytes() == 8).then(d)
    return c


_OUT_DTYPE = {"int": pl.Int32(), "time": pl.Int32(), "float": pl.Float64(), "date": pl.Date()}


def type_table(spec: FileSpec, df: pl.DataFrame) -> tuple[pl.DataFrame, list[GtfsIssue]]:
    """Cast the text columns of one file to their GTFS kinds; bad values -> null + an error."""
    issues: list[GtfsIssue] = []
    name = spec.name
    for fs in spec.fields:
        if fs.required and fs.name not in df.columns:
            issues.append(
                GtfsIssue(ERROR, name, 1, fs.name, "required column missing from the header")
            )
    present = [fs for fs in spec.fields if fs.name in df.columns]
    typed = [fs for fs in present if fs.kind != "str"]
    # parse every typed column once, beside its text (needed for the messages)
    work = df.with_columns([_typed_expr(fs).alias(f"__t:{fs.name}") for fs in typed])
    checks: list[pl.Expr] = []
    for fs in present:
        c = pl.col(fs.name)
        if fs.required:
            checks.append(c.is_null().alias(f"missing:{fs.name}"))
        if fs.kind == "str":
            continue
        t = pl.col(f"__t:{fs.name}")
        checks.append((c.is_not_null() & t.is_null()).alias(f"bad:{fs.name}"))
        lo = fs.min_value if fs.min_value is not None else float("-inf")
        hi = fs.max_value if fs.max_value is not None else float("inf")
        if fs.kind in ("int", "time"):
            lo, hi = max(lo, -(2**31)), min(hi, 2**31 - 1)  # what Int32 holds
        if lo > float("-inf") or hi < float("inf"):
            checks.append((t.is_not_null() & ~t.is_between(lo, hi)).alias(f"range:{fs.name}"))
    flags = work.select(checks) if checks and work.height else pl.DataFrame()
    any_flag = flags.select(pl.all().any()).row(0, named=True) if flags.width else {}
    for key, hit in any_flag.items():
        if not hit:
            continue
        kind, col = key.split(":", 1)
        found_fs = spec.field(col)
        assert found_fs is not None
        fs = found_fs
        bad_rows = df.filter(flags[key])
        if kind == "missing":
            issues += rows_issues(bad_rows, ERROR, name, col, "required value missing")
        elif kind == "bad":
            issues += rows_issues(
                bad_rows, ERROR, name, col, f"'{{value}}' is not {_EXPECTED[fs.kind]}"
            )
        else:
            if fs.max_value is not None and fs.min_value is not None:
                bounds = f"between {fs.min_value:g} and {fs.max_value:g}"
            elif fs.min_value is not None:
                bounds = f"at least {fs.min_value:g}"
            else:
                bounds = "a 32-bit integer"
            issues += rows_issues(
                bad_rows, ERROR, name, col, f"'{{value}}' out of range; expected {bounds}"
            )
    out = work.with_columns(
        [
            (
                pl.when(pl.col(f"__t:{fs.name}").is_between(-(2**31), 2**31 - 1)).then(
                    pl.col(f"__t:{fs.name}")
                )
                if fs.kind in ("int", "time")
                else pl.col(f"__t:{fs.name}")
            )
            .cast(_OUT_DTYPE[fs.kind])
            .alias(fs.name)
            for fs in typed
        ]
    )
    return out.drop([f"__t:{fs.name}" for fs in typed]), issues


# -- repairs -------------------------------------------------------------------------------

# A time more than this before the previous stop's is a clock that wrapped at midnight.
_WRAP_GAP_S = 12 * 3600
_DAY_S = 24 * 3600


def fix_midnight_wrap(stop_times: pl.DataFrame) -> tuple[pl.DataFrame, list[GtfsIssue]]:
    """Read times written as 00:xx after a trip passed midnight as 24:xx (with a warning).

    Many real feeds (Porto Alegre, Fortaleza) restart the clock at midnight inside a trip; GTFS
    wants 24:02:00, not 00:02:00. A drop of more than 12 h from the previous timed stop of the
    same trip is such a wrap; a smaller backwards step stays an error for `validate_feed`.
    """
    cols = set(stop_times.columns)
    if (
        not {"trip_id", "stop_sequence", "arrival_time", "departure_time"} <= cols
        or not stop_times.height
    ):
        return stop_times, []
    arr, dep = pl.col("arrival_time"), pl.col("departure_time")
    s = stop_times.with_row_index("_row").sort("trip_id", "stop_sequence")
    prev = dep.fill_null(arr).shift(1).forward_fill().over("trip_id")
    s = s.with_columns((arr.fill_null(dep) < prev - _WRAP_GAP_S).fill_null(False).alias("_wrap"))
    if not s["_wrap"].any() and not s.select((dep < arr - _WRAP_GAP_S).any()).item():
        return stop_times, []
    wrapped = s.filter(pl.col("_wrap") | (dep < arr - _WRAP_GAP_S).fill_null(False))
    first = int(wrapped.select(pl.col(LINE).min()).item())
    n = int(s["_wrap"].sum())
    offset = pl.col("_wrap").cast(pl.Int32).cum_sum().over("trip_id") * _DAY_S
    s = s.with_columns((arr + offset).alias("arrival_time"), (dep + offset).alias("departure_time"))
    s = s.with_columns(
        pl.when((dep < arr - _WRAP_GAP_S).fill_null(False))
        .then(dep + _DAY_S)
        .otherwise(dep)
        .cast(pl.Int32)
        .alias("departure_time"),
        arr.cast(pl.Int32),
    )
    warning = GtfsIssue(
        WARNING,
        "stop_times.txt",
        first,
        "arrival_time",
        f"{n} midnight wrap(s) inside trips (first here); times after midnight read as 24:xx+",
    )
    return s.sort("_row").drop("_row", "_wrap"), [warning]


# -- the feed --------------------------------------------------------------------------------


def read_feed_bytes(files: Mapping[str, bytes], source: str = "<memory>") -> Feed:
    """Read a feed from its files' bytes (see `read_feed`)."""
    issues: list[GtfsIssue] = []
    tables: dict[str, pl.DataFrame] = {}
    for spec in FILE_SPECS.values():
        data = files.get(spec.name)
        if data is None:
            if spec.required:
                issues.append(
                    GtfsIssue(ERROR, spec.name, None, None, "required file missing from the feed")
                )
            continue
        if not data.strip(b" \t\r\n\xef\xbb\xbf"):
            sev = ERROR if spec.required else WARNING
            issues.append(
                GtfsIssue(
                    sev, spec.name, None, None, "file is empty; expected a header line and rows"
                )
            )
            continue
        raw, found = decode_text(spec.name, data)
        issues += found
        if raw is None:
            continue
        df, found = parse_csv(spec.name, raw)
        issues += found
        if df is None:
            continue
        if df.height == 0:
            sev = ERROR if spec.required else WARNING
            issues.append(GtfsIssue(sev, spec.name, None, None, "file has a header but no rows"))
        df, found = type_table(spec, df)
        issues += found
        if spec.table == "stop_times":
            df, found = fix_midnight_wrap(df)
            issues += found
        tables[spec.table] = df
    if "calendar.txt" not in files and "calendar_dates.txt" not in files:
        issues.append(
            GtfsIssue(
                ERROR,
                "calendar.txt",
                None,
                None,
                "neither calendar.txt nor calendar_dates.txt in the feed; one is required",
            )
        )
    return Feed(
        source=source,
        tables=tables,
        issues=tuple(issues),
        sha256=compute_sha256(files),
        files=tuple(sorted(files)),
    )


def read_feed(path: str | Path) -> Feed:
    """Read the GTFS feed at `path` (a .zip or a folder of .txt files).

    Returns every known file as a typed frame (see `Feed`) with the issues found while reading;
    raises `InputError` only when `path` is not a feed container at all.
    """
    return read_feed_bytes(read_feed_files(path), source=str(path))


__all__ = ["LINE", "Feed", "read_feed", "read_feed_bytes"]
