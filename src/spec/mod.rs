//! Inputs: hardware profiles, models, SGLang server settings, workloads, and the quantities
//! derived from them exactly as SGLang derives them.
pub mod bundled;
pub mod defaults;
pub mod engine;
pub mod expert_parallel;
pub mod flag_values;
pub mod graph_defaults;
pub mod hardware;
pub mod hardware_backend;
pub mod hf_config;
pub mod load;
pub mod load_balance;
pub mod model;
pub mod pd;
pub mod prior_runs;
pub mod scheduler_cpu;
pub mod server;
pub mod server_flags;
pub mod speculative;
pub mod speculative_rules;
pub mod speculative_v2;
pub mod version;
pub mod version_rules;
pub mod vllm;
pub mod vllm_client;
pub mod workload;
pub mod yaml_numbers;
