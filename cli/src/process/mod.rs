//! Starting processes (DESIGN §6 "Processes"), shared by the coordinator, the dashboard's
//! enrichment and `agent-coord lane`: each child runs in its own process group that is killed
//! at its timeout and once it ends, with bounded output. Network git on the state branch is
//! `git_subprocess`'s.
//!
//! - `runner`: the one bounded runner (explicit argv, cwd, scrubbed env, bounded output);
//! - `group`: a child's process group, waited for with a deadline and killed;
//! - `capture`: one output stream read on its own thread, bounded;
//! - `token`: a GitHub token read from the environment or printed by a command.

pub(crate) mod capture;
pub(crate) mod group;
pub(crate) mod runner;
pub(crate) mod token;

pub(crate) use runner::run;
pub(crate) use runner::Finished;
pub(crate) use runner::RunError;
pub(crate) use runner::Spec;
