//! The `inspect-plan` text rendering, drawn from the manifest so the text and the JSON
//! cannot disagree.
//!
//! See docs/plan-identity.md, "inspect-plan".

use std::fmt::Write;

use crate::identity::short;
use crate::manifest::{
    Manifest, ModelEntry, NodeEntry, StateEntry, operator_title, render_columns as columns,
};

/// Renders one model: its declaration, then each node's identity. Ends with a newline.
pub fn render_model(model: &ModelEntry, nodes: &[NodeEntry]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", model.name);
    let _ = writeln!(
        out,
        "  materialized={} key=[{}]",
        model.materialized,
        model.key.join(", ")
    );
    let _ = writeln!(out, "  output={}", model.output);
    for node in nodes {
        out.push('\n');
        render_node(&mut out, node);
    }
    out
}

/// Renders every model in the manifest's order, separated by blank lines, then the
/// application digest (`application digest 7b0d9542cf02`). Ends with a newline.
pub fn render_manifest(manifest: &Manifest) -> String {
    let mut out = String::new();
    for model in &manifest.models {
        let nodes: Vec<NodeEntry> = manifest
            .nodes
            .iter()
            .filter(|n| n.model == model.name)
            .cloned()
            .collect();
        out.push_str(&render_model(model, &nodes));
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "application digest {}",
        short(&manifest.application_digest)
    );
    out
}

fn render_node(out: &mut String, node: &NodeEntry) {
    let title = operator_title(&node.operator);
    let _ = writeln!(out, "  {}  {title}", node.id);
    let _ = writeln!(out, "    definition={}", node.definition);
    let _ = writeln!(
        out,
        "    schema={}  digest={}",
        columns(&node.schema),
        short(&node.schema_digest)
    );
    let _ = writeln!(
        out,
        "    boundedness={} changelog={}",
        node.boundedness, node.changelog
    );
    if let Some(time) = &node.time {
        let _ = writeln!(out, "    time={time}");
    }
    match &node.state {
        StateEntry::Stateless => out.push_str("    state=stateless\n"),
        StateEntry::Keyed {
            keys,
            accumulators,
            retention,
            window,
            retracting,
            bounds,
            ranking,
            frame,
            digest,
        } => {
            let window = window
                .as_ref()
                .map(|w| format!(" window={w}"))
                .unwrap_or_default();
            let window = match bounds {
                Some(b) => format!("{window} time=[{b}]"),
                None => window,
            };
            let window = match ranking {
                Some(r) => format!("{window} rank=[{r}]"),
                None => window,
            };
            let window = match frame {
                Some(f) => format!("{window} frame=[{f}]"),
                None => window,
            };
            let retracting = if *retracting { " retracting" } else { "" };
            let _ = writeln!(
                out,
                "    state=keyed key=[{}]{window}{retracting} accumulators={} retention={retention}",
                keys.join(", "),
                columns(accumulators)
            );
            let _ = writeln!(out, "    state digest={}", short(digest));
        }
    }
}
