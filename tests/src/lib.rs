//! e2e helpers.
