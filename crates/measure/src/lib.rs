//! The in-process side of an instruction-count measurement.
//!
//! A harness is one API path of a TLS library (a handshake, a config build, a
//! megabyte of records). This crate defines what a harness is ([`Harness`]),
//! how a measured process marks the counted region for Valgrind
//! ([`region`]), and what a child process does when the runner re-executes it
//! under Valgrind ([`child`]).
//!
//! It is deliberately tiny and dependency-light because it is linked into the
//! measured binary: everything here runs *inside* the process whose
//! instructions are being counted.

pub mod child;
pub mod cpu;
pub mod fork_server;
pub mod harness;
pub mod heap;
pub mod name;
pub mod parts;
pub mod program;
pub mod region;
pub mod scale;

pub use harness::{Harness, HarnessError, Received, RuntimeLibrary};
pub use name::{is_harness_name, MAX_NAME_LEN};
