//! Validation against real runs: log parsing, manifest, replay and comparison.
pub mod compare;
pub mod logparse;
pub mod manifest;
pub mod render;
pub mod replay;
pub mod sampled;
pub mod vllm;
