//! Which target a command works against: `--target NAME`, or the only one the project
//! declares, and when having none at all is a refusal.
//!
//! See docs/commands.md ("streamform build", "streamform apply", "streamform plan") and
//! docs/flink-backend.md, "Choosing a target": the target is required when the project
//! declares more than one; `apply` always needs one; `build` needs one when the application
//! reads or writes Kafka (the target says where Kafka is); `plan` needs one unless
//! `--against` names a file.

use streamform_ir::ModelPlan;
use streamform_ir::plan::uses_kafka;

use crate::config::{FlinkTarget, KafkaTarget, ProjectConfig};
use crate::diagnostic::suggest;

/// The target a command works against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChosenTarget {
    /// Its name under `targets:`.
    pub name: String,
    /// Its backend, `flink`.
    pub backend: String,
    /// `flink.gateway`, the SQL Gateway's address.
    pub gateway: Option<String>,
    /// Kafka as the backend sees it.
    pub kafka: Option<KafkaTarget>,
    /// The Flink cluster's REST services and how to talk to them.
    pub flink: Option<FlinkTarget>,
}

/// When a command cannot go on without a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Always: `apply` submits to the target's gateway.
    Apply,
    /// Always: `plan` reads the target's applied record (without `--against`).
    Plan,
    /// When the application reads or writes Kafka (`build`).
    ForKafka,
    /// Never (`plan --against FILE`).
    Optional,
}

/// Why no target could be chosen: a message and a `help:` line (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub help: String,
}

/// Chooses the target: `requested`, or the only one declared. `Ok(None)` when the project
/// declares none and `need` allows that. With several declared and none requested, an
/// optional target stays unchosen and a needed one is a refusal.
///
/// # Errors
/// A [`Refusal`]: an unknown name, several targets and no `--target`, or no target where
/// one is needed.
pub fn choose_target(
    config: &ProjectConfig,
    requested: Option<&str>,
    need: Need,
    plans: &[ModelPlan],
) -> Result<Option<ChosenTarget>, Refusal> {
    let targets = &config.targets;
    let names: Vec<&str> = targets.keys().map(String::as_str).collect();
    let name = match (requested, names.as_slice()) {
        (Some(name), _) if targets.contains_key(name) => name,
        (Some(name), []) => {
            return Err(Refusal {
                message: format!("there is no target `{name}` in streamform.yml"),
                help: "the project declares no targets; add one under `targets:` in streamform.yml"
                    .into(),
            });
        }
        (Some(name), _) => {
            return Err(Refusal {
                message: format!("there is no target `{name}` in streamform.yml"),
                help: suggest(name, &names, "the targets are"),
            });
        }
        (None, [only]) => only,
        (None, []) => {
            let declare = "declare one under `targets:` in streamform.yml, with `flink.gateway` and `kafka.bootstrap_servers`";
            let (message, help) = match need {
                Need::Optional => return Ok(None),
                Need::ForKafka if !uses_kafka(plans) => return Ok(None),
                Need::ForKafka => (
                    "the project declares no target, and the application reads or writes Kafka",
                    declare.to_string(),
                ),
                Need::Apply => (
                    "the project declares no target to apply to",
                    declare.to_string(),
                ),
                Need::Plan => (
                    "the project declares no target, so no applied record to compare with",
                    format!(
                        "{declare}; or compare with a plan manifest: streamform plan --against build/plan.json"
                    ),
                ),
            };
            return Err(Refusal {
                message: message.into(),
                help,
            });
        }
        (None, _) if need == Need::Optional => return Ok(None),
        (None, _) => {
            return Err(Refusal {
                message: format!(
                    "the project declares {} targets; choose one with --target",
                    names.len()
                ),
                help: format!("the targets are: {}", names.join(", ")),
            });
        }
    };
    let target = &targets[name];
    Ok(Some(ChosenTarget {
        name: name.to_string(),
        backend: target.backend.clone(),
        gateway: target.gateway.clone(),
        kafka: target.kafka.clone(),
        flink: target.flink.clone(),
    }))
}

/// Where `apply` records what it applied to `target`, relative to the project:
/// `.streamform/applied/<target>.json` (docs/plan-diff.md, "The applied record").
pub fn applied_record_path(target: &str) -> String {
    format!(".streamform/applied/{target}.json")
}

/// The lock beside a target's record that keeps two lifecycle commands (apply, stop) from
/// acting on one target at once: `.streamform/applied/<target>.lock`.
pub fn lock_path(target: &str) -> String {
    format!(".streamform/applied/{target}.lock")
}
