//! Differential tests: the same plan on the simulator and on a real Flink reading and
//! writing a real Kafka, and `apply`'s failure paths against the real SQL Gateway.
//!
//! They need the integration environment (`integration/up`) and are ignored by a plain
//! `cargo test`; `integration/test` runs them (`cargo test --test differential -- --ignored`).
//! Addresses default to the environment's loopback ports and can be overridden with
//! STREAMFORM_IT_KAFKA, STREAMFORM_IT_GATEWAY, STREAMFORM_IT_BARE_GATEWAY and
//! STREAMFORM_IT_FLINK_REST.
//!
//! For each example fixture whose model declares a sink: copy the project with topic names
//! unique to this run, create the topics, apply, produce the fixture's `given` events as
//! JSON (an upsert source's under their key, its deletes as tombstones), read the sink topic
//! until the expected records arrive or a timeout passes, cancel the job, and compare the
//! (key, value | tombstone) sequence with the simulator's changelog: an insert or update is
//! the value for its key, a delete is a tombstone, and a tombstone immediately followed by a
//! value for the same key reads as one update (Flink's retract mode writes an update behind
//! a filter that way).
//!
//! See docs/running-on-flink.md, "The differential test" and "The integration environment".

mod common;

use common::{copy_dir, repo_root, streamform};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::ClientConfig;
use rdkafka::Message;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};
use streamform_db::Database;
use streamform_db::db::{fixture_def, upstream_chain};
use streamform_db::load::load_project;
use streamform_ir::{Changelog, Connector, DataType, Field, Materialized, Operator, Value};

/// How long a sink topic may take to show the expected records.
const RECORD_TIMEOUT: Duration = Duration::from_secs(90);

struct Env {
    kafka: String,
    gateway: String,
    /// A gateway whose classpath lacks the Kafka connector (integration/up starts it).
    bare_gateway: String,
    rest: String,
}

fn env() -> Env {
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    Env {
        kafka: var("STREAMFORM_IT_KAFKA", "127.0.0.1:9092"),
        gateway: var("STREAMFORM_IT_GATEWAY", "http://127.0.0.1:8083"),
        bare_gateway: var("STREAMFORM_IT_BARE_GATEWAY", "http://127.0.0.1:8084"),
        rest: var("STREAMFORM_IT_FLINK_REST", "http://127.0.0.1:8081"),
    }
}

/// A suffix unique to this test run, so topics from earlier runs never mix in.
fn run_suffix(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    // A project given by its path names its topics after its last folders.
    let name = name
        .trim_end_matches("/project")
        .rsplit('/')
        .next()
        .unwrap_or(name);
    format!("{name}-{}-{nanos}", std::process::id())
}

/// A copy of an example project (or of the project at a path from the repository's root,
/// `tests/cases/<case>/project`) whose topics carry `suffix` and exist (created here, so the
/// jobs it starts find them), and whose target points at this environment, with the gateway
/// at `gateway`.
fn scratch_project(example: &str, suffix: &str, gateway: &str) -> tempfile::TempDir {
    scratch_project_for(example, suffix, gateway, None)
}

/// An example's folder, or the folder at a path from the repository's root.
fn example_dir(example: &str) -> PathBuf {
    if example.contains('/') {
        repo_root().join(example)
    } else {
        repo_root().join("examples").join(example)
    }
}

/// The model a fixture of an example tests, read as `check` reads fixtures.
fn model_of(example: &str, fixture: &str) -> String {
    let path = example_dir(example).join(fixture);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    streamform_db::fixture::parse_shape(fixture, &text)
        .unwrap_or_else(|d| panic!("{path:?}: {d:?}"))
        .model
}

/// [`scratch_project`], keeping the sink of `model` alone when one is given: the other
/// models stay views, so the job that `apply` starts runs only what `model` reads and
/// writes. A job of a whole example costs the gateway a plan for each of its sinks (26 in
/// coverage), and the differential test of one fixture reads one sink;
/// `flink_accepts_every_statement_of_every_example` applies each example whole.
fn scratch_project_for(
    example: &str,
    suffix: &str,
    gateway: &str,
    model: Option<&str>,
) -> tempfile::TempDir {
    let env = env();
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example_dir(example), dir.path());
    if let Some(model) = model {
        let path = dir.path().join("streamform.yml");
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, only_sink_of(&text, model)).unwrap();
    }
    for file in ["sources.yml", "streamform.yml"] {
        let path = dir.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let rewritten: Vec<String> = text
            .lines()
            .map(|line| {
                let trimmed = line.trim_start();
                let indent = &line[..line.len() - trimmed.len()];
                if trimmed.starts_with("name: ") && indent.is_empty() {
                    // Its own job name, so jobs of other tests are never this project's.
                    format!("name: {suffix}")
                } else if let Some(topic) = trimmed.strip_prefix("topic: ") {
                    format!("{indent}topic: {topic}-{suffix}")
                } else if trimmed.starts_with("gateway: ") {
                    format!("{indent}gateway: {gateway}")
                } else if trimmed.starts_with("bootstrap_servers: ") {
                    format!("{indent}bootstrap_servers: {}", env.kafka)
                } else {
                    line.to_string()
                }
            })
            .collect();
        std::fs::write(&path, rewritten.join("\n") + "\n").unwrap();
    }
    let mut topics = Vec::new();
    for file in ["sources.yml", "streamform.yml"] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        topics.extend(
            text.lines()
                .filter_map(|l| l.trim().strip_prefix("topic: "))
                .map(str::to_string),
        );
    }
    create_topics(&topics);
    dir
}

/// `streamform.yml` without the `sink:` of any model but `model` (models are keys at two
/// spaces under `models:`, a sink is four spaces in, as the examples write them).
fn only_sink_of(text: &str, model: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut current = "";
    let mut dropping = false;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if dropping && (line.trim().is_empty() || indent > 4) {
            continue;
        }
        dropping = false;
        if indent == 2 && line.trim_end().ends_with(':') {
            current = line.trim().trim_end_matches(':');
        } else if indent == 0 {
            current = "";
        }
        if indent == 4 && line.trim() == "sink:" && !current.is_empty() && current != model {
            dropping = true;
            continue;
        }
        out.push(line.to_string());
    }
    // A model whose entry held its sink alone is now an empty mapping.
    for i in 0..out.len() {
        let deeper = out[i + 1..]
            .iter()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.len() - l.trim_start().len() > 2);
        if out[i].starts_with("  ")
            && !out[i].starts_with("   ")
            && out[i].ends_with(':')
            && !deeper
        {
            out[i].push_str(" {}");
        }
    }
    let out = out.join("\n") + "\n";
    assert!(
        out.contains("sink:"),
        "model `{model}` has a sink in:\n{text}"
    );
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn kafka_config() -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", env().kafka);
    config
}

fn create_topics(names: &[String]) {
    let admin: AdminClient<DefaultClientContext> = kafka_config().create().expect("admin client");
    let topics: Vec<NewTopic> = names
        .iter()
        .map(|n| NewTopic::new(n, 1, TopicReplication::Fixed(1)))
        .collect();
    let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let results =
        futures_executor::block_on(admin.create_topics(&topics, &options)).expect("create topics");
    for r in results {
        r.unwrap_or_else(|(topic, e)| panic!("create topic {topic}: {e}"));
    }
}

/// Something [`produce`] writes to a topic: its key, if any, and its value, `None` for a
/// tombstone.
trait Produced {
    fn parts(&self) -> (Option<&str>, Option<&str>);
}

/// A value without a key, as an append source's events are written.
impl Produced for String {
    fn parts(&self) -> (Option<&str>, Option<&str>) {
        (None, Some(self))
    }
}

/// A key and a value or a tombstone, as an upsert source's events are written.
impl Produced for Record {
    fn parts(&self) -> (Option<&str>, Option<&str>) {
        (self.0.as_deref(), self.1.as_deref())
    }
}

fn produce<R: Produced>(topic: &str, records: &[R]) {
    let producer: BaseProducer = kafka_config().create().expect("producer");
    for r in records {
        let (key, value) = r.parts();
        let mut record = BaseRecord::<str, str>::to(topic);
        if let Some(key) = key {
            record = record.key(key);
        }
        if let Some(value) = value {
            record = record.payload(value);
        }
        producer
            .send(record)
            .unwrap_or_else(|(e, _)| panic!("produce to {topic}: {e}"));
    }
    producer
        .flush(Duration::from_secs(30))
        .expect("flush the producer");
}

/// One record read from a sink topic: the key and the value, `None` for a tombstone.
type Record = (Option<String>, Option<String>);

/// Reads `topic` from the beginning until `want` records (after normalizing) arrived and a
/// second more brought nothing new, or the timeout passed.
fn consume(topic: &str, want: usize) -> Vec<Record> {
    let consumer = reader(topic, &format!("streamform-differential-{topic}"));
    let started = Instant::now();
    let mut records = Vec::new();
    let mut complete_since: Option<Instant> = None;
    while started.elapsed() < RECORD_TIMEOUT {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.expect("read the sink topic");
            let as_text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            records.push((message.key().map(as_text), message.payload().map(as_text)));
            complete_since = None;
        }
        if normalize(&records).len() >= want {
            let since = *complete_since.get_or_insert_with(Instant::now);
            if since.elapsed() > Duration::from_secs(2) {
                break;
            }
        }
    }
    records
}

/// A consumer of `topic`'s one partition from its beginning, in consumer group `group`.
fn reader(topic: &str, group: &str) -> BaseConsumer {
    let consumer: BaseConsumer = kafka_config()
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut partitions = TopicPartitionList::new();
    partitions
        .add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&partitions).expect("assign the sink topic");
    consumer
}

/// Reads a tombstone immediately followed by a value for the same key as the one update
/// it is.
fn normalize(records: &[Record]) -> Vec<Record> {
    let mut out: Vec<Record> = Vec::new();
    for r in records {
        if let (Some(prev), (_, Some(_))) = (out.last(), r)
            && prev.1.is_none()
            && prev.0 == r.0
        {
            out.pop();
        }
        out.push(r.clone());
    }
    out
}

/// A value as Flink's JSON format writes it with decimals as plain numbers: decimals at the
/// column's scale, timestamps ISO-8601 without a zone.
fn json(value: &Value, ty: DataType) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Int32(i) => i.to_string(),
        Value::Int64(i) => i.to_string(),
        Value::Decimal(d) => match ty {
            DataType::Decimal { scale, .. } => d.rescale(scale).unwrap_or(*d).to_string(),
            _ => d.to_string(),
        },
        Value::Float64(f) if f.0.fract() == 0.0 && f.0.abs() < 1e7 => format!("{:.1}", f.0),
        Value::Float64(f) => f.0.to_string(),
        Value::String(s) => serde_json::to_string(s).unwrap(),
        Value::Boolean(b) => b.to_string(),
        // Flink's JSON writes a timestamp in ISO-8601 with the fraction's trailing zeros
        // dropped (`2026-08-30T10:00:00.5`).
        Value::Timestamp(ms) => {
            let iso = streamform_ir::time::format_rfc3339(*ms);
            let iso = iso.trim_end_matches('Z');
            let iso = match iso.split_once('.') {
                Some((whole, fraction)) => match fraction.trim_end_matches('0') {
                    "" => whole.to_string(),
                    fraction => format!("{whole}.{fraction}"),
                },
                None => iso.to_string(),
            };
            format!("\"{iso}\"")
        }
        // ISO-8601, as Flink's JSON writes and reads a DATE.
        Value::Date(d) => format!("\"{}\"", streamform_ir::time::format_date(*d)),
    }
}

fn object(fields: &[(&str, String)]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|(name, v)| format!("{}:{v}", serde_json::to_string(name).unwrap()))
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// A row of `schema` as a JSON object: every column, or with `only_key` the `key` columns
/// alone (a Kafka record's key).
fn render_row(schema: &[Field], key: &[String], row: &[Value], only_key: bool) -> String {
    let fields: Vec<(&str, String)> = schema
        .iter()
        .zip(row)
        .filter(|(f, _)| !only_key || key.contains(&f.name))
        .map(|(f, v)| (f.name.as_str(), json(v, f.ty)))
        .collect();
    object(&fields)
}

/// What one fixture needs on Kafka: each event as JSON with the topic of its source, in the
/// fixture's order (for an upsert source, each under its key, a delete as a tombstone), the
/// sink topic, the records the simulator's changelog implies there, and how the two sides
/// are compared.
struct Case {
    events: Vec<(String, Record)>,
    sink_topic: String,
    expected: Vec<Record>,
    /// Whether the model reads several sources, whose records Flink interleaves as they
    /// come (docs/running-on-flink.md, "Several sources").
    several_sources: bool,
    /// Per event, how many of `expected` the simulator had emitted once it was delivered.
    ends: Vec<usize>,
}

/// Reads the fixture from the scratch project and runs the simulator on it.
fn case(project: &Path, fixture: &str) -> Case {
    let db = Database::default();
    let p = load_project(&db, project).expect("load the scratch project");
    let file = *p
        .fixtures(&db)
        .iter()
        .find(|f| f.path(&db).ends_with(fixture))
        .expect("the fixture");
    let def = fixture_def(&db, p, file);
    assert!(def.diagnostics.is_empty(), "{:?}", def.diagnostics);
    assert!(
        def.watermarks.is_empty(),
        "{fixture}: a watermark item cannot be played on Flink; move event time with events"
    );
    let model = def.model.clone().unwrap();
    let chain = upstream_chain(&db, p, model.clone())
        .clone()
        .expect("the model compiles");
    // Each source the simulator numbers, by its first Source node.
    let sources: Vec<&streamform_ir::Node> = def
        .sources
        .iter()
        .map(|name| {
            chain
                .iter()
                .flat_map(|plan| &plan.nodes)
                .find(|n| matches!(&n.op, Operator::Source { name: s, .. } if s == name))
                .expect("a Source node of each source")
        })
        .collect();
    let events = def
        .events
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let source = sources[def.event_sources.get(i).copied().unwrap_or(0)];
            let Operator::Source {
                connector: Connector::Kafka { topic },
                ..
            } = &source.op
            else {
                panic!("the fixture's sources are kafka sources");
            };
            // An upsert source's records are keyed by its key columns, rendered as its
            // values are.
            let source_key: Vec<String> = match &source.changelog {
                Changelog::Upsert(key) => key.clone(),
                _ => Vec::new(),
            };
            let render = |only_key| render_row(&source.schema, &source_key, row, only_key);
            let key = (!source_key.is_empty()).then(|| render(true));
            let value = (!def.deletes.contains(&i)).then(|| render(false));
            (topic.clone(), (key, value))
        })
        .collect();
    let mut sim = streamform_sim::Simulator::new(&chain).expect("the plans run");
    let mut ends = Vec::with_capacity(def.events.len());
    for (i, row) in def.events.iter().enumerate() {
        let source = def.event_sources.get(i).copied().unwrap_or(0);
        if def.deletes.contains(&i) {
            sim.push_delete_to(source, row)
        } else {
            sim.push_to(source, row)
        }
        .expect("the simulator runs the fixture");
        ends.push(sim.changes_emitted());
    }
    let output = sim.finish().expect("the simulator runs the fixture");
    let plan = chain.last().unwrap();
    let sink = plan.sink();
    let Operator::Sink {
        target: Some(target),
        ..
    } = &sink.op
    else {
        panic!("model `{model}` declares a sink");
    };
    let Connector::Kafka { topic: sink_topic } = &target.connector else {
        panic!("model `{model}` has a kafka sink");
    };
    let key: Vec<String> = match plan.materialized() {
        Materialized::Upsert { key } => key.clone(),
        Materialized::Append => Vec::new(),
    };
    let render = |row: &[Value], only_key: bool| render_row(&sink.schema, &key, row, only_key);
    let expected = output
        .changes
        .iter()
        .map(|c| {
            let k = (!key.is_empty()).then(|| render(c.row, true));
            match c.op {
                streamform_sim::Op::Delete => (k, None),
                _ => (k, Some(render(c.row, false))),
            }
        })
        .collect();
    Case {
        events,
        sink_topic: sink_topic.clone(),
        expected,
        several_sources: sources.len() > 1,
        ends,
    }
}

/// Applies a project and returns the job ids its applied record holds.
fn apply(project: &Path) -> Vec<String> {
    let out = streamform(&["apply", "--timeout", "120"], project);
    assert_eq!(
        out.status.code(),
        Some(0),
        "apply failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let record = record_of(project);
    assert_eq!(record.jobs.len(), 1, "one statement set, one job");
    record.jobs
}

/// Why Flink failed `job`, if it did: the deepest `Caused by:` of its root exception. A job
/// of the whole application fails when any of its sinks does, and then the sink under test
/// stops short; this says why instead of leaving a short list of records to explain.
fn failure(job: &str) -> Option<String> {
    let url = format!("{}/jobs/{job}/exceptions", env().rest);
    let body = ureq::get(&url)
        .call()
        .ok()?
        .body_mut()
        .read_to_string()
        .ok()?;
    let exceptions: serde_json::Value = serde_json::from_str(&body).ok()?;
    // Flink 2.2 lists the failures in `exceptionHistory` only.
    let trace = exceptions["rootException"]
        .as_str()
        .or_else(|| exceptions["exceptionHistory"]["entries"][0]["stacktrace"].as_str())?;
    trace
        .lines()
        .rev()
        .find(|l| l.starts_with("Caused by:"))
        .or_else(|| trace.lines().next())
        .map(str::to_string)
}

fn cancel(job: &str) {
    let url = format!("{}/jobs/{job}?mode=cancel", env().rest);
    let _ = ureq::patch(&url).send_empty();
}

/// Runs one example fixture on Flink and on the simulator and compares what reaches the
/// sink topic.
fn differential(example: &str, fixture: &str) {
    differential_fixture(example, fixture, Compare::InOrder);
}

/// Runs one example fixture of a window model on Flink and on the simulator and compares
/// what reaches the sink topic window end by window end: the ends must come in the same
/// order (a window fires after every window that ends before it), and the rows of one end
/// as a multiset, since Flink does not fix the order of one watermark's rows among keys
/// (docs/windows.md). Each row names its window in its `window_end` column.
fn differential_windows(example: &str, fixture: &str) {
    differential_fixture(example, fixture, Compare::WindowEnds);
}

/// Runs one example fixture of an OVER aggregation on Flink and on the simulator and
/// compares what reaches the sink topic partition by partition: each partition's rows
/// must come in the same order (by time, then arrival), while Flink does not fix the
/// order of one watermark's rows among partitions (docs/over.md). `partition` names the
/// columns that tell the partitions apart.
fn differential_over(example: &str, fixture: &str, partition: &[&str]) {
    let partition = partition.iter().map(|c| c.to_string()).collect();
    differential_fixture(example, fixture, Compare::PerPartition(partition));
}

/// Runs one example fixture, in a copy of its example that keeps its model's sink alone,
/// on Flink and on the simulator, and compares what reaches the sink topic as `compare`
/// says.
fn differential_fixture(example: &str, fixture: &str, compare: Compare) {
    let suffix = run_suffix(example);
    let project = scratch_project_for(
        example,
        &suffix,
        &env().gateway,
        Some(&model_of(example, fixture)),
    );
    let case = case(project.path(), fixture);
    assert!(!case.expected.is_empty(), "the fixture emits records");
    differential_run(
        project.path(),
        &format!("{example}/{fixture}"),
        &case,
        compare,
    );
}

/// How Flink's records are compared with the simulator's.
enum Compare {
    /// In order (per event as a multiset over several sources).
    InOrder,
    /// Window end by window end, each end's rows as a multiset.
    WindowEnds,
    /// Partition by partition (by the values of these columns), each in order.
    PerPartition(Vec<String>),
}

/// A record's value, read as JSON.
fn json_value(label: &str, side: &str, r: &Record) -> serde_json::Value {
    r.1.as_deref()
        .and_then(|v| serde_json::from_str(v).ok())
        .unwrap_or_else(|| panic!("{label}: {side} wrote a record without a JSON value: {r:?}"))
}

/// The records grouped by the values of the `partition` columns, each group in the order
/// its records came.
fn by_partition(
    label: &str,
    side: &str,
    records: &[Record],
    partition: &[String],
) -> std::collections::BTreeMap<String, Vec<Record>> {
    let mut groups: std::collections::BTreeMap<String, Vec<Record>> = Default::default();
    for r in records {
        let value = json_value(label, side, r);
        let key: Vec<String> = partition.iter().map(|c| value[c].to_string()).collect();
        groups.entry(key.join(",")).or_default().push(r.clone());
    }
    groups
}

/// Applies the project, plays the case's events on Flink and compares what reaches the sink
/// topic with the simulator's changelog.
fn differential_case(project: &Path, label: &str, case: &Case) {
    differential_run(project, label, case, Compare::InOrder);
}

/// The records grouped by window end, in the order they came, each group sorted; the ends
/// must not go back.
fn by_window_end(label: &str, side: &str, records: &[Record]) -> Vec<(String, Vec<Record>)> {
    let mut groups: Vec<(String, Vec<Record>)> = Vec::new();
    for r in records {
        let value = json_value(label, side, r);
        let end = value["window_end"].as_str().map(str::to_string);
        let end =
            end.unwrap_or_else(|| panic!("{label}: {side}'s record has no window_end: {r:?}"));
        match groups.last_mut() {
            Some((last, rows)) if *last == end => rows.push(r.clone()),
            Some((last, _)) if *last > end => panic!(
                "{label}: {side} wrote the window ending {end} after one ending {last}: {records:#?}"
            ),
            _ => groups.push((end, vec![r.clone()])),
        }
    }
    for (_, rows) in &mut groups {
        rows.sort();
    }
    groups
}

/// [`differential_case`], comparing as `compare` says.
fn differential_run(project: &Path, label: &str, case: &Case, compare: Compare) {
    let windows = !matches!(compare, Compare::InOrder);
    let jobs = apply(project);
    let want = normalize(&case.expected);
    // Over several sources, each event is produced once Flink wrote what the one before
    // it made, so that Flink reads them in the fixture's order: where the records of each
    // event end on the sink topic.
    let mut boundaries: Vec<usize> = Vec::new();
    let got = if case.several_sources && !windows {
        let mut sink = Paced::new(&case.sink_topic);
        let mut made = 0;
        for ((topic, record), &end) in case.events.iter().zip(&case.ends) {
            produce(topic, std::slice::from_ref(record));
            if end > made {
                sink.until(normalize(&case.expected[..end]).len());
            } else {
                // Nothing to wait for: give Flink the time to read it.
                std::thread::sleep(Duration::from_millis(1500));
                sink.poll_for(Duration::from_millis(200));
            }
            made = end;
            boundaries.push(normalize(&sink.records).len());
        }
        sink.settle();
        sink.records
    } else {
        for (topic, record) in &case.events {
            produce(topic, std::slice::from_ref(record));
        }
        consume(&case.sink_topic, want.len())
    };
    let failed: Vec<String> = jobs.iter().filter_map(|j| failure(j)).collect();
    for job in &jobs {
        cancel(job);
    }
    eprintln!(
        "{label}: {} records on {}: {got:?}",
        got.len(),
        case.sink_topic
    );
    let got_normalized = normalize(&got);
    let message = || {
        format!(
            "{label}: Flink wrote {got:#?}\nthe simulator's changelog implies {:#?}\nFlink's job failed: {failed:?}",
            case.expected
        )
    };
    if let Compare::PerPartition(partition) = &compare {
        assert_eq!(
            by_partition(label, "Flink", &got_normalized, partition),
            by_partition(label, "the simulator", &want, partition),
            "{}",
            message()
        );
    } else if windows {
        assert_eq!(
            by_window_end(label, "Flink", &got_normalized),
            by_window_end(label, "the simulator", &want),
            "{}",
            message()
        );
    } else if case.several_sources {
        // One event's records (a join's fan-out) come in an order of Flink's state
        // backend, which differs between versions: each event's are compared as a
        // multiset (docs/joins.md, "Order").
        let expected_bounds: Vec<usize> = case
            .ends
            .iter()
            .map(|&end| normalize(&case.expected[..end]).len())
            .collect();
        assert_eq!(
            per_event(&got_normalized, &boundaries),
            per_event(&want, &expected_bounds),
            "{}",
            message()
        );
    } else {
        assert_eq!(got_normalized, want, "{}", message());
    }
}

/// The records cut at `bounds` (where each event's records end) into one sorted group per
/// event, and what follows the last bound.
fn per_event(records: &[Record], bounds: &[usize]) -> Vec<Vec<Record>> {
    let mut groups = Vec::new();
    let mut from = 0;
    for &to in bounds.iter().chain(std::iter::once(&records.len())) {
        let to = to.clamp(from, records.len());
        let mut group = records[from..to].to_vec();
        group.sort();
        groups.push(group);
        from = to;
    }
    groups
}

/// A sink topic read as events are produced: one consumer from the beginning, its records
/// kept.
struct Paced {
    consumer: BaseConsumer,
    records: Vec<Record>,
}

impl Paced {
    fn new(topic: &str) -> Paced {
        let consumer = reader(topic, &format!("streamform-differential-paced-{topic}"));
        Paced {
            consumer,
            records: Vec::new(),
        }
    }

    /// Reads what arrives within `d`.
    fn poll_for(&mut self, d: Duration) {
        let started = Instant::now();
        while started.elapsed() < d {
            if let Some(message) = self.consumer.poll(Duration::from_millis(100)) {
                let message = message.expect("read the sink topic");
                let as_text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                self.records
                    .push((message.key().map(as_text), message.payload().map(as_text)));
            }
        }
    }

    /// Reads until `want` records (normalized) arrived, or the timeout passed.
    fn until(&mut self, want: usize) {
        let started = Instant::now();
        while normalize(&self.records).len() < want && started.elapsed() < RECORD_TIMEOUT {
            self.poll_for(Duration::from_millis(100));
        }
    }

    /// Reads on until two seconds bring nothing new.
    fn settle(&mut self) {
        loop {
            let before = self.records.len();
            self.poll_for(Duration::from_secs(2));
            if self.records.len() == before {
                return;
            }
        }
    }
}

/// A small deterministic generator (SplitMix64), so a seed names a run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// A random value of `ty` written as a fixture writes it: small numbers, zero, negatives,
/// decimals to their scale (at most four places), a few strings; null now and then unless
/// `nullable` is false; timestamps on one day, to the millisecond (the models played have
/// no event time, so their order does not matter).
fn random_value(rng: &mut Rng, ty: DataType, nullable: bool) -> String {
    if nullable && rng.below(8) == 0 {
        return "null".into();
    }
    match ty {
        DataType::Int32 | DataType::Int64 => rng
            .pick(&["0", "1", "2", "3", "-1", "-7", "42", "1000", "65536"])
            .to_string(),
        DataType::Decimal { precision, scale } => {
            let places = u32::from(scale.min(4));
            let whole_digits = u32::from((precision - scale).min(5));
            let whole = rng.below(10u64.pow(whole_digits));
            let fraction = rng.below(10u64.pow(places));
            let sign = if rng.below(4) == 0 { "-" } else { "" };
            if places == 0 {
                format!("{sign}{whole}")
            } else {
                format!("{sign}{whole}.{fraction:0width$}", width = places as usize)
            }
        }
        DataType::Float64 => rng
            .pick(&["0.5", "-1.25", "3.0", "10.0", "0.0"])
            .to_string(),
        DataType::String => rng
            .pick(&["\"a\"", "\"b\"", "\"\"", "\"x y\"", "\"über\""])
            .to_string(),
        DataType::Boolean => rng.pick(&["true", "false"]).to_string(),
        DataType::Timestamp => {
            let (h, m, sec, ms) = (rng.below(24), rng.below(60), rng.below(60), rng.below(1000));
            format!("\"2026-11-30T{h:02}:{m:02}:{sec:02}.{ms:03}Z\"")
        }
        DataType::Date => rng
            .pick(&["\"2026-11-30\"", "\"2024-02-29\"", "\"1969-12-31\""])
            .to_string(),
    }
}

/// A random fixture of `model` in `project`: 1 to 20 events of its source, no null in a
/// column named like a key column (a null key stops Flink's upsert sink) nor in the
/// source's event time (every event needs one).
fn random_fixture(project: &Path, model: &str, rng: &mut Rng) -> String {
    let db = Database::default();
    let p = load_project(&db, project).expect("load the scratch project");
    let chain = upstream_chain(&db, p, model.to_string())
        .clone()
        .expect("the model compiles");
    let key: Vec<String> = chain
        .iter()
        .flat_map(|plan| match plan.materialized() {
            Materialized::Upsert { key } => key.clone(),
            Materialized::Append => Vec::new(),
        })
        .collect();
    let source = &chain[0].nodes[0];
    let event_time = match &source.op {
        Operator::Source {
            event_time: Some(t),
            ..
        } => Some(t.column.clone()),
        _ => None,
    };
    let mut text = format!("model: {model}\ngiven:\n");
    for _ in 0..1 + rng.below(20) {
        let fields: Vec<String> = source
            .schema
            .iter()
            .map(|f| {
                let nullable = !key.contains(&f.name) && event_time.as_ref() != Some(&f.name);
                let value = random_value(rng, f.ty, nullable);
                format!("{}: {value}", f.name)
            })
            .collect();
        text.push_str(&format!("  - {{{}}}\n", fields.join(", ")));
    }
    text.push_str("expect: []\n");
    text
}

/// Random fixtures for example models, played on Flink and on the simulator:
/// `STREAMFORM_IT_RANDOM_CASES` cases (6 by default), from `STREAMFORM_IT_SEED` (a fixed
/// seed by default, so CI replays the same cases; any other seed explores). A fixture the
/// simulator refuses (an overflow) or that emits nothing is drawn again.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn random_fixtures_on_flink_match_the_simulator() {
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let cases = number("STREAMFORM_IT_RANDOM_CASES", 6);
    let seed = number("STREAMFORM_IT_SEED", 20_261_201);
    let mut rng = Rng(seed);
    let models = [
        ("customer-metrics", "customer_metrics"),
        ("coverage", "top_categories"),
        ("coverage", "line_stats"),
        ("coverage", "averages"),
        ("coverage", "labels"),
        ("coverage", "text_and_numbers"),
    ];
    for i in 0..cases {
        let (example, model) = models[i as usize % models.len()];
        let suffix = run_suffix(example);
        let project = scratch_project_for(example, &suffix, &env().gateway, Some(model));
        let fixture = project.path().join("tests/random.yml");
        let case = loop {
            std::fs::write(&fixture, random_fixture(project.path(), model, &mut rng)).unwrap();
            let db = Database::default();
            let p = load_project(&db, project.path()).unwrap();
            let file = *p
                .fixtures(&db)
                .iter()
                .find(|f| f.path(&db).ends_with("random.yml"))
                .unwrap();
            let run = streamform_db::db::fixture_result(&db, p, file)
                .clone()
                .expect("the random fixture checks");
            // The events reach every model that reads the source, and one that stops on
            // them (a string that does not cast) stops the whole job on Flink: such a draw
            // is drawn again.
            let events = &fixture_def(&db, p, file).events;
            let source = |chain: &[streamform_ir::ModelPlan]| match &chain[0].nodes[0].op {
                Operator::Source { name, .. } => name.clone(),
                _ => String::new(),
            };
            let ours = source(&upstream_chain(&db, p, model.to_string()).clone().unwrap());
            let all_run = streamform_db::db::model_files(&db, p).keys().all(|other| {
                match upstream_chain(&db, p, other.clone()).clone() {
                    Some(chain) if source(&chain) == ours => {
                        streamform_sim::run(&chain, events).is_ok()
                    }
                    _ => true,
                }
            });
            if run.error.is_none() && run.changes_emitted > 0 && all_run {
                break case(project.path(), "tests/random.yml");
            }
        };
        eprintln!(
            "random case {i} (seed {seed}): {example}/{model}\n{}",
            std::fs::read_to_string(&fixture).unwrap()
        );
        differential_case(
            project.path(),
            &format!("{example}/random-{i}-{model}"),
            &case,
        );
    }
}

#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn customer_metrics_on_flink_matches_the_simulator() {
    differential("customer-metrics", "tests/customer_metrics.yml");
}

#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn big_customers_on_flink_matches_the_simulator_including_the_delete() {
    differential("order-pipeline", "tests/big_customers.yml");
}

#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn top_categories_on_flink_matches_the_simulator() {
    differential("coverage", "tests/top_categories.yml");
}

/// docs/changing-tables.md: an upsert source read through Flink's changelog normalization
/// (an update, a repeated row, a tombstone for a held key and for an absent one) and a
/// GROUP BY folding each update as a retraction and an addition give the simulator's
/// changelog, intermediate results and single-row groups' delete and insert included.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn status_counts_on_flink_match_the_simulator_over_an_upsert_source() {
    differential("order-status", "tests/status_counts.yml");
}

/// docs/changing-tables.md: a WHERE over an upsert source: an order enters the sink when its
/// amount reaches 100, and a tombstone takes it out when its amount drops below or it is
/// deleted.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn big_orders_on_flink_match_the_simulator_filtering_an_upsert_source() {
    differential("order-status", "tests/big_orders.yml");
}

/// docs/changing-tables.md: an upsert source written to an upsert sink as it is normalized: a
/// repeat and the tombstone of an absent key write nothing, a deleted key comes back.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn latest_orders_on_flink_match_the_simulator_copying_an_upsert_source() {
    differential("order-status", "tests/latest_orders.yml");
}

/// docs/flink-backend.md, "Planner options": an upsert source copied to an upsert sink under
/// its own key, where nothing asks for an update's old row: Flink 2.2 keeps the source's
/// normalization only because the generated application sets
/// `table.exec.source.cdc-events-duplicate`, so a repeated row and the tombstone of a key
/// the source does not hold write nothing, as in the simulator.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn an_upsert_source_copied_to_an_upsert_sink_on_flink_matches_the_simulator_normalized() {
    differential(
        "tests/cases/build-upsert-source-to-upsert-sink/project",
        "tests/latest_orders.yml",
    );
}

/// docs/changing-tables.md: a WHERE over an aggregate of an upsert source: a status enters
/// the sink when its count reaches 2 and is deleted when it drops below (Flink writes the
/// retraction as a tombstone).
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn busy_statuses_on_flink_match_the_simulator_filtering_an_aggregate_of_an_upsert_source() {
    differential("order-status", "tests/busy_statuses.yml");
}

/// docs/sql.md: an upsert model over an append input keeps the last row per key on Flink too, and a
/// WHERE over it deletes a key whose latest row stops matching.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn big_latest_on_flink_matches_the_simulator_keeping_the_last_row_per_key() {
    differential("coverage", "tests/big_latest.yml");
}

/// docs/sql.md, "Reading": a WITH clause and a subquery in FROM, lowered into the model's
/// own nodes, give the same rows on Flink.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn category_steps_on_flink_match_the_simulator_with_a_with_clause_and_a_subquery() {
    differential("coverage", "tests/category_steps.yml");
}

/// docs/sql.md: aggregates over expressions (sum(price * qty), count(1), max over a computed
/// decimal) compute the same values and types on Flink.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn line_stats_on_flink_matches_the_simulator_aggregating_expressions() {
    differential("coverage", "tests/line_stats.yml");
}

/// docs/sql.md: AVG over int32, int64, float64, a decimal and a decimal expression, and
/// COUNT(DISTINCT x) over a column and an expression, give the same values and types on
/// Flink, including the row that moves every sum and count but no result (nothing emitted).
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn averages_on_flink_match_the_simulator_with_avg_and_count_distinct() {
    differential("coverage", "tests/averages.yml");
}

/// Comparisons, AND, OR and NOT with nulls give the same values on Flink; `AND` stops at a
/// false left side and `OR` at a true one, as in the simulator: the event with `qty` 0
/// divides by it only on the side neither evaluates (a `/ by zero` would stop the job).
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn predicates_on_flink_match_the_simulator_with_short_circuit_and_or() {
    differential("coverage", "tests/predicates.yml");
}

/// docs/sql.md: CASE (searched, simple, without ELSE), COALESCE, NULLIF, BETWEEN and IN, with
/// nulls, give the same values and types on Flink.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn labels_on_flink_match_the_simulator_with_case_coalesce_nullif_between_and_in() {
    differential("coverage", "tests/labels.yml");
}

/// docs/sql.md: the string and numeric functions, LIKE and `||`, with nulls, give the same values
/// and types on Flink.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn text_and_numbers_on_flink_match_the_simulator_with_string_and_numeric_functions() {
    differential("coverage", "tests/text_and_numbers.yml");
}

/// docs/sql.md: timestamp literals, CAST between strings and timestamps, comparisons and EXTRACT
/// give the same values on Flink.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn times_on_flink_match_the_simulator_with_timestamp_literals_casts_and_extract() {
    differential("coverage", "tests/times.yml");
}

/// A float64 grouping key: 0.0 and -0.0 are two groups on Flink too.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn ratio_counts_on_flink_match_the_simulator_grouping_zero_and_negative_zero_apart() {
    differential("coverage", "tests/ratio_counts.yml");
}

/// docs/sql.md: FLOOR and CEIL of a timestamp to SECOND, MINUTE, HOUR and DAY (a whole time kept by
/// CEIL, times before 1970, a null) give the same values on Flink.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn time_buckets_on_flink_match_the_simulator_with_floor_and_ceil_to_a_unit() {
    differential("coverage", "tests/time_buckets.yml");
}

/// docs/sql.md: timestamps plus and minus intervals (units, fractions of a second, a DAY TO SECOND
/// range, 1500 days, calendar months cut to a shorter month's end, before 1970) give the
/// same values on Flink.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn time_shifts_on_flink_match_the_simulator_with_interval_arithmetic() {
    differential("coverage", "tests/time_shifts.yml");
}

/// Strings read by CAST (booleans, Java's doubles, decimals with exponents, integers with
/// fractions, 24:00:00) give the same values on Flink.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn string_casts_on_flink_match_the_simulator() {
    differential("coverage", "tests/string_casts.yml");
}

/// An event-time source (WATERMARK FOR, the on-time view of late_events: drop) with events
/// in order, aggregated under a retention Flink gets as a STATE_TTL hint, gives the same
/// changelog on Flink. Lateness and expiry are not asserted: Flink's watermarks are
/// periodic and its state TTL counts processing time.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn visitor_clicks_on_flink_match_the_simulator_on_event_time_with_retention() {
    differential("coverage", "tests/visitor_clicks.yml");
}

/// A tumbling window (an upsert sink keyed by page and window) gives Flink's rows: one
/// per page and minute, final when a later view moves the watermark past the minute.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn tumbling_windows_on_flink_match_the_simulator() {
    differential_windows("window-metrics", "tests/views_per_minute_in_order.yml");
}

/// A hopping window (an append sink): each view in two windows, AVG and MAX per window.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn hopping_windows_on_flink_match_the_simulator() {
    differential_windows("window-metrics", "tests/load_per_minute.yml");
}

/// A cumulating window behind a WHERE: every step from a page's first view repeats its
/// count so far.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn cumulating_windows_on_flink_match_the_simulator() {
    differential_windows("window-metrics", "tests/views_so_far.yml");
}

/// A window of windows: per-minute counts that keep `window_time` as their time attribute,
/// summed per hour by a second tumbling window.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn windows_of_windows_on_flink_match_the_simulator() {
    differential_windows("window-metrics", "tests/hourly_views.yml");
}

/// A session window partitioned by its key: sessions that merge when one view falls within
/// the gap of another, or exactly at its end.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn session_windows_on_flink_match_the_simulator() {
    differential_windows("window-metrics", "tests/user_sessions.yml");
}

/// Every statement `build` generates for every example, and for the test projects that
/// show what Flink plans differently from a first reading or that it takes a hint in, is
/// accepted by Flink: each is applied whole. (A differential test applies only the sink
/// its fixture reads, with the models before it.)
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn flink_accepts_every_statement_of_every_example() {
    let mut examples: Vec<String> = std::fs::read_dir(repo_root().join("examples"))
        .expect("examples")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.join("streamform.yml").exists())
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    examples.sort();
    assert!(examples.len() >= 10, "{examples:?}");
    // first-orders needs Flink 2.2, and apply refuses it on older versions (its own test
    // checks the refusal).
    if flink_version() < (2, 2) {
        examples.retain(|e| e != "first-orders");
    }
    for example in examples.iter().map(String::as_str).chain([
        // Two copies of an event-time column, the second written as a plain timestamp.
        "tests/cases/build-time-attribute-copies/project",
        // An aggregate over a window model upserted by its window and key.
        "tests/cases/window-upsert-read-by-aggregate/project",
        // A join and an aggregate with retention: a state TTL hint on both sides.
        "tests/cases/explain-join-retention/project",
        // A column a join renamed, grouped and written under the name it was written with.
        "tests/cases/build-join-keeps-written-names/project",
        // A UNION ALL whose later SELECT leaves an expression unnamed.
        "tests/cases/build-union-later-select-names/project",
    ]) {
        let suffix = run_suffix(example);
        let project = scratch_project(example, &suffix, &env().gateway);
        for job in apply(project.path()) {
            cancel(&job);
        }
    }
}

/// Keeping one model's sink leaves a project that checks, with that sink alone: for every
/// model with a sink in every example.
#[test]
fn a_copy_keeping_one_sink_checks_and_holds_that_sink_alone() {
    let mut kept = 0;
    for entry in std::fs::read_dir(repo_root().join("examples")).expect("examples") {
        let path = entry.expect("an entry").path();
        let Ok(text) = std::fs::read_to_string(path.join("streamform.yml")) else {
            continue;
        };
        let db = Database::default();
        let project = load_project(&db, &path).expect("the example loads");
        let with_sinks: Vec<String> = streamform_db::db::model_files(&db, project)
            .keys()
            .filter(|m| sink_of(&db, project, m).is_some())
            .cloned()
            .collect();
        for model in &with_sinks {
            let dir = tempfile::tempdir().unwrap();
            copy_dir(&path, dir.path());
            std::fs::write(
                dir.path().join("streamform.yml"),
                only_sink_of(&text, model),
            )
            .unwrap();
            let db = Database::default();
            let copy = load_project(&db, dir.path()).expect("the copy loads");
            let problems = streamform_db::db::check_report(&db, copy);
            assert!(
                problems.is_empty(),
                "{path:?} keeping {model}: {problems:?}"
            );
            let sinks: Vec<&String> = streamform_db::db::model_files(&db, copy)
                .keys()
                .filter(|m| sink_of(&db, copy, m).is_some())
                .collect();
            assert_eq!(sinks, [model], "{path:?}");
            kept += 1;
        }
    }
    assert!(kept >= 60, "{kept}");
}

/// The sink target of `model`, if it has one.
fn sink_of(
    db: &Database,
    project: streamform_db::Project,
    model: &str,
) -> Option<streamform_ir::SinkTarget> {
    let chain = upstream_chain(db, project, model.to_string()).clone()?;
    match &chain.last()?.sink().op {
        Operator::Sink { target, .. } => target.clone(),
        _ => None,
    }
}

/// Each example project has a differential test of one of its fixtures at least: a new
/// example needs one, or Flink would never be shown to compute what the simulator does.
#[test]
fn every_example_is_applied_by_a_differential_test() {
    let source = std::fs::read_to_string(repo_root().join("streamform/tests/differential.rs"))
        .expect("this file");
    for entry in std::fs::read_dir(repo_root().join("examples")).expect("examples") {
        let path = entry.expect("an entry").path();
        if !path.join("streamform.yml").exists() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            source.contains(&format!("differential(\"{name}\"",))
                || source.contains(&format!("differential_windows(\"{name}\""))
                || source.contains(&format!("differential_over(\"{name}\"")),
            "example `{name}` has no differential test"
        );
    }
}

/// What Flink's REST API lists: every job it knows, in any state.
fn overview() -> Vec<serde_json::Value> {
    let url = format!("{}/jobs/overview", env().rest);
    let body = ureq::get(&url)
        .call()
        .expect("Flink's REST API")
        .body_mut()
        .read_to_string()
        .unwrap();
    let overview: serde_json::Value = serde_json::from_str(&body).unwrap();
    overview["jobs"].as_array().unwrap().clone()
}

/// The ids of `project`'s jobs (its name is unique to the test) that Flink knows, in any
/// state, sorted: tests that run beside it start jobs of their own.
fn jobs_of(project: &Path) -> Vec<String> {
    jobs_named(project, |_| true)
}

/// The ids of `project`'s jobs whose state `keep` accepts, sorted.
fn jobs_named(project: &Path, keep: impl Fn(&serde_json::Value) -> bool) -> Vec<String> {
    let name = std::fs::read_to_string(project.join("streamform.yml"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("name: ").map(str::to_string))
        .unwrap();
    let mut jobs: Vec<String> = overview()
        .iter()
        .filter(|j| j["name"] == format!("streamform/{name}/local") && keep(&j["state"]))
        .map(|j| j["jid"].as_str().unwrap().to_string())
        .collect();
    jobs.sort();
    jobs
}

/// A cluster without the Kafka connector rejects the first view that reads a Kafka table
/// (a view is validated, and its sources resolved, when it is created; in order-pipeline,
/// whose source runs on event time, that is the source's on-time view): apply prints the
/// statement and Flink's reason, exits 1, starts no job, and leaves the previous record as
/// it was.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn a_rejected_view_is_exit_1_with_flinks_reason_and_the_record_untouched() {
    let suffix = run_suffix("rejected");
    let project = scratch_project("order-pipeline", &suffix, &env().bare_gateway);
    let jobs_before = jobs_of(project.path());
    let out = streamform(&["apply", "--timeout", "120"], project.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.ends_with("\nok: source orders\n"), "{stdout}");
    assert!(
        stderr.contains("error: Flink rejected the on-time view of source `orders`\n  statement:\n    CREATE TEMPORARY VIEW `orders` AS SELECT * FROM `orders_raw` WHERE CURRENT_WATERMARK(`ordered_at`) IS NULL OR `ordered_at` >= CURRENT_WATERMARK(`ordered_at`);\n  reason:\n    org.apache.flink.table.api.ValidationException: Unable to create a source for reading table 'default_catalog.default_database.orders_raw'.\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Could not find any factory for identifier 'kafka'"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no job was started; no attempt was recorded"),
        "{stderr}"
    );
    assert!(!stderr.contains("\tat "), "no stack frames: {stderr}");
    assert!(
        !project
            .path()
            .join(".streamform/applied/local.json")
            .exists(),
        "no record: nothing was submitted that could start a job"
    );
    assert_eq!(jobs_of(project.path()), jobs_before, "no job was started");
}

/// Connector options of a sink are resolved only when the statement set is planned, which
/// apply does when it compiles the plan: a missing sink connector surfaces there, before any
/// attempt is recorded or any job touched, and apply reports it the same way.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn a_statement_set_rejected_late_is_reported_the_same_way() {
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join("models")).unwrap();
    std::fs::write(
        dir.join("sources.yml"),
        "sources:\n  readings:\n    connector: file\n    path: /nonexistent/readings\n    format: csv\n    schema:\n      sensor: string\n      reading: int64\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("models/high_readings.sql"),
        "SELECT sensor, reading FROM source('readings') WHERE reading > 10\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("streamform.yml"),
        format!(
            "name: {}\nversion: 1\n\nmodels:\n  high_readings:\n    sink:\n      connector: kafka\n      topic: high-readings\n      format: json\n\ntargets:\n  local:\n    backend: flink\n    flink:\n      gateway: {}\n    kafka:\n      bootstrap_servers: {}\n",
            run_suffix("late"),
            env().bare_gateway,
            env().kafka
        ),
    )
    .unwrap();
    let jobs_before = jobs_of(dir);
    let out = streamform(&["apply", "--timeout", "120"], dir);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.ends_with("ok: source readings\nok: model high_readings\nok: sink high_readings\n"),
        "{stdout}"
    );
    assert!(
        stderr.contains("error: Flink rejected the compiled plan of the statement set\n  statement:\n    COMPILE PLAN 'file://"),
        "{stderr}"
    );
    assert!(
        stderr.contains("FOR STATEMENT SET\n    BEGIN\n      INSERT INTO `sink_high_readings` SELECT * FROM `high_readings`;\n    END;\n  reason:\n"),
        "{stderr}"
    );
    assert!(stderr.contains("no attempt was recorded"), "{stderr}");
    assert!(
        stderr.contains("Could not find any factory for identifier 'kafka'"),
        "{stderr}"
    );
    assert!(
        !dir.join(".streamform/applied/local.json").exists(),
        "nothing was submitted, so nothing was recorded"
    );
    assert_eq!(jobs_of(dir), jobs_before, "no job was started");
}

#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn a_wrong_gateway_port_is_exit_2_naming_the_address() {
    let project = scratch_project(
        "customer-metrics",
        &run_suffix("port"),
        "http://127.0.0.1:8089",
    );
    let out = streamform(&["apply"], project.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("error: cannot reach the SQL Gateway at http://127.0.0.1:8089: "),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !project
            .path()
            .join(".streamform/applied/local.json")
            .exists()
    );
}

/// The record is written before anything that can start a job, so a record that cannot be
/// written stops apply with nothing started: exit 2.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn a_record_that_cannot_be_written_is_exit_2_and_starts_nothing() {
    let project = scratch_project("customer-metrics", &run_suffix("record"), &env().gateway);
    std::fs::create_dir_all(project.path().join(".streamform")).unwrap();
    std::fs::write(
        project.path().join(".streamform/applied"),
        "not a directory",
    )
    .unwrap();
    let jobs_before = jobs_of(project.path());
    let out = streamform(&["apply", "--timeout", "120"], project.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("error: cannot open the lock .streamform/applied/local.lock: "),
        "{stderr}"
    );
    assert_eq!(jobs_of(project.path()), jobs_before, "no job was started");
}

/// The jobs of `project` (its name is unique to the test) that Flink reports RUNNING.
fn running_jobs(project: &Path) -> Vec<String> {
    jobs_named(project, |state| state == "RUNNING")
}

/// The target's applied record, checked against its published schema and read strictly.
fn record_of(project: &Path) -> streamform_ir::record::AppliedRecord {
    let text = std::fs::read_to_string(project.join(".streamform/applied/local.json")).unwrap();
    common::valid_document("applied-record", text.as_bytes());
    streamform_ir::record::AppliedRecord::from_json(&text).unwrap()
}

/// Runs a command and asserts its exit code; returns stdout and stderr together.
fn expect(args: &[&str], project: &Path, code: i32) -> String {
    let out = streamform(args, project);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(code), "{args:?}:\n{shown}");
    shown
}

/// The last value of `total_spend` for customer 42 among `records`.
fn total_of_42(records: &[Record]) -> Option<f64> {
    records
        .iter()
        .rev()
        .filter(|(k, _)| k.as_deref() == Some(r#"{"customer_id":42}"#))
        .find_map(|(_, v)| v.clone())
        .and_then(|v| {
            let value: serde_json::Value = serde_json::from_str(&v).unwrap();
            value["total_spend"].as_f64()
        })
}

fn order(customer: i64, amount: i64) -> String {
    format!(r#"{{"customer_id":{customer},"amount":{amount}}}"#)
}

/// The deployment lifecycle on the real Flink and Kafka (docs/deployment.md), step by step, with
/// the number of running jobs asserted through Flink's REST API after each step.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn customer_metrics_keeps_its_state_across_stop_and_apply_and_rebuilds_only_on_request() {
    let suffix = run_suffix("lifecycle");
    let project = scratch_project("customer-metrics", &suffix, &env().gateway);
    let dir = project.path();
    let source = format!("orders-{suffix}");
    let sink = format!("customer-metrics-{suffix}");

    // apply, produce 10 and 18: the sink says 28.
    expect(&["apply", "--timeout", "120"], dir, 0);
    let first = record_of(dir).jobs[0].clone();
    assert_eq!(running_jobs(dir), std::slice::from_ref(&first));
    produce(&source, &[order(42, 10), order(42, 18)]);
    let records = consume(&sink, 2);
    assert_eq!(total_of_42(&records), Some(28.0), "{records:?}");

    // apply again: nothing to apply, no new job.
    let shown = expect(&["apply", "--timeout", "120"], dir, 0);
    assert!(
        shown.contains(&format!("nothing to apply: job {first} runs this plan")),
        "{shown}"
    );
    assert_eq!(running_jobs(dir), std::slice::from_ref(&first));

    // status: exit 0, RUNNING.
    let shown = expect(&["status"], dir, 0);
    assert!(shown.contains("state:      RUNNING since "), "{shown}");

    // stop: a savepoint, and nothing runs.
    let shown = expect(&["stop", "--timeout", "120"], dir, 0);
    let savepoint = record_of(dir).savepoints[0].path.clone();
    assert!(
        shown.contains(&format!("ok: savepoint {savepoint} recorded")),
        "{shown}"
    );
    assert_eq!(running_jobs(dir), Vec::<String>::new());
    expect(&["status"], dir, 0);

    // apply: the job continues from the savepoint; 5 more gives 33, not 5.
    let shown = expect(&["apply", "--timeout", "120"], dir, 0);
    assert!(
        shown.contains(&format!(
            "ok: Flink reports the job restored from {savepoint}"
        )),
        "{shown}"
    );
    let second = record_of(dir).jobs[0].clone();
    assert_ne!(second, first);
    assert_eq!(running_jobs(dir), std::slice::from_ref(&second));
    let boundary = consume(&sink, 2).len();
    produce(&source, &[order(42, 5)]);
    let records = consume(&sink, boundary + 1);
    let after: Vec<Record> = records[boundary..].to_vec();
    assert_eq!(
        total_of_42(&after),
        Some(33.0),
        "after the boundary: {after:?}"
    );
    assert_eq!(
        normalize(&after).len(),
        1,
        "one new record, nothing replayed: {after:?}"
    );

    // A job cancelled outside streamform: status says so, and apply continues from the
    // latest savepoint of this plan.
    cancel(&second);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !running_jobs(dir).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
    }
    let shown = expect(&["status"], dir, 1);
    assert!(
        shown.contains(&format!("drift: the recorded job {second} is CANCEL")),
        "{shown}"
    );
    let shown = expect(&["apply", "--timeout", "120"], dir, 0);
    assert!(
        shown.contains(&format!("from savepoint {savepoint}")),
        "{shown}"
    );
    let third = record_of(dir).jobs[0].clone();
    assert_eq!(running_jobs(dir), std::slice::from_ref(&third));

    // A grouping-key change: refused, exit 1, nothing stopped.
    std::fs::write(
        dir.join("models/customer_metrics.sql"),
        "SELECT customer_id, amount, SUM(amount) AS total_spend\nFROM source('orders')\nGROUP BY customer_id, amount\n",
    )
    .unwrap();
    let config = dir.join("streamform.yml");
    let text_of = std::fs::read_to_string(&config).unwrap().replace(
        "      - customer_id\n",
        "      - customer_id\n      - amount\n",
    );
    std::fs::write(&config, text_of).unwrap();
    std::fs::remove_dir_all(dir.join("tests")).unwrap();
    let shown = expect(&["apply", "--timeout", "120"], dir, 1);
    assert!(
        shown.contains("cannot be carried into it: the plan diff's verdict is STATE INCOMPATIBLE"),
        "{shown}"
    );
    assert!(shown.contains("streamform apply --rebuild"), "{shown}");
    assert_eq!(running_jobs(dir), std::slice::from_ref(&third));

    // --rebuild: exactly one job runs the new plan.
    let shown = expect(&["apply", "--rebuild", "--timeout", "120"], dir, 0);
    assert!(shown.contains("with empty state (--rebuild)"), "{shown}");
    let fourth = record_of(dir).jobs[0].clone();
    assert_eq!(running_jobs(dir), std::slice::from_ref(&fourth));
    assert_eq!(record_of(dir).attempts.len(), 4);
    cancel(&fourth);
}

/// An order for customer 42 at minute `minute` of the day (the order pipeline's source runs
/// on event time).
fn timed_order(amount: i64, minute: u32) -> String {
    format!(r#"{{"customer_id":42,"amount":{amount},"ordered_at":"2026-08-30T10:{minute:02}:00"}}"#)
}

/// Replaces `from` with `to` in the project's file `file`, which must hold it.
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} holds {from:?}:\n{text}");
    std::fs::write(&path, text.replace(from, to)).unwrap();
}

/// `streamform` with an environment variable set.
fn streamform_with(args: &[&str], project: &Path, var: (&str, &str)) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(args)
        .arg("--project")
        .arg(project)
        .env("NO_COLOR", "1")
        .env(var.0, var.1)
        .output()
        .expect("run streamform")
}

/// One step of the upgrade test: `plan` says apply carries the state and exits 0, apply
/// does it without --rebuild (exit 0, the job restored from the savepoint it just took),
/// exactly one job runs, and the next order moves customer 42's total on from `total` by
/// `amount`: the first record after the boundary on `topic` continues the old total.
fn carries(dir: &Path, topic: &str, total: f64, amount: i64, minute: u32, source: &str) -> f64 {
    let shown = expect(&["plan"], dir, 0);
    assert!(shown.contains("apply: carries the state"), "{shown}");
    let before = record_of(dir).jobs[0].clone();
    let boundary = normalize(&consume(topic, 1)).len();
    let shown = expect(&["apply", "--timeout", "120"], dir, 0);
    assert!(shown.contains("stateful operators pinned"), "{shown}");
    assert!(
        shown.contains("ok: Flink reports the job restored from"),
        "{shown}"
    );
    let now = record_of(dir).jobs[0].clone();
    assert_ne!(now, before);
    assert_eq!(running_jobs(dir), std::slice::from_ref(&now));
    produce(source, &[timed_order(amount, minute)]);
    let after = normalize(&consume(topic, boundary + 1))[boundary..].to_vec();
    let expected = total + amount as f64;
    assert_eq!(
        after
            .iter()
            .find_map(|r| total_of_42(std::slice::from_ref(r))),
        Some(expected),
        "the first total after the boundary continues from {total}: {after:?}"
    );
    expected
}

/// The upgrades of docs/upgrading.md on the real Flink and Kafka: the order pipeline's
/// aggregate keeps its total across a new column in a sink, a changed projection after the
/// aggregate, a new model with its own sink, a renamed model, and a model with its own
/// aggregate removed, each applied without --rebuild; a rebuild (no savepoint) breaks the
/// same assertion; a grouping-key change, an added and a changed accumulator are refused
/// before anything stops; and a restore Flink does not confirm (a fault injected, since a
/// real cluster always reports it) rolls back to the previous plan from the same
/// savepoint. Exactly one job runs after every step.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn order_pipeline_carries_its_state_across_compatible_changes_and_rolls_back() {
    let suffix = run_suffix("carry");
    let project = scratch_project("order-pipeline", &suffix, &env().gateway);
    let dir = project.path();
    std::fs::remove_dir_all(dir.join("tests")).unwrap();
    let source = format!("orders-{suffix}");
    let sink = format!("big-customers-{suffix}");
    let top = format!("top-customers-{suffix}");
    create_topics(std::slice::from_ref(&top));
    // A second model with its own aggregate and sink, removed further down.
    let counts = format!("order-counts-{suffix}");
    create_topics(std::slice::from_ref(&counts));
    std::fs::write(
        dir.join("models/order_counts.sql"),
        "SELECT customer_id, COUNT(*) AS orders\nFROM ref('clean_orders')\nGROUP BY customer_id\n",
    )
    .unwrap();
    let counts_entry = format!(
        "  order_counts:\n    materialized: upsert\n    key: [customer_id]\n    sink:\n      connector: kafka\n      topic: {counts}\n      format: json\n"
    );
    edit(
        dir,
        "streamform.yml",
        "\ntargets:",
        &format!("{counts_entry}\ntargets:"),
    );

    // apply, produce 60 and 50: the big customer's total is 110.
    expect(&["apply", "--timeout", "120"], dir, 0);
    let first = record_of(dir).jobs[0].clone();
    assert_eq!(running_jobs(dir), std::slice::from_ref(&first));
    assert!(record_of(dir).attempts[0].operators.is_some());
    produce(&source, &[timed_order(60, 0), timed_order(50, 1)]);
    let records = consume(&sink, 1);
    assert_eq!(total_of_42(&records), Some(110.0), "{records:?}");

    // A new column in a sink.
    edit(
        dir,
        "models/big_customers.sql",
        "SELECT customer_id, total_spend\n",
        "SELECT customer_id, total_spend, total_spend * 2 AS doubled\n",
    );
    let total = carries(dir, &sink, 110.0, 5, 2, &source);
    // A changed projection after the aggregate.
    edit(
        dir,
        "models/big_customers.sql",
        "total_spend * 2 AS doubled",
        "total_spend * 3 AS doubled",
    );
    let total = carries(dir, &sink, total, 1, 3, &source);
    // A new model with its own sink: its first row carries the total too.
    std::fs::write(
        dir.join("models/top_customers.sql"),
        "SELECT customer_id, total_spend\nFROM ref('customer_metrics')\nWHERE total_spend > 50\n",
    )
    .unwrap();
    edit(
        dir,
        "streamform.yml",
        "\ntargets:",
        &format!(
            "  top_customers:\n    materialized: upsert\n    key: [customer_id]\n    sink:\n      connector: kafka\n      topic: {top}\n      format: json\n\ntargets:"
        ),
    );
    let total = carries(dir, &sink, total, 1, 4, &source);
    let tops = consume(&top, 1);
    assert_eq!(total_of_42(&tops), Some(total), "{tops:?}");
    // A renamed model, with renamed_from.
    std::fs::rename(
        dir.join("models/big_customers.sql"),
        dir.join("models/vip_customers.sql"),
    )
    .unwrap();
    edit(
        dir,
        "streamform.yml",
        "  big_customers:\n",
        "  vip_customers:\n    renamed_from: big_customers\n",
    );
    let total = carries(dir, &sink, total, 1, 5, &source);
    // The model with its own aggregate removed: its state is discarded (Flink is told that
    // the state nothing claims may be left), and the total carries on.
    std::fs::remove_file(dir.join("models/order_counts.sql")).unwrap();
    edit(dir, "streamform.yml", &counts_entry, "");
    let total = carries(dir, &sink, total, 1, 7, &source);

    // A grouping-key change (the aggregate grouped by one more column, keyed by it down to
    // the sinks), an added accumulator and a changed one: refused by plan and apply, nothing
    // stopped.
    let running = record_of(dir).jobs[0].clone();
    let files = [
        "models/customer_metrics.sql",
        "models/vip_customers.sql",
        "models/top_customers.sql",
        "streamform.yml",
    ];
    let kept: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(dir.join(f)).unwrap())
        .collect();
    let regrouped = || {
        edit(
            dir,
            "models/customer_metrics.sql",
            "SELECT customer_id, SUM(amount)",
            "SELECT customer_id, amount, SUM(amount)",
        );
        edit(
            dir,
            "models/customer_metrics.sql",
            "GROUP BY customer_id",
            "GROUP BY customer_id, amount",
        );
        for model in ["models/vip_customers.sql", "models/top_customers.sql"] {
            edit(
                dir,
                model,
                "SELECT customer_id,",
                "SELECT customer_id, amount,",
            );
        }
        let config = std::fs::read_to_string(dir.join("streamform.yml")).unwrap();
        let rekeyed = config.replace("key: [customer_id]", "key: [customer_id, amount]");
        std::fs::write(dir.join("streamform.yml"), rekeyed).unwrap();
    };
    let added = || {
        edit(
            dir,
            "models/customer_metrics.sql",
            "SUM(amount) AS total_spend",
            "SUM(amount) AS total_spend, COUNT(*) AS orders",
        )
    };
    let replaced = || {
        edit(
            dir,
            "models/customer_metrics.sql",
            "SUM(amount)",
            "MAX(amount)",
        )
    };
    let changes: [&dyn Fn(); 3] = [&regrouped, &added, &replaced];
    for change in changes {
        change();
        let shown = expect(&["plan"], dir, 1);
        assert!(shown.contains("apply: refuses"), "{shown}");
        let shown = expect(&["apply", "--timeout", "120"], dir, 1);
        assert!(shown.contains("cannot be carried into it"), "{shown}");
        assert!(shown.contains("nothing was stopped or started"), "{shown}");
        assert_eq!(running_jobs(dir), std::slice::from_ref(&running));
        for (file, text) in files.iter().zip(&kept) {
            std::fs::write(dir.join(file), text).unwrap();
        }
    }

    // A restore Flink does not confirm: the upgrade's job is cancelled and the previous
    // plan runs again from the same savepoint, with its total.
    edit(
        dir,
        "models/top_customers.sql",
        "SELECT customer_id, total_spend\n",
        "SELECT customer_id, total_spend, total_spend * 2 AS doubled\n",
    );
    let out = streamform_with(
        &["apply", "--timeout", "120"],
        dir,
        ("STREAMFORM_TEST_FAULT", "unconfirmed-restore"),
    );
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(shown.contains("did not start on savepoint"), "{shown}");
    assert!(shown.contains("ok: rolled back: job"), "{shown}");
    let record = record_of(dir);
    let rolled = record.jobs[0].clone();
    let attempts = &record.attempts[record.attempts.len() - 2..];
    assert_eq!(attempts[0].outcome, streamform_ir::record::Outcome::Failed);
    assert_eq!(attempts[1].job_id, rolled);
    assert_eq!(
        attempts[1].artifact,
        record.attempts[record.attempts.len() - 3].artifact
    );
    assert_eq!(attempts[0].restore_from, attempts[1].restore_from);
    assert_eq!(running_jobs(dir), std::slice::from_ref(&rolled));
    let boundary = normalize(&consume(&sink, 1)).len();
    produce(&source, &[timed_order(1, 6)]);
    let after = normalize(&consume(&sink, boundary + 1))[boundary..].to_vec();
    assert_eq!(
        after
            .iter()
            .find_map(|r| total_of_42(std::slice::from_ref(r))),
        Some(total + 1.0),
        "{after:?}"
    );

    // The negative control: a rebuild starts without the savepoint, so the first total
    // after the boundary does not continue (the topic is read again from the start).
    let total = total + 1.0;
    let boundary = normalize(&consume(&sink, 1)).len();
    expect(&["apply", "--rebuild", "--timeout", "120"], dir, 0);
    let rebuilt = record_of(dir).jobs[0].clone();
    assert_eq!(running_jobs(dir), std::slice::from_ref(&rebuilt));
    produce(&source, &[timed_order(1, 9)]);
    let after = normalize(&consume(&sink, boundary + 1))[boundary..].to_vec();
    assert_ne!(
        after
            .iter()
            .find_map(|r| total_of_42(std::slice::from_ref(r))),
        Some(total + 1.0),
        "without the savepoint the total starts over: {after:?}"
    );
    cancel(&rebuilt);
}

/// A source topic that does not exist makes Flink's Kafka source fail the job as it
/// starts: apply reports that job as a failed apply with Flink's reason, exit 1.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn a_job_that_fails_at_start_is_a_failed_apply_with_flinks_reason() {
    let suffix = run_suffix("fails");
    let project = scratch_project("customer-metrics", &suffix, &env().gateway);
    let sources = project.path().join("sources.yml");
    let text_of = std::fs::read_to_string(&sources).unwrap().replace(
        &format!("topic: orders-{suffix}"),
        &format!("topic: missing-{suffix}"),
    );
    std::fs::write(&sources, text_of).unwrap();
    let shown = expect(&["apply", "--timeout", "120"], project.path(), 1);
    assert!(
        shown.contains("was accepted, then failed while starting (Flink reports it FAILED)"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "Failed to get metadata for topics [missing-{suffix}]"
        )),
        "{shown}"
    );
    assert_eq!(
        record_of(project.path()).attempts[0].outcome,
        streamform_ir::record::Outcome::Failed
    );
    assert_eq!(running_jobs(project.path()), Vec::<String>::new());
}

#[test]
fn normalizing_reads_a_tombstone_then_value_as_one_update() {
    let k = || Some("{\"k\":1}".to_string());
    let v = |n: u8| Some(format!("{{\"k\":1,\"v\":{n}}}"));
    let records = vec![(k(), v(1)), (k(), None), (k(), v(2)), (k(), None)];
    assert_eq!(
        normalize(&records),
        vec![(k(), v(1)), (k(), v(2)), (k(), None)]
    );
}

/// A UNION ALL of two sources (docs/sql.md, "Several inputs"): every order of each shop
/// reaches the sink once, compared as a multiset, since Flink reads the two topics in an
/// order of its own.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn all_orders_on_flink_match_the_simulator_with_a_union_of_two_sources() {
    differential("order-enrichment", "tests/all_orders.yml");
}

/// An aggregate over a UNION ALL: each channel's totals change in the order of its own
/// shop's orders, whichever shop Flink reads first.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn channel_totals_on_flink_match_the_simulator_over_a_union() {
    differential("order-enrichment", "tests/channel_totals.yml");
}

/// A window over a UNION ALL closes a minute only when both shops' watermarks passed it.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn orders_per_minute_on_flink_match_the_simulator_with_the_least_of_two_watermarks() {
    differential_windows("order-enrichment", "tests/orders_per_minute.yml");
}

/// An inner join of two sources' orders and customers (docs/joins.md): a customer arriving
/// after the order still enriches it.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn enriched_orders_on_flink_match_the_simulator_with_an_inner_join() {
    differential("order-enrichment", "tests/enriched_orders.yml");
}

/// A LEFT JOIN under an aggregate: the padded row of an unpaid order, deleted when its first
/// payment arrives, and a payment waiting for its order.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn order_payments_on_flink_match_the_simulator_with_a_left_join() {
    differential("order-enrichment", "tests/order_payments.yml");
}

/// An inner join with a table that changes, under an aggregate (docs/joins.md, "Tables
/// that change"): a tier update retracts every joined order and adds it again, and a
/// tombstone retracts them for good.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn tier_revenue_on_flink_matches_the_simulator_with_a_join_over_an_upsert_source() {
    differential("order-enrichment", "tests/tier_revenue.yml");
}

/// A LEFT JOIN with a table that changes, under an aggregate: the four records of an update
/// (the joined row retracted, padded, the padding deleted, the new row inserted), and the
/// padding a tombstone brings back.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn customer_tier_orders_on_flink_match_the_simulator_with_a_left_join_over_an_upsert_source() {
    differential(
        "tests/cases/test-join-updating-left/project",
        "tests/customer_tier_orders.yml",
    );
}

/// An inner join of two tables that change on the key they share, written to an upsert
/// sink under that key: the halves of an update Flink emits apart reach the sink as one
/// update per key.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn customer_cards_on_flink_match_the_simulator_with_a_join_of_two_tables() {
    differential(
        "tests/cases/test-join-tables/project",
        "tests/customer_cards.yml",
    );
}

/// The same join with a condition beside the key: a row that stops matching is retracted
/// with nothing to replace it, which the upsert sink writes as a tombstone.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn open_cards_on_flink_match_the_simulator_when_a_joined_row_stops_matching() {
    differential(
        "tests/cases/test-join-tables/project",
        "tests/open_cards.yml",
    );
}

/// A LEFT JOIN of two tables on the key they share, under an aggregate per customer.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn tier_limits_on_flink_match_the_simulator_with_a_left_join_of_two_tables() {
    differential(
        "tests/cases/test-join-tables/project",
        "tests/tier_limits.yml",
    );
}

/// A RIGHT JOIN of two tables on the key they share, under an aggregate per customer.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn limit_tiers_on_flink_match_the_simulator_with_a_right_join_of_two_tables() {
    differential(
        "tests/cases/test-join-tables/project",
        "tests/limit_tiers.yml",
    );
}

/// A UNION ALL of an appending source and an upsert source under an aggregate: the union
/// passes the table's updates and deletes on, and the aggregate takes them back.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn a_union_with_an_updating_input_on_flink_matches_the_simulator_under_an_aggregate() {
    differential(
        "tests/cases/test-union-updating-aggregate/project",
        "tests/status_totals.yml",
    );
}

/// An interval join (docs/joins.md, "Joins in time"): matches at both bounds of four
/// hours, a shipment waiting for its order, and one a millisecond too late.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn shipped_orders_on_flink_match_the_simulator_with_an_interval_join() {
    differential("order-fulfilment", "tests/shipped_orders.yml");
}

/// A LEFT interval join: an order is padded exactly when the watermarks of both sources
/// have passed its four hours, and not before.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn late_shipments_on_flink_match_the_simulator_with_a_left_interval_join() {
    differential("order-fulfilment", "tests/late_shipments.yml");
}

/// A RIGHT interval join: a shipment is padded when both watermarks pass its time.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn unordered_shipments_on_flink_match_the_simulator_with_a_right_interval_join() {
    differential("order-fulfilment", "tests/unordered_shipments.yml");
}

/// A FULL interval join pads each side when its own bound has passed.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn fulfilment_log_on_flink_matches_the_simulator_with_a_full_interval_join() {
    differential("order-fulfilment", "tests/fulfilment_log.yml");
}

/// A window after an interval join sees the join's watermark held back by its four hours.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn shipments_per_hour_on_flink_match_the_simulator_after_an_interval_join() {
    differential_windows("order-fulfilment", "tests/shipments_per_hour.yml");
}

/// An event-time temporal join (docs/joins.md, "Joins in time"): each order priced at the
/// rate valid at its time once both watermarks pass it, a rate changing between two
/// orders, and an order older than its currency's first rate.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn priced_orders_on_flink_match_the_simulator_with_a_temporal_join() {
    differential("order-fulfilment", "tests/priced_orders.yml");
}

/// An inner temporal join under an aggregate: an order placed before its currency's first
/// rate is dropped, the others counted at the rate valid at their time.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn eur_revenue_on_flink_matches_the_simulator_with_an_inner_temporal_join() {
    differential("order-fulfilment", "tests/eur_revenue.yml");
}

/// Top-N over an updating input (docs/ranking.md): revenue per product ranked per
/// category, each position updated as products overtake each other. The revenue sums a
/// column filtered to positive amounts, which Flink would rank with another operator
/// unless the generated SQL makes it keep every row.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn top_products_on_flink_match_the_simulator_ranking_by_position() {
    differential("top-products", "tests/top_products.yml");
}

/// The same top without its row number: products entering and leaving as inserts and
/// deletes.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn top_product_ids_on_flink_match_the_simulator_ranking_without_the_row_number() {
    differential("top-products", "tests/top_product_ids.yml");
}

/// A top of one over an append input: a strictly bigger row replaces its partition's.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn biggest_sale_on_flink_matches_the_simulator_with_a_top_of_one() {
    differential("top-products", "tests/biggest_sale.yml");
}

/// A top of two over an append input, by position, ordered by two columns.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn largest_sales_on_flink_match_the_simulator_ranking_an_append_input() {
    differential("top-products", "tests/largest_sales.yml");
}

/// A top of two over an append input, by place: a null price last in a descending order,
/// an equal price after the earlier row.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn ranked_prices_on_flink_match_the_simulator_with_nulls_and_ties() {
    differential("coverage", "tests/ranked_prices.yml");
}

/// Top-N by a count, which only grows: Flink would rank it with its faster operator, and
/// the generated SQL keeps it on the retracting one the simulator follows.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn best_sellers_on_flink_match_the_simulator_ranking_by_a_count() {
    differential("top-products", "tests/best_sellers.yml");
}

/// The Flink version the gateway runs, (major, minor), from its `/v2/info`.
fn flink_version() -> (u32, u32) {
    let url = format!("{}/v2/info", env().gateway);
    let body = ureq::get(&url)
        .call()
        .expect("the gateway answers /v2/info")
        .body_mut()
        .read_to_string()
        .expect("its answer is text");
    let info: serde_json::Value = serde_json::from_str(&body).expect("its answer is JSON");
    let version = info["version"].as_str().expect("it names its version");
    let mut parts = version
        .split('.')
        .map(|p| p.parse::<u32>().expect("a number"));
    (parts.next().unwrap(), parts.next().unwrap())
}

/// Deduplication keeping the first row by event time (docs/ranking.md): Flink 2.2 inserts
/// each order's earliest copy once the watermark passes it, as the simulator does; on
/// Flink 2.0, which emits at once and replaces, apply refuses the application, starting
/// nothing.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn first_orders_on_flink_match_the_simulator_keeping_the_first_row_by_event_time() {
    let version = flink_version();
    if version >= (2, 2) {
        differential("first-orders", "tests/first_orders.yml");
        return;
    }
    let suffix = run_suffix("first-orders");
    let project = scratch_project("first-orders", &suffix, &env().gateway);
    let out = streamform(&["apply", "--timeout", "120"], project.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: the application needs Flink 2.2 or later, and the target's SQL Gateway runs Flink {}.{}: model `first_orders` keeps the first row of each partition by event time",
            version.0, version.1
        )),
        "{stderr}"
    );
    assert!(
        !project
            .path()
            .join(".streamform/applied/local.json")
            .exists(),
        "nothing was recorded"
    );
}

/// A window Top-N over a window aggregation's rows: each minute's two best pages inserted
/// once, in rank order, when the minute closes; ties broken by a second ordering column.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn top_pages_on_flink_match_the_simulator_ranking_each_window_once() {
    differential("window-metrics", "tests/top_pages.yml");
}

/// TO_TIMESTAMP with a pattern: Java's SMART resolution (a 31st of April, 24:00), a time of
/// day on 1970-01-01, and Flink's lenient fallback for strings in the SQL form.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn parsed_times_on_flink_match_the_simulator_reading_strings_with_a_pattern() {
    differential("coverage", "tests/parsed_times.yml");
}

/// A DATE column read from JSON and written back, printed, compared with a literal, its
/// fields and midnight, a timestamp's date (cut toward zero before 1970, as Flink cuts it)
/// and a string read as a date.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn stay_days_on_flink_match_the_simulator_with_dates() {
    differential("coverage", "tests/stay_days.yml");
}

/// A date as the key of an aggregate and of its upsert-kafka sink, and MIN over dates.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn stays_per_day_on_flink_match_the_simulator_keyed_by_a_date() {
    differential("coverage", "tests/stays_per_day.yml");
}

/// A window deduplication over a window table: each user's first view of each minute,
/// inserted when the minute closes; an earlier view arriving later wins, and of two views
/// at one time the first to arrive.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn first_views_on_flink_match_the_simulator_keeping_each_windows_first_row() {
    differential_windows("window-metrics", "tests/first_views.yml");
}

/// A window deduplication keeping the last row (ORDER BY the time DESC) that writes
/// `window_time`: of clicks at one time, the last to arrive is kept.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn last_clicks_on_flink_match_the_simulator_keeping_each_windows_last_row() {
    differential_windows("coverage", "tests/last_clicks.yml");
}

/// A window Top-N over a window table of hopping windows: each view ranked in both of its
/// windows, each window's two slowest loads inserted in rank order when it closes.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn slowest_loads_on_flink_match_the_simulator_ranking_each_windows_rows() {
    differential_windows("window-metrics", "tests/slowest_loads.yml");
}

/// An OVER aggregation back to the first row (RANGE, Flink's default frame): each order
/// with its customer's running total, orders of one instant sharing it.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn running_totals_on_flink_match_the_simulator_over_every_earlier_row() {
    differential_over(
        "running-totals",
        "tests/running_totals.yml",
        &["customer_id"],
    );
}

/// LAG over a frame back to the first row (RANGE): the values one and two rows before,
/// null until there are that many, and orders of one instant added together, so each reads
/// the row before the last of them.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn order_gaps_on_flink_match_the_simulator_with_lag() {
    differential_over("running-totals", "tests/order_gaps.yml", &["customer_id"]);
}

/// An OVER aggregation over the last three rows (ROWS): an average whose oldest row leaves
/// the frame, rows of one instant one by one.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn moving_average_on_flink_matches_the_simulator_over_the_last_rows() {
    differential_over(
        "running-totals",
        "tests/moving_average.yml",
        &["customer_id"],
    );
}

/// An OVER aggregation over the last hour (RANGE with a bound): a row exactly an hour back
/// still counts, and the largest leaves with its row.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn hourly_spend_on_flink_matches_the_simulator_over_the_last_hour() {
    differential_over("running-totals", "tests/hourly_spend.yml", &["customer_id"]);
}

/// An OVER aggregation in rows back to the first row, through a named WINDOW: counts and
/// a minimum that skip a null page, rows of one instant one by one, null visitors a
/// partition of their own.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn click_counts_on_flink_match_the_simulator_over_rows_with_nulls() {
    differential_over("coverage", "tests/click_counts.yml", &["visitor"]);
}

/// Deduplication keeping the last row by the time attribute, the same on both versions: a
/// later or equal time replaces the kept row, an earlier one is ignored.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn latest_clicks_on_flink_match_the_simulator_keeping_the_last_row_by_time() {
    differential("coverage", "tests/latest_clicks.yml");
}

/// An aggregate's FILTER (WHERE …) and IF, read as CASE: each aggregate takes the rows its
/// condition is true for, a null condition none.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn filtered_totals_on_flink_match_the_simulator_with_aggregate_filters_and_if() {
    differential("coverage", "tests/filtered_totals.yml");
}

/// GROUP BY expressions, computed by a projection in front of the aggregate.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn hourly_lines_on_flink_match_the_simulator_grouping_by_expressions() {
    differential("coverage", "tests/hourly_lines.yml");
}

/// REPLACE, POSITION, LOCATE, SPLIT_INDEX and the regular expressions (docs/sql.md): Java's
/// `.` leaving out `\r`, an ASCII `\d`, a literal `$1` in a replacement, groups that took no
/// part or do not exist, pieces past the last, an empty string.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn cleaned_notes_on_flink_match_the_simulator_searching_and_cutting_strings() {
    differential("coverage", "tests/cleaned_notes.yml");
}

/// DATE_FORMAT with Java's pattern letters (unpadded fields, a clock hour of 12 at
/// midnight, quoted text, a time before 1970) and TO_TIMESTAMP of a string.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn formatted_times_on_flink_match_the_simulator_with_date_format() {
    differential("coverage", "tests/formatted_times.yml");
}

/// TRY_CAST of strings: null where CAST would stop the run.
#[test]
#[ignore = "needs the integration environment: run integration/up, then integration/test"]
fn parsed_notes_on_flink_match_the_simulator_with_try_cast() {
    differential("coverage", "tests/parsed_notes.yml");
}
