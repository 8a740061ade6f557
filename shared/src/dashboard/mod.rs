//! The dashboard as a pipeline of pure stages, so the server and the browser share one
//! implementation.
//!
//! Records read from git and the facts learned from GitHub ([`inputs`]) are turned by
//! [`derive`] into the [`model`] — plain data, what the server answers and the page
//! renders. [`view`] cuts the model for one page (slices, row search, universal find);
//! [`act`] holds what an operator does from the page (the two writes, annotations, the
//! launch prompt). [`scope`] sits beside them: which repositories the dashboard shows.
//!
//! Arrows point one way: `model` uses no other stage; `inputs` uses `model` (the values
//! records and facts share with it); `derive` uses `inputs` and `model`; `view` uses
//! `model`; `act` uses `model`, `inputs` and `view`; `scope` uses `inputs`.

pub mod act;
pub mod derive;
#[cfg(any(test, feature = "fixtures"))]
#[doc(hidden)]
pub mod fixtures;
pub mod inputs;
pub mod model;
pub mod scope;
pub mod view;
