//! Integration tests: the `factotum` binary run as a user runs it.

mod cli;
mod fuzz;
mod manager;
mod protocol;
mod trap_log;
mod web;
