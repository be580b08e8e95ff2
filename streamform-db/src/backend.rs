//! The Flink application as a query: what `build`, `apply` and `watch` read, one answer,
//! with each backend finding turned into a diagnostic that points at what it is about (the
//! model's entry in streamform.yml for its declaration and sink, its ORDER BY for a sort).

use streamform_flink::{Application, Finding, FindingKind, KafkaSettings, Subject};

use crate::config::KafkaTarget;
use crate::db::{
    Db, application_plans, model_files, order_by_span, project_config, resolve_anchor,
};
use crate::diagnostic::{Anchor, Code, Diagnostic};
use crate::{Project, SourceFile};

/// The application for a target's Kafka settings, or why Flink cannot run it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FlinkBuild {
    /// The statements; `None` when there are capability errors (or the project does not
    /// compile).
    pub app: Option<Application>,
    /// Capability errors: what Flink cannot run faithfully.
    pub errors: Vec<Diagnostic>,
    /// What runs but deserves attention. Application-wide warnings have no file.
    pub warnings: Vec<Diagnostic>,
}

/// Generates the application (`None` when the project does not compile or has a cycle,
/// which check reports).
#[salsa::tracked(returns(ref))]
pub fn flink_application(
    db: &dyn Db,
    project: Project,
    kafka: Option<KafkaTarget>,
) -> Option<FlinkBuild> {
    let plans = application_plans(db, project).as_ref()?;
    let settings = kafka.map(|k| KafkaSettings {
        bootstrap_servers: k.bootstrap_servers,
        startup: k.startup,
    });
    Some(match streamform_flink::generate(plans, settings.as_ref()) {
        Ok(app) => FlinkBuild {
            warnings: app
                .warnings
                .iter()
                .map(|f| finding(db, project, f, false))
                .collect(),
            app: Some(app),
            errors: Vec::new(),
        },
        Err(errors) => FlinkBuild {
            app: None,
            errors: errors
                .iter()
                .map(|f| finding(db, project, f, true))
                .collect(),
            warnings: Vec::new(),
        },
    })
}

/// Where the model first writes `%` or `MOD(…)`, which a float64 modulo finding is about.
fn modulo_span(db: &dyn Db, file: SourceFile) -> Option<std::ops::Range<usize>> {
    use sqlparser::ast::{BinaryOperator, Expr, Spanned};
    let query = crate::db::parse_model(db, file).query.as_ref()?;
    let mut found = None;
    let _ = sqlparser::ast::visit_expressions(query, |e| {
        let hit = match e {
            Expr::BinaryOp {
                op: BinaryOperator::Modulo,
                ..
            } => true,
            Expr::Function(f) => f.name.to_string().eq_ignore_ascii_case("mod"),
            _ => false,
        };
        if hit {
            found = Some(e.span());
            return std::ops::ControlFlow::Break(());
        }
        std::ops::ControlFlow::Continue(())
    });
    let text = crate::db::file_text(db, file)?;
    let span = crate::sql::byte_span(text, found?)?;
    // A `%` is pointed at itself (the parser's span of its left operand may leave out a
    // CAST around it).
    Some(match text.get(span.clone()).and_then(|t| t.find('%')) {
        Some(at) => span.start + at..span.start + at + 1,
        None => span,
    })
}

/// Where the model first writes a JOIN, which a pre-aggregated join finding is about.
fn join_span(db: &dyn Db, file: SourceFile) -> Option<std::ops::Range<usize>> {
    use sqlparser::ast::Spanned;
    let query = crate::db::parse_model(db, file).query.as_ref()?;
    let sqlparser::ast::SetExpr::Select(s) = query.body.as_ref() else {
        return None;
    };
    let found = s
        .from
        .iter()
        .flat_map(|t| t.joins.iter())
        .next()
        .map(|j| j.relation.span());
    crate::sql::byte_span(crate::db::file_text(db, file)?, found?)
}

/// A finding as a diagnostic: a sort points at the model's ORDER BY; a declaration or a
/// sink at the model's entry in streamform.yml, a retention at its `retention:`; anything else at the model's file; the
/// application as a whole at no file.
fn finding(db: &dyn Db, project: Project, f: &Finding, error: bool) -> Diagnostic {
    let d = if error {
        Diagnostic::error(Code::Flink(f.kind), f.message.clone())
    } else {
        Diagnostic::warning(Code::Flink(f.kind), f.message.clone())
    }
    .with_help(f.help.clone());
    let Some(model) = &f.model else {
        return d;
    };
    let file = model_files(db, project).get(model).copied();
    let declared = project_config(db, project)
        .config
        .as_ref()
        .is_some_and(|c| c.models.contains_key(model));
    match (&f.subject, file) {
        (Subject::Operator(_), Some(file)) => {
            let span = match f.kind {
                FindingKind::FloatModulo => modulo_span(db, file),
                FindingKind::PreAggregatedJoin => join_span(db, file),
                _ => order_by_span(db, file),
            };
            d.in_file(file).with_span(span)
        }
        (Subject::Retention, _) if declared => resolve_anchor(
            db,
            project,
            &d.anchored(Anchor::ModelRetention(model.clone())),
        ),
        (Subject::Sink | Subject::Model, _) if declared => {
            resolve_anchor(db, project, &d.anchored(Anchor::ModelEntry(model.clone())))
        }
        (_, Some(file)) => d.in_file(file),
        _ => d.in_file(*project.config(db)),
    }
}
