//! Whole projects from the fuzzer, built from a grammar of the SQL surface: up to four
//! models, each reading the source or the model before it, append or upsert, with
//! filters, projections, aggregates and HAVING over typed expressions, and a fixture of
//! events with nulls and extremes. Every one must check and run without a panic or a hang.
#![no_main]

#[path = "common.rs"]
mod common;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Column {
    CustomerId,
    Amount,
    Note,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Lt,
    And,
    Or,
    Concat,
}

#[derive(Arbitrary, Debug)]
enum Function {
    Upper,
    Abs,
    Coalesce,
    Length,
}

#[derive(Arbitrary, Debug)]
enum Type {
    Int,
    BigInt,
    Double,
    Decimal(u8, u8),
    Text,
    Boolean,
    Timestamp,
}

#[derive(Arbitrary, Debug)]
enum Expr {
    Column(Column),
    Int(i64),
    Decimal(i32, u8),
    Text(u8),
    Null,
    Binary(Box<Expr>, Op, Box<Expr>),
    Not(Box<Expr>),
    IsNull(Box<Expr>),
    Case(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(Function, Box<Expr>),
    Cast(Box<Expr>, Type),
}

#[derive(Arbitrary, Debug)]
enum Aggregate {
    Sum,
    Count,
    Min,
    Max,
    Avg,
}

#[derive(Arbitrary, Debug)]
enum Model {
    Select { items: Vec<Expr>, filter: Option<Expr> },
    Group { aggregates: Vec<(Aggregate, Expr)>, filter: Option<Expr>, having: Option<Expr> },
}

#[derive(Arbitrary, Debug)]
struct Event {
    customer_id: Option<i64>,
    amount: Option<(i64, u8)>,
    note: Option<u8>,
}

#[derive(Arbitrary, Debug)]
struct Project {
    models: Vec<(Model, bool)>,
    events: Vec<Event>,
}

fn column(c: &Column) -> &'static str {
    match c {
        Column::CustomerId => "customer_id",
        Column::Amount => "amount",
        Column::Note => "note",
    }
}

const TEXTS: [&str; 6] = ["a", "", "2026-08-30 10:00:00", "12.5", "true", "ü"];

fn sql(e: &Expr, depth: usize) -> String {
    if depth > 8 {
        return "1".into();
    }
    let d = depth + 1;
    match e {
        Expr::Column(c) => column(c).into(),
        Expr::Int(i) => i.to_string(),
        Expr::Decimal(m, s) => {
            let scale = u32::from(*s % 10);
            let m = i64::from(*m);
            let p = 10i64.pow(scale);
            if scale == 0 {
                m.to_string()
            } else {
                format!("{}{}.{:0w$}", if m < 0 { "-" } else { "" }, (m / p).abs(), (m % p).abs(), w = scale as usize)
            }
        }
        Expr::Text(t) => format!("'{}'", TEXTS[*t as usize % TEXTS.len()]),
        Expr::Null => "NULL".into(),
        Expr::Binary(a, op, b) => {
            let op = match op {
                Op::Add => "+",
                Op::Sub => "-",
                Op::Mul => "*",
                Op::Div => "/",
                Op::Mod => "%",
                Op::Eq => "=",
                Op::Lt => "<",
                Op::And => "AND",
                Op::Or => "OR",
                Op::Concat => "||",
            };
            format!("({} {op} {})", sql(a, d), sql(b, d))
        }
        Expr::Not(a) => format!("(NOT {})", sql(a, d)),
        Expr::IsNull(a) => format!("({} IS NULL)", sql(a, d)),
        Expr::Case(c, t, e) => format!("CASE WHEN {} THEN {} ELSE {} END", sql(c, d), sql(t, d), sql(e, d)),
        Expr::Call(f, a) => match f {
            Function::Upper => format!("UPPER({})", sql(a, d)),
            Function::Abs => format!("ABS({})", sql(a, d)),
            Function::Coalesce => format!("COALESCE({}, 0)", sql(a, d)),
            Function::Length => format!("CHAR_LENGTH({})", sql(a, d)),
        },
        Expr::Cast(a, t) => {
            let t = match t {
                Type::Int => "INT".to_string(),
                Type::BigInt => "BIGINT".to_string(),
                Type::Double => "DOUBLE".to_string(),
                Type::Decimal(p, s) => {
                    let p = 1 + p % 38;
                    format!("DECIMAL({p}, {})", s % (p + 1))
                }
                Type::Text => "STRING".to_string(),
                Type::Boolean => "BOOLEAN".to_string(),
                Type::Timestamp => "TIMESTAMP".to_string(),
            };
            format!("CAST({} AS {t})", sql(a, d))
        }
    }
}

fuzz_target!(|p: Project| {
    let mut config = String::from("name: fuzz\nversion: 1\nmodels:\n");
    let mut files: Vec<(String, String)> = Vec::new();
    let mut input = "source('orders')".to_string();
    let mut last = String::from("m0");
    for (i, (model, upsert)) in p.models.iter().take(4).enumerate() {
        let name = format!("m{i}");
        let text = match model {
            Model::Select { items, filter } => {
                let mut cols = vec!["customer_id".to_string()];
                for (j, e) in items.iter().take(4).enumerate() {
                    cols.push(format!("{} AS c{j}", sql(e, 0)));
                }
                let mut text = format!("SELECT {} FROM {input}", cols.join(", "));
                if let Some(f) = filter {
                    text.push_str(&format!(" WHERE {}", sql(f, 0)));
                }
                text
            }
            Model::Group { aggregates, filter, having } => {
                let mut cols = vec!["customer_id".to_string()];
                for (j, (agg, e)) in aggregates.iter().take(4).enumerate() {
                    let f = match agg {
                        Aggregate::Sum => "SUM",
                        Aggregate::Count => "COUNT",
                        Aggregate::Min => "MIN",
                        Aggregate::Max => "MAX",
                        Aggregate::Avg => "AVG",
                    };
                    cols.push(format!("{f}({}) AS a{j}", sql(e, 0)));
                }
                let mut text = format!("SELECT {} FROM {input}", cols.join(", "));
                if let Some(f) = filter {
                    text.push_str(&format!(" WHERE {}", sql(f, 0)));
                }
                text.push_str(" GROUP BY customer_id");
                if let Some(h) = having {
                    text.push_str(&format!(" HAVING {}", sql(h, 0)));
                }
                text
            }
        };
        if *upsert {
            config.push_str(&format!("  {name}:\n    materialized: upsert\n    key: [customer_id]\n"));
        }
        files.push((format!("models/{name}.sql"), text));
        input = format!("ref('{name}')");
        last = name;
    }
    let mut fixture = format!("model: {last}\ngiven:\n");
    if p.events.is_empty() {
        fixture = format!("model: {last}\ngiven: []\n");
    }
    for e in p.events.iter().take(50) {
        let id = e.customer_id.map_or("null".to_string(), |v| v.to_string());
        let amount = e.amount.map_or("null".to_string(), |(m, s)| {
            let scale = u32::from(s % 12);
            if scale == 0 {
                m.to_string()
            } else {
                let p = 10i128.pow(scale);
                let m = i128::from(m);
                format!("{}{}.{:0w$}", if m < 0 { "-" } else { "" }, (m / p).abs(), (m % p).abs(), w = scale as usize)
            }
        });
        let note = e.note.map_or("null".to_string(), |t| format!("{:?}", TEXTS[t as usize % TEXTS.len()]));
        fixture.push_str(&format!("  - {{customer_id: {id}, amount: {amount}, note: {note}}}\n"));
    }
    fixture.push_str("expect: []\n");
    let mut all: Vec<(&str, &str)> = vec![
        ("streamform.yml", config.as_str()),
        ("sources.yml", common::SOURCES),
        ("tests/f.yml", fixture.as_str()),
    ];
    for (path, text) in &files {
        all.push((path.as_str(), text.as_str()));
    }
    common::check_and_test(&all);
});
