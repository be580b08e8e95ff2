#!/usr/bin/env python3
"""Writes the projects of the fixture-reading benchmark (docs/performance.md, "Reading
fixtures"): one source, one model, and fixtures that only give events.

  bench/fixtures.py OUT

makes OUT/none (no fixtures: the fixed cost), OUT/small (2,000 fixtures of ten events,
flow style), OUT/block (the same events in block style) and OUT/large (one fixture of
200,000 events). Deterministic.
"""
import os
import random
import sys

SOURCES = """sources:
  orders:
    connector: kafka
    topic: orders
    format: json
    event_time: ordered_at
    watermark: 5s
    schema:
      order_id: int64
      customer_id: int64
      amount: decimal(12,2)
      status: string
      ordered_at: timestamp
"""

PROJECT = """name: bench-fixtures
version: 1

models:
  paid:
    materialized: append
"""

MODEL = """SELECT order_id, customer_id, amount
FROM source('orders')
WHERE status <> 'cancelled'
"""


def event(rng, i):
    return (
        i,
        rng.randint(1, 500),
        "%d.%02d" % (rng.randint(0, 999), rng.randint(0, 99)),
        rng.choice(["paid", "shipped", "cancelled"]),
        "2026-08-30T%02d:%02d:%02d.%03dZ" % (i // 3600000 % 24, i // 60000 % 60, i // 1000 % 60, i % 1000),
    )


def flow(e):
    return "  - {order_id: %d, customer_id: %d, amount: %s, status: '%s', ordered_at: \"%s\"}\n" % e


def block(e):
    return (
        "  - order_id: %d\n    customer_id: %d\n    amount: %s\n    status: %s\n    ordered_at: \"%s\"\n"
        % e
    )


def project(path, fixtures):
    os.makedirs(os.path.join(path, "models"), exist_ok=True)
    os.makedirs(os.path.join(path, "tests"), exist_ok=True)
    for name, text in [("sources.yml", SOURCES), ("streamform.yml", PROJECT), ("models/paid.sql", MODEL)]:
        with open(os.path.join(path, name), "w") as f:
            f.write(text)
    for name, text in fixtures:
        with open(os.path.join(path, "tests", name), "w") as f:
            f.write(text)


def fixture(rng, start, count, style):
    rows = "".join(style(event(rng, start + i)) for i in range(count))
    return "model: paid\n\ngiven:\n" + rows + "\nexpect: []\n"


def main():
    out = sys.argv[1]
    rng = random.Random(29)
    project(os.path.join(out, "none"), [])
    project(os.path.join(out, "small"), [("t%05d.yml" % n, fixture(rng, n * 10, 10, flow)) for n in range(2000)])
    project(os.path.join(out, "block"), [("t%05d.yml" % n, fixture(rng, n * 10, 10, block)) for n in range(2000)])
    project(os.path.join(out, "large"), [("large.yml", fixture(rng, 0, 200000, flow))])


main()
