//! The pipeline's last stage: what an operator does from the page, as pure rules decided
//! inside the store transaction like every CLI write.
//!
//! [`writes`] imports a batch plan and requests a batch stop, [`annotate`] saves and clears
//! an annotation, and [`launch_prompt`] builds the `$pr-batch` launch prompt from selected
//! rows.

pub mod annotate;
pub mod launch_prompt;
pub mod writes;
