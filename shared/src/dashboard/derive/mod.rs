//! The pipeline's second stage: everything that computes the [`crate::dashboard::model`]
//! from the [`crate::dashboard::inputs`] and a clock.
//!
//! [`full`] runs a whole build and [`update`] the incremental one, each through the same
//! steps: batch and lane [`sources`], work [`items`], [`operator_rows`], [`batch_views`],
//! health [`signals`], [`machine_groups`], and [`assemble`] (attention, counts, recent
//! events). The per-record rules they apply are in [`rules`] (row state, QA, stop control),
//! [`words`] (status vocabulary matching), [`github_rules`] (what GitHub facts decide) and
//! [`task_rules`] (coordinator tasks) and [`spend`] (what their lane runs cost);
//! [`event_index`] is how every step reads events. For the Lanes page, [`lane_timeline`]
//! derives which lane ran when and how busy machines and vendors were, per request.
//! Beside the overview model: the item and batch [`pages`] with the [`custody`] timeline
//! and the [`handoff`] texts (resume prompt, takeover command), the batch page's
//! [`history`] window, and the server's sync [`freshness`].

mod assemble;
mod batch_views;
pub mod custody;
mod event_index;
pub mod freshness;
mod full;
pub mod github_rules;
pub mod handoff;
pub mod history;
mod items;
pub mod lane_timeline;
pub mod machine_groups;
mod operator_rows;
pub mod pages;
pub mod rules;
pub mod signals;
pub mod sources;
pub mod spend;
pub mod task_rules;
mod update;
pub mod words;

pub use assemble::event_view;
pub use full::build;
pub use full::build_with;
pub use full::Derivation;
pub use update::update;
pub use update::update_with;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_archive;
#[cfg(test)]
mod tests_incremental;
#[cfg(test)]
mod tests_warnings;
