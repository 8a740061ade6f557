//! The pipeline's first stage: the coordination records as the dashboard reads them from
//! the state branch and heartbeat refs, and the facts a refresher learned from GitHub.
//!
//! [`records`] parses every record kind and gathers them into [`records::Inputs`], with the
//! coordinator's task checkpoints ([`tasks`]) and operators' annotations ([`annotations`]);
//! [`github_facts`] holds what GitHub said, [`github_wanted`] what to ask it next.

pub mod annotations;
pub mod github_facts;
pub mod github_wanted;
pub mod paths;
pub mod records;
pub mod tasks;
