//! The plan diff's rule tables (docs/plan-diff.md), one case per row, on hand-made manifests: each case edits a copy of one
//! base application and asserts the classification and every reason of one node.
//!
//! The base application has four models:
//! - `totals`: source `orders` → filter (WHERE) → aggregate by `[customer_id, region]` →
//!   filter (HAVING) → project → upsert sink to topic `totals`;
//! - `big`: reads `totals` → filter → upsert sink to topic `big` (a stateless model over an
//!   updating one);
//! - `regions`: reads `totals` → aggregate by `[region]` → upsert sink without a destination;
//! - `events`: source `clicks` → filter → append sink to topic `events`.

use super::*;
use crate::identity::sha256_hex;
use crate::manifest::MANIFEST_VERSION;

fn col(name: &str, ty: &str) -> Column {
    Column {
        name: name.into(),
        ty: ty.into(),
    }
}

fn keyed(keys: &[&str], accumulators: &[(&str, &str)], retention: &str) -> StateEntry {
    let accs: Vec<Column> = accumulators.iter().map(|(n, t)| col(n, t)).collect();
    let fingerprint = format!(
        "aggregate key=[{}] accumulators={} retention={retention}",
        keys.join(", "),
        columns(&accs)
    );
    StateEntry::Keyed {
        keys: keys.iter().map(|k| k.to_string()).collect(),
        accumulators: accs,
        retention: retention.into(),
        window: None,
        retracting: false,
        bounds: None,
        ranking: None,
        frame: None,
        digest: sha256_hex(&fingerprint),
    }
}

/// Edits the keyed state of `totals::aggregate::0` (keys, accumulators, retention) and
/// recomputes its digest, as lowering would.
fn edit_state(m: &mut Manifest, f: impl FnOnce(&mut Vec<String>, &mut Vec<Column>, &mut String)) {
    let node = at(m, "totals::aggregate::0");
    let StateEntry::Keyed {
        keys,
        accumulators,
        retention,
        ..
    } = &mut node.state
    else {
        panic!("totals::aggregate::0 is keyed");
    };
    f(keys, accumulators, retention);
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let accs: Vec<(&str, &str)> = accumulators
        .iter()
        .map(|a| (a.name.as_str(), a.ty.as_str()))
        .collect();
    let state = keyed(&keys, &accs, retention);
    node.state = state;
}

fn upsert(key: &[&str]) -> ChangelogEntry {
    ChangelogEntry::Upsert {
        key: key.iter().map(|k| k.to_string()).collect(),
    }
}

fn node(
    id: &str,
    inputs: &[&str],
    definition: &str,
    schema: Vec<Column>,
    changelog: ChangelogEntry,
    state: StateEntry,
) -> NodeEntry {
    let mut parts = id.split("::");
    let model = parts.next().unwrap().to_string();
    let operator = parts.next().unwrap().to_string();
    NodeEntry {
        id: id.into(),
        model,
        operator,
        inputs: inputs.iter().map(|i| i.to_string()).collect(),
        definition: definition.into(),
        schema_digest: sha256_hex(&columns(&schema)),
        schema,
        boundedness: "unbounded".into(),
        changelog,
        state,
        time: None,
    }
}

fn model(name: &str, materialized: &str, key: &[&str]) -> ModelEntry {
    ModelEntry {
        name: name.into(),
        materialized: materialized.into(),
        key: key.iter().map(|k| k.to_string()).collect(),
        output: format!("{name}::sink::0"),
    }
}

fn base() -> Manifest {
    let orders = || {
        vec![
            col("amount", "decimal(38,9)"),
            col("customer_id", "int64"),
            col("price", "decimal(10,2)"),
            col("qty", "int32"),
            col("region", "string"),
        ]
    };
    let agg_schema = || {
        vec![
            col("customer_id", "int64"),
            col("region", "string"),
            col("sum(amount)", "decimal(38,9)"),
            col("count(*)", "int64"),
            col("min(qty)", "int32"),
            col("min(price)", "decimal(10,2)"),
        ]
    };
    let totals_schema = || {
        vec![
            col("customer_id", "int64"),
            col("region", "string"),
            col("total", "decimal(38,9)"),
            col("orders", "int64"),
        ]
    };
    let key = || upsert(&["customer_id", "region"]);
    let state = || {
        keyed(
            &["customer_id", "region"],
            &[
                ("sum(amount)", "decimal(38,9)"),
                ("count(*)", "int64"),
                ("min(qty)", "int32"),
                ("min(price)", "decimal(10,2)"),
            ],
            "unbounded",
        )
    };
    let nodes = vec![
        node(
            "totals::source::0",
            &[],
            "orders (kafka orders)",
            orders(),
            ChangelogEntry::Append,
            StateEntry::Stateless,
        ),
        node(
            "totals::filter::0",
            &["totals::source::0"],
            "(amount > 0)",
            orders(),
            ChangelogEntry::Append,
            StateEntry::Stateless,
        ),
        node(
            "totals::aggregate::0",
            &["totals::filter::0"],
            "key=[customer_id, region] aggregates=[sum(amount), count(*), min(qty), min(price)]",
            agg_schema(),
            key(),
            state(),
        ),
        node(
            "totals::filter::1",
            &["totals::aggregate::0"],
            "(count(*) > 1)",
            agg_schema(),
            key(),
            StateEntry::Stateless,
        ),
        node(
            "totals::project::0",
            &["totals::filter::1"],
            "customer_id, region, sum(amount) AS total, count(*) AS orders",
            totals_schema(),
            key(),
            StateEntry::Stateless,
        ),
        node(
            "totals::sink::0",
            &["totals::project::0"],
            "upsert kafka totals",
            totals_schema(),
            key(),
            StateEntry::Stateless,
        ),
        node(
            "big::filter::0",
            &["totals::sink::0"],
            "(total > 100)",
            totals_schema(),
            key(),
            StateEntry::Stateless,
        ),
        node(
            "big::sink::0",
            &["big::filter::0"],
            "upsert kafka big",
            totals_schema(),
            key(),
            StateEntry::Stateless,
        ),
        node(
            "regions::aggregate::0",
            &["totals::sink::0"],
            "key=[region] aggregates=[sum(total)]",
            vec![col("region", "string"), col("sum(total)", "decimal(38,9)")],
            upsert(&["region"]),
            keyed(&["region"], &[("sum(total)", "decimal(38,9)")], "unbounded"),
        ),
        node(
            "regions::sink::0",
            &["regions::aggregate::0"],
            "upsert",
            vec![col("region", "string"), col("sum(total)", "decimal(38,9)")],
            upsert(&["region"]),
            StateEntry::Stateless,
        ),
        node(
            "events::source::0",
            &[],
            "clicks (kafka clicks)",
            vec![col("url", "string")],
            ChangelogEntry::Append,
            StateEntry::Stateless,
        ),
        node(
            "events::filter::0",
            &["events::source::0"],
            "(url IS NOT NULL)",
            vec![col("url", "string")],
            ChangelogEntry::Append,
            StateEntry::Stateless,
        ),
        node(
            "events::sink::0",
            &["events::filter::0"],
            "append kafka events",
            vec![col("url", "string")],
            ChangelogEntry::Append,
            StateEntry::Stateless,
        ),
    ];
    let mut manifest = Manifest {
        manifest_version: MANIFEST_VERSION,
        application_digest: String::new(),
        models: vec![
            model("totals", "upsert", &["customer_id", "region"]),
            model("big", "upsert", &["customer_id", "region"]),
            model("regions", "upsert", &["region"]),
            model("events", "append", &[]),
        ],
        nodes,
    };
    manifest.application_digest = manifest.compute_digest();
    manifest
}

fn at<'a>(m: &'a mut Manifest, id: &str) -> &'a mut NodeEntry {
    m.nodes.iter_mut().find(|n| n.id == id).expect(id)
}

fn remove(m: &mut Manifest, id: &str) {
    let removed = m.nodes.iter().position(|n| n.id == id).expect(id);
    let inputs = m.nodes.remove(removed).inputs;
    for n in &mut m.nodes {
        if n.inputs == [id.to_string()] {
            n.inputs = inputs.clone();
        }
    }
}

fn insert_after(m: &mut Manifest, after: &str, mut new: NodeEntry) {
    let i = m.nodes.iter().position(|n| n.id == after).expect(after);
    for n in &mut m.nodes {
        if n.inputs == [after.to_string()] {
            n.inputs = vec![new.id.clone()];
        }
    }
    new.inputs = vec![after.to_string()];
    m.nodes.insert(i + 1, new);
}

/// Gives a node another id, and its reader the new input.
fn renumber(m: &mut Manifest, from: &str, to: &str) {
    for n in &mut m.nodes {
        if n.id == from {
            n.id = to.into();
        }
        for i in &mut n.inputs {
            if i == from {
                *i = to.into();
            }
        }
    }
}

fn rename_model(m: &mut Manifest, old: &str, new: &str) {
    let swap = |s: &mut String| {
        if let Some(rest) = s.strip_prefix(&format!("{old}::")) {
            *s = format!("{new}::{rest}");
        }
    };
    for n in &mut m.nodes {
        swap(&mut n.id);
        n.inputs.iter_mut().for_each(swap);
        if n.model == old {
            n.model = new.into();
        }
    }
    for e in &mut m.models {
        if e.name == old {
            e.name = new.into();
            swap(&mut e.output);
        }
    }
}

/// The classification and every reason of one node in `diff`, or `None` when it is SAFE.
fn verdict_of(diff: &PlanDiff, id: &str) -> Option<(Classification, Vec<String>)> {
    diff.models
        .iter()
        .flat_map(|m| &m.nodes)
        .find(|n| n.id == id)
        .map(|n| {
            (
                n.classification,
                n.reasons
                    .iter()
                    .map(|r| format!("{}: {}", r.classification, r.reason))
                    .collect(),
            )
        })
}

struct Case {
    row: &'static str,
    edit: fn(&mut Manifest),
    node: &'static str,
    expect: Option<(Classification, &'static [&'static str])>,
}

use Classification::*;

const STATELESS: &str = "COMPATIBLE: stateless; no stored value is affected";

fn cases() -> Vec<Case> {
    vec![
        // A keyed node present on both sides.
        Case {
            row: "keyed: nothing changed, nothing upstream changed",
            edit: |_| {},
            node: "totals::aggregate::0",
            expect: None,
        },
        Case {
            row: "keyed: grouping key columns changed",
            edit: |m| edit_state(m, |keys, _, _| drop(keys.pop())),
            node: "totals::aggregate::0",
            expect: Some((
                StateIncompatible,
                &["STATE INCOMPATIBLE: the grouping key changed; existing state cannot be reused"],
            )),
        },
        Case {
            row: "keyed: grouping key order changed",
            edit: |m| edit_state(m, |keys, _, _| keys.reverse()),
            node: "totals::aggregate::0",
            expect: Some((
                StateIncompatible,
                &["STATE INCOMPATIBLE: the grouping key changed; existing state cannot be reused"],
            )),
        },
        Case {
            row: "keyed: accumulator added",
            edit: |m| {
                edit_state(m, |_, accs, _| {
                    accs.push(col("max(amount)", "decimal(38,9)"))
                })
            },
            node: "totals::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: accumulator `max(amount)` added; it starts empty for every existing key, replay history to fill it",
                ],
            )),
        },
        Case {
            row: "keyed: accumulator removed",
            edit: |m| edit_state(m, |_, accs, _| drop(accs.remove(1))),
            node: "totals::aggregate::0",
            expect: Some((
                StateMigrationRequired,
                &[
                    "STATE MIGRATION REQUIRED: accumulator `count(*)` removed; its stored values are dropped, the others continue",
                ],
            )),
        },
        Case {
            row: "keyed: accumulators reordered, same set",
            edit: |m| edit_state(m, |_, accs, _| accs.swap(0, 1)),
            node: "totals::aggregate::0",
            expect: Some((
                StateMigrationRequired,
                &[
                    "STATE MIGRATION REQUIRED: accumulators reordered; stored values are kept under the new layout",
                ],
            )),
        },
        Case {
            row: "keyed: accumulator widened losslessly (int32 to int64)",
            edit: |m| edit_state(m, |_, accs, _| accs[2].ty = "int64".into()),
            node: "totals::aggregate::0",
            expect: Some((
                StateMigrationRequired,
                &["STATE MIGRATION REQUIRED: accumulator `min(qty)` widens from int32 to int64"],
            )),
        },
        Case {
            row: "keyed: accumulator widened losslessly (larger precision and scale)",
            edit: |m| edit_state(m, |_, accs, _| accs[3].ty = "decimal(12,4)".into()),
            node: "totals::aggregate::0",
            expect: Some((
                StateMigrationRequired,
                &[
                    "STATE MIGRATION REQUIRED: accumulator `min(price)` widens from decimal(10,2) to decimal(12,4)",
                ],
            )),
        },
        Case {
            row: "keyed: accumulator type changed otherwise (another family)",
            edit: |m| edit_state(m, |_, accs, _| accs[2].ty = "float64".into()),
            node: "totals::aggregate::0",
            expect: Some((
                StateIncompatible,
                &[
                    "STATE INCOMPATIBLE: accumulator `min(qty)` changes from int32 to float64; stored values cannot be converted",
                ],
            )),
        },
        Case {
            row: "keyed: accumulator type changed otherwise (more scale, fewer integral digits)",
            edit: |m| edit_state(m, |_, accs, _| accs[0].ty = "decimal(38,12)".into()),
            node: "totals::aggregate::0",
            expect: Some((
                StateIncompatible,
                &[
                    "STATE INCOMPATIBLE: accumulator `sum(amount)` changes from decimal(38,9) to decimal(38,12); stored values cannot be converted",
                ],
            )),
        },
        Case {
            row: "keyed: retention changed",
            edit: |m| edit_state(m, |_, _, retention| *retention = "30d".into()),
            node: "totals::aggregate::0",
            expect: Some((
                StateMigrationRequired,
                &[
                    "STATE MIGRATION REQUIRED: retention changes from unbounded to 30d; timers change, stored values do not",
                ],
            )),
        },
        Case {
            row: "keyed: own state unchanged, an upstream filter's definition changed",
            edit: |m| at(m, "totals::filter::0").definition = "(amount > 10)".into(),
            node: "totals::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: input definition changed upstream at `totals::filter::0`; existing state was accumulated under the previous definition",
                ],
            )),
        },
        Case {
            row: "keyed: own state unchanged, the source reads another topic",
            edit: |m| at(m, "totals::source::0").definition = "orders (kafka orders-v2)".into(),
            node: "totals::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: input definition changed upstream at `totals::source::0`; existing state was accumulated under the previous definition",
                ],
            )),
        },
        Case {
            row: "keyed: own state unchanged, an upstream filter removed",
            edit: |m| remove(m, "totals::filter::0"),
            node: "totals::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: input definition changed upstream at `totals::filter::0`; existing state was accumulated under the previous definition",
                ],
            )),
        },
        Case {
            row: "keyed: several rows apply, the most severe wins and every reason is kept",
            edit: |m| {
                edit_state(m, |_, accs, _| {
                    accs.remove(1);
                    accs.push(col("max(amount)", "decimal(38,9)"));
                })
            },
            node: "totals::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: accumulator `max(amount)` added; it starts empty for every existing key, replay history to fill it",
                    "STATE MIGRATION REQUIRED: accumulator `count(*)` removed; its stored values are dropped, the others continue",
                ],
            )),
        },
        Case {
            row: "keyed: own state unchanged, it now reads another model",
            edit: |m| at(m, "regions::aggregate::0").inputs = vec!["big::sink::0".into()],
            node: "regions::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: input definition changed upstream at `big::sink::0`; existing state was accumulated under the previous definition",
                ],
            )),
        },
        Case {
            row: "keyed: own state changed and an upstream filter changed, both reasons",
            edit: |m| {
                edit_state(m, |_, accs, _| drop(accs.remove(1)));
                at(m, "totals::filter::0").definition = "(amount > 10)".into();
            },
            node: "totals::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "STATE MIGRATION REQUIRED: accumulator `count(*)` removed; its stored values are dropped, the others continue",
                    "BACKFILL REQUIRED: input definition changed upstream at `totals::filter::0`; existing state was accumulated under the previous definition",
                ],
            )),
        },
        Case {
            row: "keyed: a grouping column's type changed",
            edit: |m| {
                for id in ["totals::source::0", "totals::filter::0"] {
                    at(m, id).schema[1].ty = "int32".into();
                }
                at(m, "totals::aggregate::0").schema[0].ty = "int32".into();
            },
            node: "totals::aggregate::0",
            expect: Some((
                StateIncompatible,
                &[
                    "STATE INCOMPATIBLE: grouping column `customer_id` changes from int64 to int32; stored keys cannot be found under the new type",
                    "BACKFILL REQUIRED: input definition changed upstream at `totals::filter::0`; existing state was accumulated under the previous definition",
                ],
            )),
        },
        Case {
            row: "keyed: its WHERE removed while the HAVING takes over the WHERE's ordinal",
            edit: |m| {
                remove(m, "totals::filter::0");
                renumber(m, "totals::filter::1", "totals::filter::0");
            },
            node: "totals::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: input definition changed upstream at `totals::filter::0`; existing state was accumulated under the previous definition",
                ],
            )),
        },
        // A stateless node present on both sides.
        Case {
            row: "stateless: any change is COMPATIBLE",
            edit: |m| {
                at(m, "totals::project::0").definition =
                    "customer_id, region, sum(amount) AS total, count(*) AS orders_seen".into()
            },
            node: "totals::project::0",
            expect: Some((Compatible, &[STATELESS])),
        },
        Case {
            row: "stateless: a changed filter is COMPATIBLE itself",
            edit: |m| at(m, "totals::filter::0").definition = "(amount > 10)".into(),
            node: "totals::filter::0",
            expect: Some((Compatible, &[STATELESS])),
        },
        Case {
            row: "sink: changed key",
            edit: |m| m.models[0].key = vec!["customer_id".into()],
            node: "totals::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: rows already written to `totals` are keyed the old way; rebuild the sink",
                ],
            )),
        },
        Case {
            row: "sink: changed materialization",
            edit: |m| {
                m.models[3].materialized = "upsert".into();
                m.models[3].key = vec!["url".into()];
                at(m, "events::sink::0").definition = "upsert kafka events".into();
            },
            node: "events::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: rows already written to `events` are keyed the old way; rebuild the sink",
                ],
            )),
        },
        Case {
            row: "sink: changed destination",
            edit: |m| at(m, "totals::sink::0").definition = "upsert kafka totals-v2".into(),
            node: "totals::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: the new destination `totals-v2` starts empty; replay history to fill it",
                ],
            )),
        },
        Case {
            row: "sink: a destination where there was none",
            edit: |m| at(m, "regions::sink::0").definition = "upsert kafka regions".into(),
            node: "regions::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: the new destination `regions` starts empty; replay history to fill it",
                ],
            )),
        },
        Case {
            row: "sink: schema only gains columns",
            edit: |m| {
                for id in ["totals::project::0", "totals::sink::0"] {
                    at(m, id).schema.push(col("max_price", "decimal(10,2)"));
                }
            },
            node: "totals::sink::0",
            expect: Some((
                Compatible,
                &[
                    "COMPATIBLE: readers of `totals` see the new columns; rows already written keep the old shape",
                ],
            )),
        },
        Case {
            row: "sink: schema loses a column",
            edit: |m| {
                for id in ["totals::project::0", "totals::sink::0"] {
                    at(m, id).schema.pop();
                }
            },
            node: "totals::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: column `orders` is removed; readers of `totals` see old rows and new rows in different shapes",
                ],
            )),
        },
        Case {
            row: "sink: schema retypes a column",
            edit: |m| {
                for id in ["totals::project::0", "totals::sink::0"] {
                    at(m, id).schema[2].ty = "float64".into();
                }
            },
            node: "totals::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: column `total` changes from decimal(38,9) to float64; readers of `totals` see old rows and new rows in different shapes",
                ],
            )),
        },
        Case {
            row: "sink: columns only reordered (stateless, COMPATIBLE)",
            edit: |m| {
                for id in ["totals::project::0", "totals::sink::0"] {
                    at(m, id).schema.swap(2, 3);
                }
            },
            node: "totals::sink::0",
            expect: Some((
                Compatible,
                &[
                    "COMPATIBLE: readers of `totals` see the columns in another order; rows already written keep the old order",
                ],
            )),
        },
        Case {
            row: "sink without a destination: a changed key is COMPATIBLE (nothing is written)",
            edit: |m| {
                m.models[2].key = vec!["region".into(), "x".into()];
            },
            node: "regions::sink::0",
            expect: Some((Compatible, &[STATELESS])),
        },
        // Added and removed nodes.
        Case {
            row: "added: a stateless node",
            edit: |m| {
                let schema = at(m, "big::filter::0").schema.clone();
                insert_after(
                    m,
                    "big::filter::0",
                    node(
                        "big::project::0",
                        &[],
                        "customer_id, region, total, orders",
                        schema,
                        upsert(&["customer_id", "region"]),
                        StateEntry::Stateless,
                    ),
                );
            },
            node: "big::project::0",
            expect: Some((
                Compatible,
                &["COMPATIBLE: stateless; nothing to carry over"],
            )),
        },
        Case {
            row: "removed: a stateless node",
            edit: |m| remove(m, "totals::project::0"),
            node: "totals::project::0",
            expect: Some((Compatible, &["COMPATIBLE: stateless; nothing is lost"])),
        },
        Case {
            row: "added: a keyed node",
            edit: |m| {
                let schema = vec![col("url", "string"), col("count(*)", "int64")];
                insert_after(
                    m,
                    "events::filter::0",
                    node(
                        "events::aggregate::0",
                        &[],
                        "key=[url] aggregates=[count(*)]",
                        schema,
                        upsert(&["url"]),
                        keyed(&["url"], &[("count(*)", "int64")], "unbounded"),
                    ),
                );
            },
            node: "events::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: new keyed state starts empty; history is in it only if the source replays it",
                ],
            )),
        },
        Case {
            row: "added: a sink writing where a removed sink wrote (a rename without its hint)",
            edit: |m| rename_model(m, "big", "vip"),
            node: "vip::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: `big` holds the rows `big::sink::0` wrote, and this new sink writes among them; rebuild the sink, or if the model was only renamed, say so with renamed_from",
                ],
            )),
        },
        Case {
            row: "removed: a keyed node",
            edit: |m| remove(m, "regions::aggregate::0"),
            node: "regions::aggregate::0",
            expect: Some((
                Compatible,
                &["COMPATIBLE: its keyed state is discarded when the old job stops"],
            )),
        },
        // Propagation across model boundaries.
        Case {
            row: "propagation: a changed filter in an upstream model raises a downstream aggregate",
            edit: |m| at(m, "totals::filter::0").definition = "(amount > 10)".into(),
            node: "regions::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: input definition changed upstream at `totals::filter::0`; existing state was accumulated under the previous definition",
                ],
            )),
        },
        Case {
            row: "propagation: the nearest change upstream is named",
            edit: |m| {
                at(m, "totals::filter::0").definition = "(amount > 10)".into();
                at(m, "totals::filter::1").definition = "(count(*) > 2)".into();
            },
            node: "regions::aggregate::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: input definition changed upstream at `totals::filter::1`; existing state was accumulated under the previous definition",
                ],
            )),
        },
        Case {
            row: "propagation: a stateless model downstream holds nothing and stays SAFE",
            edit: |m| at(m, "totals::filter::0").definition = "(amount > 10)".into(),
            node: "big::sink::0",
            expect: None,
        },
        Case {
            row: "propagation: a new sink destination upstream does not change what readers see",
            edit: |m| at(m, "totals::sink::0").definition = "upsert kafka totals-v2".into(),
            node: "regions::aggregate::0",
            expect: None,
        },
        // Our rule: a predicate in front of an upsert sink, with no keyed node in between.
        Case {
            row: "predicate: a changed HAVING after the model's last aggregate",
            edit: |m| at(m, "totals::filter::1").definition = "(count(*) > 2)".into(),
            node: "totals::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: rows already written to `totals` were selected under the previous definition at `totals::filter::1`; nothing rewrites or deletes them for the change, rebuild the sink",
                ],
            )),
        },
        Case {
            row: "predicate: a changed WHERE in a stateless model that reads an updating model",
            edit: |m| at(m, "big::filter::0").definition = "(total > 200)".into(),
            node: "big::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: rows already written to `big` were selected under the previous definition at `big::filter::0`; nothing rewrites or deletes them for the change, rebuild the sink",
                ],
            )),
        },
        Case {
            row: "predicate: a WHERE added in a stateless model that reads an updating model",
            edit: |m| {
                let schema = at(m, "big::filter::0").schema.clone();
                insert_after(
                    m,
                    "big::filter::0",
                    node(
                        "big::filter::1",
                        &[],
                        "(orders > 3)",
                        schema,
                        upsert(&["customer_id", "region"]),
                        StateEntry::Stateless,
                    ),
                );
            },
            node: "big::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: rows already written to `big` were selected under the previous definition at `big::filter::1`; nothing rewrites or deletes them for the change, rebuild the sink",
                ],
            )),
        },
        Case {
            row: "predicate: a WHERE removed from a stateless model that reads an updating model",
            edit: |m| remove(m, "big::filter::0"),
            node: "big::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: rows already written to `big` were selected under the previous definition at `big::filter::0`; nothing rewrites or deletes them for the change, rebuild the sink",
                ],
            )),
        },
        Case {
            row: "predicate: the values a predicate in front of an upsert sink reads changed",
            edit: |m| {
                at(m, "totals::project::0").definition =
                    "customer_id, region, -sum(amount) AS total, count(*) AS orders".into()
            },
            node: "big::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: rows already written to `big` were selected under the previous definition at `totals::project::0`; nothing rewrites or deletes them for the change, rebuild the sink",
                ],
            )),
        },
        Case {
            row: "predicate: a value change with no predicate in front of the sink is COMPATIBLE",
            edit: |m| {
                at(m, "totals::project::0").definition =
                    "customer_id, region, -sum(amount) AS total, count(*) AS orders".into()
            },
            node: "totals::sink::0",
            expect: None,
        },
        Case {
            row: "predicate: a stateless model in front of an upsert sink now reads another model",
            edit: |m| at(m, "big::filter::0").inputs = vec!["regions::sink::0".into()],
            node: "big::sink::0",
            expect: Some((
                BackfillRequired,
                &[
                    "BACKFILL REQUIRED: rows already written to `big` were selected under the previous definition at `regions::sink::0`; nothing rewrites or deletes them for the change, rebuild the sink",
                ],
            )),
        },
        Case {
            row: "predicate: a change above the last keyed node is left to propagation",
            edit: |m| at(m, "totals::filter::0").definition = "(amount > 10)".into(),
            node: "totals::sink::0",
            expect: None,
        },
        Case {
            row: "predicate: an append sink is not raised",
            edit: |m| at(m, "events::filter::0").definition = "(url <> '')".into(),
            node: "events::sink::0",
            expect: None,
        },
    ]
}

#[test]
fn every_row_of_the_rule_tables() {
    let running = base();
    let mut failures = Vec::new();
    for case in cases() {
        let mut desired = base();
        (case.edit)(&mut desired);
        let diff = diff(&running, &desired, &Hints::default());
        let actual = verdict_of(&diff, case.node);
        let expected = case
            .expect
            .map(|(c, reasons)| (c, reasons.iter().map(|r| r.to_string()).collect()));
        if actual != expected {
            failures.push(format!(
                "{}\n  node {}\n  expected {expected:?}\n  actual   {actual:?}",
                case.row, case.node
            ));
        }
        // The verdict is the most severe model verdict, and a model's the most severe of its
        // nodes'.
        for m in &diff.models {
            assert_eq!(
                m.verdict,
                m.nodes
                    .iter()
                    .map(|n| n.classification)
                    .max()
                    .unwrap_or(Safe),
                "{}",
                case.row
            );
        }
        assert_eq!(
            diff.verdict,
            diff.models.iter().map(|m| m.verdict).max().unwrap_or(Safe),
            "{}",
            case.row
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn an_unchanged_application_is_safe_with_nothing_listed() {
    let diff = diff(&base(), &base(), &Hints::default());
    assert_eq!(diff.verdict, Safe);
    assert!(
        diff.models
            .iter()
            .all(|m| m.change == ModelChange::Unchanged && m.nodes.is_empty())
    );
    assert_eq!(verdict_counts(&diff.models), "");
}

#[test]
fn a_whole_model_added_and_removed_is_classified_as_its_nodes() {
    let running = base();
    let mut desired = base();
    desired.models.retain(|m| m.name != "regions");
    desired.nodes.retain(|n| n.model != "regions");
    let diff = diff(&running, &desired, &Hints::default());
    let regions = diff.models.iter().find(|m| m.name == "regions").unwrap();
    assert_eq!(regions.change, ModelChange::Removed);
    assert_eq!(regions.verdict, Compatible);
    assert_eq!(regions.nodes.len(), 2);
    assert!(
        regions
            .nodes
            .iter()
            .all(|n| n.change == NodeChange::Removed)
    );
    assert_eq!(diff.verdict, Compatible);
    assert_eq!(verdict_counts(&diff.models), "1 model removed");

    // The other way round: the model is added, and its aggregate needs a backfill.
    let diff = super::diff(&desired, &running, &Hints::default());
    let regions = diff.models.iter().find(|m| m.name == "regions").unwrap();
    assert_eq!(regions.change, ModelChange::Added);
    assert_eq!(regions.verdict, BackfillRequired);
    assert_eq!(verdict_counts(&diff.models), "1 model to backfill");
}

#[test]
fn a_rename_without_a_hint_is_removed_and_added_and_with_one_is_the_same_model() {
    let running = base();
    let mut desired = base();
    rename_model(&mut desired, "regions", "region_totals");
    let without = diff(&running, &desired, &Hints::default());
    let changes: Vec<(&str, ModelChange, Classification)> = without
        .models
        .iter()
        .filter(|m| m.verdict > Safe)
        .map(|m| (m.name.as_str(), m.change, m.verdict))
        .collect();
    assert_eq!(
        changes,
        [
            ("region_totals", ModelChange::Added, BackfillRequired),
            ("regions", ModelChange::Removed, Compatible)
        ]
    );
    assert_eq!(
        verdict_counts(&without.models),
        "1 model to backfill, 1 model removed"
    );

    let hints = Hints {
        renamed_from: [("region_totals".to_string(), "regions".to_string())].into(),
        ..Hints::default()
    };
    let with = diff(&running, &desired, &hints);
    assert_eq!(with.verdict, Safe);
    let renamed = with
        .models
        .iter()
        .find(|m| m.name == "region_totals")
        .unwrap();
    assert_eq!(renamed.renamed_from.as_deref(), Some("regions"));
    assert_eq!(renamed.change, ModelChange::Unchanged);
    assert!(with.unused_hints.is_empty());
    assert!(!with.models.iter().any(|m| m.name == "regions"));

    // Once the rename is what runs, the hint names nothing running and is reported.
    let after = diff(&desired, &desired, &hints);
    assert_eq!(after.verdict, Safe);
    assert_eq!(
        after.unused_hints,
        [UnusedHint::RenamedFrom {
            model: "region_totals".into(),
            old: "regions".into()
        }]
    );
}

#[test]
fn a_node_hint_pairs_a_shifted_ordinal_with_the_node_it_was() {
    // A new WHERE before the existing one shifts the ordinals: the old WHERE becomes
    // filter::1 and the HAVING filter::2.
    let running = base();
    let mut desired = base();
    renumber(&mut desired, "totals::filter::1", "totals::filter::2");
    renumber(&mut desired, "totals::filter::0", "totals::filter::1");
    let orders = at(&mut desired, "totals::source::0").schema.clone();
    let new = node(
        "totals::filter::0",
        &[],
        "(qty > 0)",
        orders,
        ChangelogEntry::Append,
        StateEntry::Stateless,
    );
    insert_after(&mut desired, "totals::source::0", new);

    let hints = Hints {
        nodes: [
            (
                "totals::filter::1".to_string(),
                "totals::filter::0".to_string(),
            ),
            (
                "totals::filter::2".to_string(),
                "totals::filter::1".to_string(),
            ),
        ]
        .into(),
        ..Hints::default()
    };
    let with = diff(&running, &desired, &hints);
    let totals = &with.models[0];
    let listed: Vec<(&str, NodeChange, Option<&str>)> = totals
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), n.change, n.was.as_deref()))
        .collect();
    assert_eq!(
        listed,
        [
            ("totals::filter::0", NodeChange::Added, None),
            (
                "totals::filter::1",
                NodeChange::Changed,
                Some("totals::filter::0")
            ),
            ("totals::aggregate::0", NodeChange::Changed, None),
        ],
        "{totals:#?}"
    );
    // The old WHERE is the same node; only its input moved. The aggregate sees a new
    // filter in front of it.
    assert_eq!(
        totals.nodes[1].fields,
        [FieldChange {
            field: Field::Inputs,
            old: "[totals::source::0]".into(),
            new: "[totals::filter::0 (new)]".into()
        }]
    );
    assert_eq!(
        verdict_of(&with, "totals::aggregate::0").unwrap().1,
        [
            "BACKFILL REQUIRED: input definition changed upstream at `totals::filter::1`; existing state was accumulated under the previous definition"
        ]
    );
    assert!(with.unused_hints.is_empty());

    // Once the restructure runs, the record has the new ids: the hints are not followed
    // (following them would pair the new WHERE with the HAVING) and are reported.
    let after = diff(&desired, &desired, &hints);
    assert_eq!(after.verdict, Safe, "{after:#?}");
    assert_eq!(
        after.unused_hints,
        [
            UnusedHint::Applied {
                node: "totals::filter::1".into(),
                was: "totals::filter::0".into()
            },
            UnusedHint::Applied {
                node: "totals::filter::2".into(),
                was: "totals::filter::1".into()
            },
        ]
    );

    let stale = Hints {
        nodes: [(
            "totals::filter::0".to_string(),
            "totals::filter::7".to_string(),
        )]
        .into(),
        ..Hints::default()
    };
    assert_eq!(
        diff(&running, &running, &stale).unused_hints,
        [UnusedHint::Node {
            node: "totals::filter::0".into(),
            was: "totals::filter::7".into()
        }]
    );
}

#[test]
fn nothing_running_makes_every_model_new_and_the_verdict_safe() {
    let fresh = PlanDiff::fresh(&base());
    assert_eq!(fresh.verdict, Safe);
    assert_eq!(fresh.models.len(), 4);
    assert!(fresh.models.iter().all(|m| m.change == ModelChange::New));
}

#[test]
fn lossless_widening_keeps_every_value() {
    assert!(widens_losslessly("int32", "int64"));
    assert!(widens_losslessly("decimal(10,2)", "decimal(12,2)"));
    assert!(widens_losslessly("decimal(10,2)", "decimal(12,4)"));
    assert!(!widens_losslessly("decimal(10,2)", "decimal(10,2)"));
    assert!(!widens_losslessly("decimal(10,2)", "decimal(10,4)"));
    assert!(!widens_losslessly("decimal(38,9)", "decimal(38,12)"));
    assert!(!widens_losslessly("int64", "int32"));
    assert!(!widens_losslessly("int64", "decimal(38,0)"));
    assert!(!widens_losslessly("int64", "float64"));
}

/// Gives `totals::aggregate::0` a window, or another one, recomputing its digest as
/// lowering would.
fn with_window(m: &mut Manifest, window: &str) {
    let node = at(m, "totals::aggregate::0");
    let StateEntry::Keyed { window: w, .. } = &mut node.state else {
        panic!("totals::aggregate::0 is keyed");
    };
    *w = Some(window.to_string());
    redigest(node);
}

#[test]
fn the_window_rows_of_the_rule_table() {
    let mut running = base();
    with_window(&mut running, "tumble(size=1m) on ordered_at");
    let incompatible = |to: &str| {
        format!(
            "STATE INCOMPATIBLE: the window changes from tumble(size=1m) on ordered_at to {to}; Flink keeps a window's state under its end alone, so it would restore this state into the new windows without complaint and emit wrong results"
        )
    };
    type Edit = fn(&mut Manifest);
    type Verdict = Option<(Classification, Vec<String>)>;
    let cases: Vec<(&str, Edit, Verdict)> = vec![
        ("window unchanged", |_| {}, None),
        (
            "window size changed",
            |m| with_window(m, "tumble(size=5m) on ordered_at"),
            Some((StateIncompatible, vec![incompatible("tumble(size=5m) on ordered_at")])),
        ),
        (
            "window kind changed",
            |m| with_window(m, "hop(slide=30s, size=1m) on ordered_at"),
            Some((
                StateIncompatible,
                vec![incompatible("hop(slide=30s, size=1m) on ordered_at")],
            )),
        ),
        (
            "window time column changed",
            |m| with_window(m, "tumble(size=1m) on shipped_at"),
            Some((StateIncompatible, vec![incompatible("tumble(size=1m) on shipped_at")])),
        ),
        (
            "window unchanged, accumulator added (keyed rows)",
            |m| {
                edit_state(m, |_, accs, _| accs.push(col("max(amount)", "decimal(38,9)")));
                with_window(m, "tumble(size=1m) on ordered_at");
            },
            Some((
                BackfillRequired,
                vec!["BACKFILL REQUIRED: accumulator `max(amount)` added; it starts empty for every existing key, replay history to fill it".into()],
            )),
        ),
        (
            "window and grouping key changed: both reasons",
            |m| {
                edit_state(m, |keys, _, _| drop(keys.pop()));
                with_window(m, "tumble(size=2m) on ordered_at");
            },
            Some((
                StateIncompatible,
                vec![
                    incompatible("tumble(size=2m) on ordered_at"),
                    "STATE INCOMPATIBLE: the grouping key changed; existing state cannot be reused".into(),
                ],
            )),
        ),
    ];
    for (row, edit, expected) in cases {
        let mut desired = base();
        with_window(&mut desired, "tumble(size=1m) on ordered_at");
        edit(&mut desired);
        let diff = diff(&running, &desired, &Hints::default());
        assert_eq!(verdict_of(&diff, "totals::aggregate::0"), expected, "{row}");
    }
}

#[test]
fn the_session_rows_of_the_rule_table() {
    let session = "session(gap=5m) on ordered_at";
    let mut running = base();
    with_window(&mut running, session);
    let cases: Vec<(&str, &str, Option<String>)> = vec![
        ("session unchanged", session, None),
        (
            "gap changed",
            "session(gap=10m) on ordered_at",
            Some("STATE INCOMPATIBLE: the window changes from session(gap=5m) on ordered_at to session(gap=10m) on ordered_at; Flink keeps each key's open sessions and merges new rows into them by the gap, so it would restore these sessions under the new gap without complaint and emit wrong results".into()),
        ),
        (
            "session to tumble",
            "tumble(size=5m) on ordered_at",
            Some("STATE INCOMPATIBLE: the window changes from session(gap=5m) on ordered_at to tumble(size=5m) on ordered_at; Flink keeps a window's state under its end alone, so it would restore this state into the new windows without complaint and emit wrong results".into()),
        ),
    ];
    for (row, window, expected) in cases {
        let mut desired = base();
        with_window(&mut desired, window);
        let diff = diff(&running, &desired, &Hints::default());
        assert_eq!(
            verdict_of(&diff, "totals::aggregate::0"),
            expected.map(|r| (StateIncompatible, vec![r])),
            "{row}"
        );
    }
}

/// Sets whether `totals::aggregate::0` retracts (its input updates), with its digest.
fn with_retracting(m: &mut Manifest, on: bool) {
    let node = at(m, "totals::aggregate::0");
    let StateEntry::Keyed { retracting, .. } = &mut node.state else {
        panic!("totals::aggregate::0 is keyed");
    };
    *retracting = on;
    redigest(node);
}

/// Gives an aggregate node the state digest of its edited state, as lowering would.
fn redigest(node: &mut NodeEntry) {
    let derived = node
        .state
        .derived_digest(crate::plan::NodeKind::Aggregate)
        .expect("keyed");
    if let StateEntry::Keyed { digest, .. } = &mut node.state {
        *digest = derived;
    }
}

#[test]
fn the_retracting_rows_of_the_rule_table() {
    let states = |r: bool, d: bool| {
        let (mut running, mut desired) = (base(), base());
        with_retracting(&mut running, r);
        with_retracting(&mut desired, d);
        let diff = diff(&running, &desired, &Hints::default());
        verdict_of(&diff, "totals::aggregate::0")
    };
    assert_eq!(states(true, true), None, "retracting on both sides");
    assert_eq!(
        states(false, true),
        Some((
            StateIncompatible,
            vec!["STATE INCOMPATIBLE: the aggregate's state changes shape: its input now updates, so it needs retracting accumulators (counts beside each result) that the stored state does not have".into()]
        )),
        "the input starts to update"
    );
    assert_eq!(
        states(true, false),
        Some((
            StateIncompatible,
            vec!["STATE INCOMPATIBLE: the aggregate's state changes shape: its input no longer updates, so it keeps plain accumulators, not the retracting ones stored".into()]
        )),
        "the input stops updating"
    );
}

/// A model `j` joining source `l(id, lv)` with source `r(id, rv)` filtered by `rv <> ''`,
/// of `kind`, on `id = id` and, if given, a further condition.
fn join_app(kind: crate::plan::JoinKind, condition: Option<&str>, right_filter: &str) -> Manifest {
    Manifest::from_plans(&[join_plan(kind, condition, right_filter)])
}

/// The model of [`join_app`].
fn join_plan(
    kind: crate::plan::JoinKind,
    condition: Option<&str>,
    right_filter: &str,
) -> crate::plan::ModelPlan {
    use crate::expr::{BinaryOp, Expr};
    use crate::plan::*;
    let field = |name: &str, ty: crate::types::DataType| Field {
        name: name.into(),
        ty,
        nullable: true,
    };
    let side = |value: &str| {
        vec![
            field("id", crate::types::DataType::Int64),
            field(value, crate::types::DataType::String),
        ]
    };
    let id = |kind: NodeKind, ordinal: u32| NodeId {
        model: "j".into(),
        kind,
        ordinal,
    };
    let source = |name: &str, value: &str, ordinal: u32| Node {
        id: id(NodeKind::Source, ordinal),
        op: Operator::Source {
            name: name.into(),
            connector: Connector::Kafka { topic: name.into() },
            format: "json".into(),
            event_time: None,
        },
        inputs: Vec::new(),
        schema: side(value),
        boundedness: Boundedness::Unbounded,
        changelog: Changelog::Append,
        state: State::Stateless,
        time: None,
    };
    let (left, right) = (side("lv"), side("rv"));
    let filter = Node {
        id: id(NodeKind::Filter, 0),
        op: Operator::Filter {
            predicate: Expr::Binary {
                op: BinaryOp::NotEq,
                left: Box::new(Expr::Column {
                    name: "rv".into(),
                    ty: crate::types::DataType::String,
                }),
                right: Box::new(Expr::Literal {
                    value: crate::value::Value::String(right_filter.into()),
                    ty: crate::types::DataType::String,
                }),
                ty: crate::types::DataType::Boolean,
            },
        },
        inputs: vec![id(NodeKind::Source, 1)],
        schema: right.clone(),
        boundedness: Boundedness::Unbounded,
        changelog: Changelog::Append,
        state: State::Stateless,
        time: None,
    };
    let on = vec![("id".to_string(), "id".to_string())];
    let schema = join_schema(kind, &left, &right);
    let join = Node {
        id: id(NodeKind::Join, 0),
        op: Operator::Join {
            kind,
            on: on.clone(),
            filter: condition.map(|c| Expr::Column {
                name: c.into(),
                ty: crate::types::DataType::Boolean,
            }),
        },
        inputs: vec![id(NodeKind::Source, 0), id(NodeKind::Filter, 0)],
        schema: schema.clone(),
        boundedness: Boundedness::Unbounded,
        changelog: Changelog::Append,
        state: State::Keyed(KeyedState::join(kind, &on, &left, &right)),
        time: None,
    };
    let sink = Node {
        id: id(NodeKind::Sink, 0),
        op: Operator::Sink {
            model: "j".into(),
            materialized: Materialized::Append,
            target: None,
        },
        inputs: vec![id(NodeKind::Join, 0)],
        schema,
        boundedness: Boundedness::Unbounded,
        changelog: Changelog::Append,
        state: State::Stateless,
        time: None,
    };
    ModelPlan {
        name: "j".into(),
        inputs: vec![Input::Source("l".into()), Input::Source("r".into())],
        nodes: vec![
            source("l", "lv", 0),
            source("r", "rv", 1),
            filter,
            join,
            sink,
        ],
    }
}

/// [`join_app`] as an interval join whose left time lies between the right's plus `lower`
/// and plus `upper` (milliseconds), or as the regular join for `None`.
fn interval_app(bounds: Option<(i64, i64)>) -> Manifest {
    use crate::plan::*;
    let mut plan = join_plan(JoinKind::Inner, None, "");
    if let Some((lower, upper)) = bounds {
        let bounds = TimeBounds {
            left_time: "lv".into(),
            right_time: "rv".into(),
            lower,
            upper,
        };
        let (left, right) = (plan.nodes[0].schema.clone(), plan.nodes[2].schema.clone());
        let join = &mut plan.nodes[3];
        let on = vec![("id".to_string(), "id".to_string())];
        join.id.kind = NodeKind::IntervalJoin;
        join.state = State::Keyed(KeyedState::interval_join(&on, &left, &right, &bounds));
        join.op = Operator::IntervalJoin {
            kind: JoinKind::Inner,
            on,
            bounds,
            filter: None,
        };
        let id = join.id.clone();
        plan.nodes[4].inputs = vec![id];
    }
    Manifest::from_plans(&[plan])
}

/// [`join_app`] as a LEFT temporal join `AS OF` the left's `lv` on `on` (pairs of the left's
/// and the right's columns), the right's key.
fn temporal_app(on: &[(&str, &str)]) -> Manifest {
    use crate::plan::*;
    let mut plan = join_plan(JoinKind::Left, None, "");
    let (left, right) = (plan.nodes[0].schema.clone(), plan.nodes[2].schema.clone());
    let on: Vec<(String, String)> = on
        .iter()
        .map(|(l, r)| (l.to_string(), r.to_string()))
        .collect();
    let join = &mut plan.nodes[3];
    join.id.kind = NodeKind::TemporalJoin;
    join.state = State::Keyed(KeyedState::temporal_join(&on, &left, &right));
    join.op = Operator::TemporalJoin {
        kind: JoinKind::Left,
        on,
        left_time: "lv".into(),
        right_time: "rv".into(),
    };
    let id = join.id.clone();
    plan.nodes[4].inputs = vec![id];
    Manifest::from_plans(&[plan])
}

#[test]
fn the_temporal_join_rows_of_the_rule_table() {
    let verdict = |running: Manifest, desired: Manifest| {
        verdict_of(
            &diff(&running, &desired, &Hints::default()),
            "j::temporal_join::0",
        )
    };
    assert_eq!(
        verdict(temporal_app(&[("id", "id")]), temporal_app(&[("id", "id")])),
        None,
        "unchanged"
    );
    let (classification, reasons) =
        verdict(temporal_app(&[("id", "id")]), temporal_app(&[("lv", "rv")])).unwrap();
    assert_eq!(classification, StateIncompatible, "a changed version key");
    assert_eq!(
        reasons,
        [
            "STATE INCOMPATIBLE: the join's stored rows change shape (its kind, its key or a side's columns); Flink keeps each side's rows in a layout of their own, which a savepoint cannot carry across"
        ]
    );
}

#[test]
fn the_interval_join_rows_of_the_rule_table() {
    let verdict = |running: Manifest, desired: Manifest| {
        verdict_of(
            &diff(&running, &desired, &Hints::default()),
            "j::interval_join::0",
        )
    };
    let hour = 3_600_000;
    assert_eq!(
        verdict(
            interval_app(Some((-hour, 0))),
            interval_app(Some((-hour, 0)))
        ),
        None,
        "unchanged"
    );
    for (bounds, what) in [
        ((-2 * hour, 0), "wider"),
        ((-hour / 2, 0), "narrower"),
        ((-hour, 1), "moved"),
    ] {
        let (classification, reasons) =
            verdict(interval_app(Some((-hour, 0))), interval_app(Some(bounds))).unwrap();
        assert_eq!(classification, BackfillRequired, "{what}");
        assert_eq!(reasons.len(), 1, "{what}: {reasons:?}");
        assert!(
            reasons[0].starts_with("BACKFILL REQUIRED: the join's time condition changes from [lv between rv - 1h and rv] to ["),
            "{what}: {reasons:?}"
        );
    }
    // A regular join becoming an interval join is another node: the join's state is
    // dropped, and the interval join starts empty.
    let d = diff(
        &interval_app(None),
        &interval_app(Some((-hour, 0))),
        &Hints::default(),
    );
    assert_eq!(d.verdict, BackfillRequired);
}

#[test]
fn the_join_rows_of_the_rule_table() {
    use crate::plan::JoinKind::*;
    let verdict = |running: Manifest, desired: Manifest| {
        verdict_of(&diff(&running, &desired, &Hints::default()), "j::join::0")
    };
    assert_eq!(
        verdict(join_app(Left, None, ""), join_app(Left, None, "")),
        None,
        "nothing changed"
    );
    assert_eq!(
        verdict(join_app(Left, None, ""), join_app(Inner, None, "")),
        Some((
            StateIncompatible,
            vec!["STATE INCOMPATIBLE: the join's stored rows change shape (its kind, its key or a side's columns); Flink keeps each side's rows in a layout of their own, which a savepoint cannot carry across".into()]
        )),
        "a LEFT JOIN becomes an inner one"
    );
    assert_eq!(
        verdict(join_app(Inner, None, ""), join_app(Inner, Some("ok"), "")),
        Some((
            BackfillRequired,
            vec!["BACKFILL REQUIRED: the join's condition changed; the rows it already emitted were matched under the previous one".into()]
        )),
        "a condition added beside the key"
    );
    assert_eq!(
        verdict(join_app(Inner, None, ""), join_app(Inner, None, "x")),
        Some((
            BackfillRequired,
            vec!["BACKFILL REQUIRED: input definition changed upstream at `j::filter::0`; existing state was accumulated under the previous definition".into()]
        )),
        "the right side's filter changed"
    );
    let mut updating = join_app(Inner, None, "");
    let node = at(&mut updating, "j::join::0");
    if let StateEntry::Keyed { retracting, .. } = &mut node.state {
        *retracting = true;
    }
    let derived = node
        .state
        .derived_digest(crate::plan::NodeKind::Join)
        .expect("keyed");
    if let StateEntry::Keyed { digest, .. } = &mut node.state {
        *digest = derived;
    }
    assert_eq!(
        verdict(join_app(Inner, None, ""), updating),
        Some((
            StateIncompatible,
            vec!["STATE INCOMPATIBLE: the join's stored rows change shape: a side now updates or no longer does, and Flink keeps an updating side's rows by their key, an appending side's as counted rows (docs/joins.md, \"Tables that change\")".into()]
        )),
        "a side starts to update"
    );
}

/// One model ranking an append source's rows (`k`, `v`) per `k` by `v` descending, keeping
/// the first `top` with the row number: docs/ranking.md.
fn rank_app(top: u64, order: &str) -> Manifest {
    use crate::plan::*;
    let field = |name: &str, ty: crate::types::DataType, nullable: bool| Field {
        name: name.into(),
        ty,
        nullable,
    };
    let input = vec![
        field("k", crate::types::DataType::String, true),
        field("v", crate::types::DataType::Int64, true),
    ];
    let id = |kind: NodeKind| NodeId {
        model: "r".into(),
        kind,
        ordinal: 0,
    };
    let ranking = Ranking {
        order: vec![SortKey {
            column: order.into(),
            descending: true,
        }],
        top,
        strategy: RankStrategy::Append,
        window_end: None,
    };
    let partition = vec!["k".to_string()];
    let mut ranked = input.clone();
    ranked.push(field("rn", crate::types::DataType::Int64, false));
    let key = Changelog::Upsert(vec!["k".into(), "rn".into()]);
    let source = Node {
        id: id(NodeKind::Source),
        op: Operator::Source {
            name: "s".into(),
            connector: Connector::Kafka { topic: "s".into() },
            format: "json".into(),
            event_time: None,
        },
        inputs: Vec::new(),
        schema: input.clone(),
        boundedness: Boundedness::Unbounded,
        changelog: Changelog::Append,
        state: State::Stateless,
        time: None,
    };
    let rank = Node {
        id: id(NodeKind::Rank),
        op: Operator::Rank {
            partition_by: partition.clone(),
            ranking: ranking.clone(),
            number: Some("rn".into()),
        },
        inputs: vec![source.id.clone()],
        schema: ranked.clone(),
        boundedness: Boundedness::Unbounded,
        changelog: key.clone(),
        state: State::Keyed(KeyedState::rank(&partition, &ranking, &input)),
        time: None,
    };
    let sink = Node {
        id: id(NodeKind::Sink),
        op: Operator::Sink {
            model: "r".into(),
            materialized: Materialized::Upsert {
                key: vec!["k".into(), "rn".into()],
            },
            target: None,
        },
        inputs: vec![rank.id.clone()],
        schema: ranked,
        boundedness: Boundedness::Unbounded,
        changelog: key,
        state: State::Stateless,
        time: None,
    };
    Manifest::from_plans(&[ModelPlan {
        name: "r".into(),
        inputs: vec![Input::Source("s".into())],
        nodes: vec![source, rank, sink],
    }])
}

#[test]
fn the_rank_rows_of_the_rule_table() {
    let verdict = |running: Manifest, desired: Manifest| {
        verdict_of(&diff(&running, &desired, &Hints::default()), "r::rank::0")
    };
    assert_eq!(
        verdict(rank_app(3, "v"), rank_app(3, "v")),
        None,
        "unchanged"
    );
    let reason = |to: &str| {
        format!(
            "STATE INCOMPATIBLE: the ranking changes from [order=[v desc] top=3 strategy=append] to [{to}]: the rows the rank kept were chosen under the old one (over an append input, rows pushed out of the old top are gone), and the rows it emitted were ranked under it"
        )
    };
    for (desired, to, what) in [
        (
            rank_app(5, "v"),
            "order=[v desc] top=5 strategy=append",
            "a larger top",
        ),
        (
            rank_app(1, "v"),
            "order=[v desc] top=1 strategy=append",
            "a smaller top",
        ),
        (
            rank_app(3, "k"),
            "order=[k desc] top=3 strategy=append",
            "another ordering",
        ),
    ] {
        let (classification, reasons) = verdict(rank_app(3, "v"), desired).unwrap();
        assert_eq!(classification, StateIncompatible, "{what}");
        assert_eq!(reasons, [reason(to)], "{what}");
    }
}

/// An application whose model `o` sums `v` per `k` over `frame`, on event time `t`.
fn over_app(unit: crate::plan::FrameUnit, preceding: Option<u64>) -> Manifest {
    use crate::plan::*;
    let field = |name: &str, ty: crate::types::DataType, nullable: bool| Field {
        name: name.into(),
        ty,
        nullable,
    };
    let input = vec![
        field("k", crate::types::DataType::String, true),
        field("v", crate::types::DataType::Int64, true),
        field("t", crate::types::DataType::Timestamp, true),
    ];
    let id = |kind: NodeKind| NodeId {
        model: "o".into(),
        kind,
        ordinal: 0,
    };
    let frame = OverFrame {
        time: "t".into(),
        unit,
        preceding,
    };
    let calls = vec![AggCall {
        func: AggFunc::Sum,
        arg: Some("v".into()),
        ty: crate::types::DataType::Int64,
    }];
    let partition = vec!["k".to_string()];
    let mut summed = input.clone();
    summed.push(field("sum(v)", crate::types::DataType::Int64, true));
    let node = |id: NodeId, op: Operator, inputs: Vec<NodeId>, schema: Vec<Field>, state| Node {
        id,
        op,
        inputs,
        schema,
        boundedness: Boundedness::Unbounded,
        changelog: Changelog::Append,
        state,
        time: Some("t".into()),
    };
    let source = node(
        id(NodeKind::Source),
        Operator::Source {
            name: "s".into(),
            connector: Connector::Kafka { topic: "s".into() },
            format: "json".into(),
            event_time: Some(EventTime {
                column: "t".into(),
                watermark: 0,
                late: LateEvents::Drop,
            }),
        },
        Vec::new(),
        input.clone(),
        State::Stateless,
    );
    let over = node(
        id(NodeKind::Over),
        Operator::Over {
            partition_by: partition.clone(),
            frame: frame.clone(),
            calls: calls.clone(),
        },
        vec![source.id.clone()],
        summed.clone(),
        State::Keyed(KeyedState::over(&partition, &frame, &calls)),
    );
    let sink = node(
        id(NodeKind::Sink),
        Operator::Sink {
            model: "o".into(),
            materialized: Materialized::Append,
            target: None,
        },
        vec![over.id.clone()],
        summed,
        State::Stateless,
    );
    Manifest::from_plans(&[ModelPlan {
        name: "o".into(),
        inputs: vec![Input::Source("s".into())],
        nodes: vec![source, over, sink],
    }])
}

#[test]
fn the_over_rows_of_the_rule_table() {
    use crate::plan::FrameUnit::{Range, Rows};
    let verdict = |running: Manifest, desired: Manifest| {
        verdict_of(&diff(&running, &desired, &Hints::default()), "o::over::0")
    };
    assert_eq!(
        verdict(over_app(Rows, Some(2)), over_app(Rows, Some(2))),
        None,
        "unchanged"
    );
    for (desired, to, what) in [
        (
            over_app(Rows, Some(3)),
            "rows 3 preceding on t",
            "a longer frame",
        ),
        (
            over_app(Range, Some(2)),
            "range 2ms preceding on t",
            "time instead of rows",
        ),
        (
            over_app(Rows, None),
            "rows unbounded preceding on t",
            "back to the first row",
        ),
    ] {
        let (classification, reasons) = verdict(over_app(Rows, Some(2)), desired).unwrap();
        assert_eq!(classification, StateIncompatible, "{what}");
        assert_eq!(
            reasons,
            [format!(
                "STATE INCOMPATIBLE: the OVER frame changes from [rows 2 preceding on t] to [{to}]: the stored accumulators and rows were kept for the old frame, and the rows already emitted were aggregated over it"
            )],
            "{what}"
        );
    }
}
