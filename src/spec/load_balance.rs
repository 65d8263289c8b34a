//! `--load-balance-method`: SGLang's data-parallel request spreading policies (the value type;
//! the router that applies it is `engine::router`).

/// `--load-balance-method`: how requests are spread over data-parallel replicas (the
/// router that applies it is `engine::router`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadBalanceMethod {
    RoundRobin,
    /// Fewest waiting + running requests; ties to the lowest replica index.
    ShortestQueue,
}

impl LoadBalanceMethod {
    pub fn parse(s: &str) -> Option<LoadBalanceMethod> {
        match s.replace('-', "_").as_str() {
            "round_robin" => Some(LoadBalanceMethod::RoundRobin),
            "shortest_queue" => Some(LoadBalanceMethod::ShortestQueue),
            _ => None,
        }
    }
}
