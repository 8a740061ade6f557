//! The pipeline's fourth stage: the model cut for what one page or query shows.
//!
//! [`slice`] cuts the model for one page (`GET /api/dashboard?view=…`), [`row_search`] is
//! the operator-row search language, [`row_labels`] how a row is named outside the table,
//! and [`find`] the universal Find over jobs, batches and
//! machines.

pub mod find;
pub mod row_labels;
pub mod row_search;
pub mod slice;
