//! One module per operator, each implementing [`crate::operator::Operator`].

pub(crate) mod accumulate;
pub(crate) mod aggregate;
pub(crate) mod deduplicate;
pub(crate) mod filter;
pub(crate) mod interval_join;
pub(crate) mod join;
pub(crate) mod normalize;
pub(crate) mod over;
pub(crate) mod project;
pub(crate) mod rank;
pub(crate) mod session;
pub(crate) mod slots;
pub(crate) mod sort;
pub(crate) mod temporal_join;
pub(crate) mod window;
pub(crate) mod window_rank;
pub(crate) mod window_table;
