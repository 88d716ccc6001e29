//! Integration tests: the `factotum` binary run as a user runs it.

mod cli;
mod manager;
mod protocol;
