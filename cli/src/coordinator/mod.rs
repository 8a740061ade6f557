//! `agent-coord coordinate`: the issue coordinator's I/O side (DESIGN §6). The rules live in
//! `agent_coord_shared::coordinator`; this module runs processes, git and GitHub for them.
#![allow(dead_code)]

pub(crate) mod git;
pub(crate) mod process;
