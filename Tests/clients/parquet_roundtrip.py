"""Reads Parquet files written by epf's EPFParquet with pyarrow and DuckDB and compares every value and type with
the JSON the writer's test wrote beside each file (NAME.parquet, NAME.expected.json).

expected.json: {"columns": [{"name": ..., "type": "int64|timestamp|decimal|double|string"}], "rows": [[...]]}
with int64 and timestamp (milliseconds) as JSON integers, decimal as exact text ("-12.345"), double as the
hexadecimal of its IEEE bits ("7ff8000000000000"), string as text, NULL as null.

Prints "ok FILES ROWS" and exits 0, or prints each difference (at most 20) and exits 1.
Usage: parquet_roundtrip.py DIR
"""
import decimal
import glob
import json
import os
import struct
import sys

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

decimal.getcontext().prec = 40
problems = []


def problem(text):
    problems.append(text)
    if len(problems) >= 20:
        report()


def report():
    for text in problems:
        print(text)
    sys.exit(1)


def double_bits(value):
    return struct.pack(">d", value).hex()


def normal_expected(kind, value):
    if value is None:
        return None
    if kind == "decimal":
        return decimal.Decimal(value)
    if kind == "double":
        return value
    return value


def normal_read(kind, value):
    """A value as pyarrow's or DuckDB's Python object, in the expected JSON's terms."""
    if value is None:
        return None
    if kind == "timestamp":
        # datetime (timezone-aware UTC) -> milliseconds since 1970
        delta = value - __import__("datetime").datetime(1970, 1, 1, tzinfo=__import__("datetime").timezone.utc)
        return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
    if kind == "double":
        return double_bits(value)
    if kind == "decimal":
        return decimal.Decimal(value)
    return value


ARROW_TYPES = {
    "int64": lambda t: t == pa.int64(),
    "timestamp": lambda t: t == pa.timestamp("ms", tz="UTC") or t == pa.timestamp("ms", tz="+00:00"),
    "decimal": lambda t: t == pa.decimal128(18, 3),
    "double": lambda t: t == pa.float64(),
    "string": lambda t: t in (pa.string(), pa.large_string(), pa.string_view()),
}
DUCK_TYPES = {
    "int64": "BIGINT",
    "timestamp": "TIMESTAMP WITH TIME ZONE",
    "decimal": "DECIMAL(18,3)",
    "double": "DOUBLE",
    "string": "VARCHAR",
}


def main():
    directory = sys.argv[1]
    files = sorted(glob.glob(os.path.join(directory, "*.parquet")))
    total = 0
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    for path in files:
        with open(path[: -len(".parquet")] + ".expected.json") as handle:
            expected = json.load(handle)
        columns = expected["columns"]
        rows = expected["rows"]
        total += len(rows)
        name = os.path.basename(path)
        # pyarrow
        table = pq.read_table(path)
        if table.num_rows != len(rows):
            problem(f"{name}: pyarrow read {table.num_rows} rows, expected {len(rows)}")
            continue
        for index, column in enumerate(columns):
            field = table.schema.field(index)
            if field.name != column["name"] or not ARROW_TYPES[column["type"]](field.type):
                problem(f"{name}: pyarrow column {index} is {field.name} {field.type}, expected {column}")
                continue
            values = table.column(index).to_pylist()
            for row, value in enumerate(values):
                got = normal_read(column["type"], value)
                want = normal_expected(column["type"], rows[row][index])
                if got != want:
                    problem(f"{name}: pyarrow row {row} column {column['name']}: {got!r} != {want!r}")
        # DuckDB
        described = connection.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()
        for index, column in enumerate(columns):
            if described[index][0] != column["name"] or described[index][1] != DUCK_TYPES[column["type"]]:
                problem(f"{name}: duckdb column {index} is {described[index][:2]}, expected {column}")
        # TIMESTAMP WITH TIME ZONE as epoch milliseconds (DuckDB's Python objects of it need pytz).
        select = ", ".join(f'epoch_ms("{c["name"]}")' if c["type"] == "timestamp" else f'"{c["name"]}"'
                           for c in columns)
        result = connection.execute(f"SELECT {select} FROM read_parquet(?)", [path]).fetchall()
        if len(result) != len(rows):
            problem(f"{name}: duckdb read {len(result)} rows, expected {len(rows)}")
            continue
        for row, values in enumerate(result):
            for index, column in enumerate(columns):
                kind = column["type"]
                got = values[index] if kind == "timestamp" else normal_read(kind, values[index])
                want = normal_expected(column["type"], rows[row][index])
                if got != want:
                    problem(f"{name}: duckdb row {row} column {column['name']}: {got!r} != {want!r}")
        # The footer's statistics, as pyarrow reads them: min <= every value <= max.
        metadata = pq.ParquetFile(path).metadata
        for group in range(metadata.num_row_groups):
            for index, column in enumerate(columns):
                stats = metadata.row_group(group).column(index).statistics
                if stats is None or not stats.has_min_max or column["type"] in ("double", "timestamp", "decimal"):
                    continue
                start = sum(metadata.row_group(g).num_rows for g in range(group))
                present = [rows[r][index] for r in range(start, start + metadata.row_group(group).num_rows)
                           if rows[r][index] is not None]
                if column["type"] == "string":
                    present = [v.encode() for v in present]
                    low, high = stats.min, stats.max
                    low = low.encode() if isinstance(low, str) else low
                    high = high.encode() if isinstance(high, str) else high
                else:
                    low, high = stats.min, stats.max
                if present and (low != min(present) or high != max(present)):
                    problem(f"{name}: row group {group} column {column['name']} statistics {low!r}..{high!r}, "
                            f"values {min(present)!r}..{max(present)!r}")
    if problems:
        report()
    print(f"ok {len(files)} {total}")


main()
