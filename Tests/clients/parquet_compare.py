"""Compares an `epf export` directory with the SQLite database it was written from, through pyarrow and DuckDB.

For every table of DIR/_manifest.json: the files on disk are those the manifest lists with its row counts;
pyarrow (a Hive-partitioned dataset) and DuckDB (read_parquet) each read the table's files with the column
types the manifest names; and each reader's rows equal the database table's rows, value for value (as a
multiset: row order is not part of the contract), after the documented conversions: DECIMAL(18,3) from the
stored decimal text exactly, TIMESTAMP from export_date milliseconds or the stored ISO 8601 text.

Prints "ok TABLES ROWS" and exits 0, or prints the differences (at most 20) and exits 1.
With --aggregate, prints instead DuckDB's "storefront_id,count,sum,max" lines of application_price (sum and
max of retail_price as exact decimals), ordered by storefront_id.
Usage: parquet_compare.py DATABASE DIR [--aggregate]
"""
import collections
import datetime
import decimal
import json
import os
import sqlite3
import sys

import duckdb
import pyarrow.dataset as ds

decimal.getcontext().prec = 40
problems = []
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def problem(text):
    problems.append(text)
    if len(problems) >= 20:
        finish()


def finish():
    for text in problems:
        print(text)
    sys.exit(1 if problems else 0)


def expected_value(kind, value):
    """A stored SQLite value as the export must have written it."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if kind == "INT64":
        return int(value)
    if kind.startswith("TIMESTAMP"):
        if isinstance(value, int):
            return value
        parsed = datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
        return int((parsed - EPOCH).total_seconds()) * 1000
    if kind.startswith("DECIMAL"):
        return decimal.Decimal(str(value)).quantize(decimal.Decimal("0.001"))
    if kind == "DOUBLE":
        return float(value)
    return str(value)


def read_value(kind, value):
    if value is None:
        return None
    if kind.startswith("TIMESTAMP") and isinstance(value, datetime.datetime):
        delta = value - EPOCH
        return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
    if kind.startswith("DECIMAL"):
        return decimal.Decimal(value).quantize(decimal.Decimal("0.001"))
    return value


ARROW_TYPES = {"INT64": "int64", "DOUBLE": "double", "STRING": "string",
               "TIMESTAMP(UTC, MILLIS)": "timestamp[ms, tz=UTC]", "DECIMAL(18,3)": "decimal128(18, 3)"}
DUCK_TYPES = {"INT64": "BIGINT", "DOUBLE": "DOUBLE", "STRING": "VARCHAR",
              "TIMESTAMP(UTC, MILLIS)": "TIMESTAMP WITH TIME ZONE", "DECIMAL(18,3)": "DECIMAL(18,3)"}


def main():
    database, directory = sys.argv[1], sys.argv[2]
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    if "--aggregate" in sys.argv:
        rows = connection.execute(
            "SELECT storefront_id, count(*), sum(retail_price), max(retail_price) FROM read_parquet(?) "
            "GROUP BY 1 ORDER BY 1", [os.path.join(directory, "application_price", "*", "*.parquet")]).fetchall()
        for row in rows:
            print(",".join(str(value) for value in row))
        return
    with open(os.path.join(directory, "_manifest.json")) as handle:
        manifest = json.load(handle)
    sqlite = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    sqlite.text_factory = bytes
    total = 0
    for table in manifest["tables"]:
        name = table["name"]
        columns = table["columns"]
        kinds = [column["type"] for column in columns]
        names = [column["name"] for column in columns]
        files = [os.path.join(directory, entry["path"]) for entry in table["files"]]
        on_disk = []
        for root, _, found in os.walk(os.path.join(directory, name)):
            on_disk += [os.path.join(root, file) for file in found]
        if sorted(on_disk) != sorted(files):
            problem(f"{name}: files on disk {sorted(on_disk)} != manifest {sorted(files)}")
        if sum(entry["rows"] for entry in table["files"]) != table["rows"]:
            problem(f"{name}: the manifest's file rows do not add up to {table['rows']}")
        quoted = ", ".join(f'"{column}"' for column in names)
        where = ""
        if manifest.get("since") and "export_date" in names:
            since = datetime.datetime.strptime(manifest["since"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
            where = f" WHERE export_date >= {int((since - EPOCH).total_seconds()) * 1000}"
        stored = sqlite.execute(f'SELECT {quoted} FROM "{name}"{where}').fetchall()
        want = collections.Counter(tuple(expected_value(k, v) for k, v in zip(kinds, row)) for row in stored)
        total += len(stored)
        if len(stored) != table["rows"]:
            problem(f"{name}: manifest says {table['rows']} rows, the database has {len(stored)}")

        dataset = ds.dataset(files, format="parquet")
        for column, kind in zip(names, kinds):
            field = dataset.schema.field(column)
            if str(field.type) != ARROW_TYPES[kind]:
                problem(f"{name}.{column}: pyarrow type {field.type}, manifest {kind}")
        arrow = dataset.to_table(columns=names).to_pylist()
        got = collections.Counter(tuple(read_value(k, row[c]) for c, k in zip(names, kinds)) for row in arrow)
        if got != want:
            extra = list((got - want).items())[:3]
            missing = list((want - got).items())[:3]
            problem(f"{name}: pyarrow rows differ: extra {extra}, missing {missing}")

        described = connection.execute("DESCRIBE SELECT * FROM read_parquet(?)", [files]).fetchall()
        types = {row[0]: row[1] for row in described}
        for column, kind in zip(names, kinds):
            if types.get(column) != DUCK_TYPES[kind]:
                problem(f"{name}.{column}: duckdb type {types.get(column)}, manifest {kind}")
        select = ", ".join(f'epoch_ms("{c}")' if k.startswith("TIMESTAMP") else f'"{c}"'
                           for c, k in zip(names, kinds))
        duck = connection.execute(f"SELECT {select} FROM read_parquet(?)", [files]).fetchall()
        got = collections.Counter(tuple(read_value(k, v) for k, v in zip(kinds, row)) for row in duck)
        if got != want:
            extra = list((got - want).items())[:3]
            missing = list((want - got).items())[:3]
            problem(f"{name}: duckdb rows differ: extra {extra}, missing {missing}")
    if problems:
        finish()
    print(f"ok {len(manifest['tables'])} {total}")


main()
