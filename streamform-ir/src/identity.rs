//! State and schema fingerprints and their SHA-256 digests.
//!
//! See docs/plan-identity.md, "State fingerprint and digest" and "Schema fingerprint"; the
//! digests the docs show (docs/plan-identity.md, "inspect-plan"; docs/upgrading.md, sections
//! 3 and 4) are pinned by the tests below.

use sha2::{Digest, Sha256};

use crate::plan::{Field, KeyedState, Node, NodeKind, State};

/// The canonical text of what a keyed node of `kind` stores:
/// `aggregate key=[customer_id] accumulators=[sum(amount): decimal(38,9)] retention=unbounded`;
/// a deduplicate node stores its last row, so its accumulators are the row's columns; a
/// window node's text names its window after the key,
/// `window key=[page, window_start, window_end] window=tumble(size=1m) on viewed_at accumulators=[count(*): int64] retention=unbounded`;
/// an interval join's names its time condition after the key,
/// `interval_join key=[order_id=order_id] time=[shipped_at between ordered_at and ordered_at + 4h] accumulators=[…] retention=unbounded`;
/// a rank's names its ordering and top,
/// `rank key=[category] rank=[order=[revenue desc] top=3 strategy=retract] retracting accumulators=[…] retention=unbounded`;
/// an over aggregation's names its frame,
/// `over key=[customer_id] frame=[rows 2 preceding on ordered_at] retracting accumulators=[…] retention=unbounded`.
pub fn state_fingerprint(kind: NodeKind, state: &KeyedState) -> String {
    let accs: Vec<String> = state
        .accumulators
        .iter()
        .map(|a| format!("{}: {}", a.name, a.ty))
        .collect();
    fingerprint_text(
        kind,
        &state.key,
        &Shape {
            window: state.window.as_ref().map(ToString::to_string).as_deref(),
            bounds: state.bounds.as_ref().map(ToString::to_string).as_deref(),
            ranking: state.ranking.as_ref().map(ToString::to_string).as_deref(),
            frame: state.frame.as_ref().map(ToString::to_string).as_deref(),
        },
        state.retracting,
        &format!("[{}]", accs.join(", ")),
        &state.retention.to_string(),
    )
}

/// What a node's state is kept per, beside its key, as the fingerprint writes it: a
/// window node's window, an interval join's time condition, a rank's ranking, each
/// rendered (`tumble(size=1m) on viewed_at`); `None` for the nodes that have none.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shape<'a> {
    /// A window node's window.
    pub window: Option<&'a str>,
    /// An interval join's time condition.
    pub bounds: Option<&'a str>,
    /// A rank's ordering, top and rank operator.
    pub ranking: Option<&'a str>,
    /// An over aggregation's frame.
    pub frame: Option<&'a str>,
}

/// The fingerprint text from its parts as a manifest records them (the accumulators
/// already rendered, `[sum(amount): decimal(38,9)]`): the one place its form is written.
pub fn fingerprint_text(
    kind: NodeKind,
    key: &[String],
    shape: &Shape<'_>,
    retracting: bool,
    accumulators: &str,
    retention: &str,
) -> String {
    let window = shape
        .window
        .map(|w| format!(" window={w}"))
        .unwrap_or_default();
    let window = match shape.bounds {
        Some(b) => format!("{window} time=[{b}]"),
        None => window,
    };
    let window = match shape.ranking {
        Some(r) => format!("{window} rank=[{r}]"),
        None => window,
    };
    let window = match shape.frame {
        Some(f) => format!("{window} frame=[{f}]"),
        None => window,
    };
    let retracting = if retracting { " retracting" } else { "" };
    format!(
        "{} key=[{}]{window}{retracting} accumulators={accumulators} retention={retention}",
        kind.id_name(),
        key.join(", ")
    )
}

/// The canonical text of an output schema: `[customer_id: int64, total_spend: decimal(38,9)]`.
pub fn schema_fingerprint(schema: &[Field]) -> String {
    let cols: Vec<String> = schema
        .iter()
        .map(|f| format!("{}: {}", f.name, f.ty))
        .collect();
    format!("[{}]", cols.join(", "))
}

/// SHA-256 of `text` as 64 lowercase hex characters.
pub fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first twelve characters of a digest (or job id), as text output shows it.
pub fn short(digest: &str) -> &str {
    match digest.char_indices().nth(12) {
        Some((end, _)) => &digest[..end],
        None => digest,
    }
}

/// A node's digests: the schema digest always, the state digest for a keyed node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeDigests {
    /// Canonical text of the output schema (see [`schema_fingerprint`]).
    pub schema_fingerprint: String,
    /// SHA-256 of `schema_fingerprint`, 64 lowercase hex characters.
    pub schema_digest: String,
    /// Canonical text of the keyed state (see [`state_fingerprint`]); `None` when stateless.
    pub state_fingerprint: Option<String>,
    /// SHA-256 of `state_fingerprint`, 64 lowercase hex characters; `None` when stateless.
    pub state_digest: Option<String>,
}

/// Computes both fingerprints of `node` and their digests.
pub fn node_digests(node: &Node) -> NodeDigests {
    let schema_fingerprint = schema_fingerprint(&node.schema);
    let schema_digest = sha256_hex(&schema_fingerprint);
    let state_fingerprint = match &node.state {
        State::Keyed(k) => Some(state_fingerprint(node.id.kind, k)),
        State::Stateless => None,
    };
    let state_digest = state_fingerprint.as_deref().map(sha256_hex);
    NodeDigests {
        schema_fingerprint,
        schema_digest,
        state_fingerprint,
        state_digest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Accumulator, Retention};
    use crate::types::DataType;

    const DEC: DataType = DataType::DEFAULT_DECIMAL;

    fn field(name: &str, ty: DataType) -> Field {
        Field {
            name: name.into(),
            ty,
            nullable: true,
        }
    }

    fn keyed(key: &[&str], accs: &[(&str, DataType)]) -> KeyedState {
        KeyedState {
            key: key.iter().map(|k| k.to_string()).collect(),
            accumulators: accs
                .iter()
                .map(|(n, t)| Accumulator {
                    name: n.to_string(),
                    ty: *t,
                })
                .collect(),
            retention: Retention::Unbounded,
            window: None,
            retracting: false,
            bounds: None,
            ranking: None,
            frame: None,
        }
    }

    /// The six digests the docs show: docs/plan-identity.md, "inspect-plan", and
    /// docs/upgrading.md, sections 3 and 4.
    #[test]
    fn golden_digests() {
        let cases = [
            (
                state_fingerprint(
                    NodeKind::Aggregate,
                    &keyed(&["customer_id"], &[("sum(amount)", DEC)]),
                ),
                "4aead023aa01",
            ),
            (
                state_fingerprint(
                    NodeKind::Aggregate,
                    &keyed(
                        &["customer_id"],
                        &[("sum(amount)", DEC), ("count(*)", DataType::Int64)],
                    ),
                ),
                "a5771fc8a5b2",
            ),
            (
                state_fingerprint(
                    NodeKind::Aggregate,
                    &keyed(&["customer_id", "amount"], &[("sum(amount)", DEC)]),
                ),
                "d982cde38013",
            ),
            (
                schema_fingerprint(&[field("amount", DEC), field("customer_id", DataType::Int64)]),
                "55c5eb27e8b4",
            ),
            (
                schema_fingerprint(&[
                    field("customer_id", DataType::Int64),
                    field("sum(amount)", DEC),
                ]),
                "322eb3aa5330",
            ),
            (
                schema_fingerprint(&[
                    field("customer_id", DataType::Int64),
                    field("total_spend", DEC),
                ]),
                "7fac6038b2ce",
            ),
        ];
        for (text, want) in cases {
            let d = sha256_hex(&text);
            assert_eq!(d.len(), 64);
            assert_eq!(short(&d), want, "digest of `{text}`");
        }
    }
}
