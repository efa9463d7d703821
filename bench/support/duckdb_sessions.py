"""The DuckDB peer of bench/cli.rb: the same windows as the window_machines
command, in SQL, from the same JSON lines to a CSV file.

    python duckdb_sessions.py sessions GAP_MS INPUT.jsonl OUTPUT.csv
    python duckdb_sessions.py tumbling SIZE_MS INPUT.jsonl OUTPUT.csv

sessions: per user, a new session starts where an event follows the user's
previous one by more than GAP_MS (a difference of exactly GAP_MS stays in the
session); columns user, first, last, count, sum_amount. tumbling: per user
and window [start, start + SIZE_MS); columns user, start, end, count. Prints
{"engine_seconds": ...}: the query from reading the input to the output
written, without starting Python or loading duckdb.
"""

import json
import sys
import time

import duckdb

EVENTS = """
    read_json($input, format = 'newline_delimited',
              columns = {'user': 'VARCHAR', 'ts': 'BIGINT', 'amount': 'BIGINT'})
"""

QUERIES = {
    "sessions": f"""
        WITH marked AS (
            SELECT "user", ts, amount,
                   CASE WHEN ts - lag(ts) OVER (PARTITION BY "user" ORDER BY ts) > $width
                        THEN 1 ELSE 0 END AS break
            FROM {EVENTS}
        ), numbered AS (
            -- The default frame takes in events at the same ts, so they share a session.
            SELECT *, sum(break) OVER (PARTITION BY "user" ORDER BY ts) AS session FROM marked
        )
        SELECT "user", min(ts) AS "first", max(ts) AS "last", count(*) AS "count",
               sum(amount) AS sum_amount
        FROM numbered GROUP BY "user", session
    """,
    "tumbling": f"""
        SELECT "user", ts - ts % $width AS "start", ts - ts % $width + $width AS "end",
               count(*) AS "count"
        FROM {EVENTS} GROUP BY "user", ts - ts % $width
    """,
}


def main(kind, width, source, target):
    connection = duckdb.connect()
    started = time.perf_counter()
    connection.execute(
        f"COPY ({QUERIES[kind]}) TO $output (FORMAT csv, HEADER)",
        {"input": source, "width": int(width), "output": target},
    )
    print(json.dumps({"engine_seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main(*sys.argv[1:])
