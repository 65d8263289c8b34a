//! Routing requests to data-parallel replicas, as SGLang's `DataParallelController` does:
//! round robin (the default) or the replica with the shortest queue.

use crate::spec::server::LoadBalanceMethod;

/// The router's state: the method, and round robin's next replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Router {
    RoundRobin,
    /// Fewest waiting + running requests; ties to the lowest replica index.
    ShortestQueue,
    /// Internal state of round robin: the next replica.
    RoundRobinAt(usize),
}

impl Router {
    pub fn new(method: LoadBalanceMethod) -> Router {
        match method {
            LoadBalanceMethod::RoundRobin => Router::RoundRobin,
            LoadBalanceMethod::ShortestQueue => Router::ShortestQueue,
        }
    }

    /// `method`, with round robin's counter at `start` (the generate requests the server's DP
    /// controller has routed before this run: earlier runs and this run's warm-ups).
    pub fn starting_at(method: LoadBalanceMethod, start: usize) -> Router {
        match Router::new(method) {
            Router::RoundRobin if start > 0 => Router::RoundRobinAt(start),
            r => r,
        }
    }

    /// Picks one of `n` replicas (`load(r)`: replica r's waiting + running requests, asked
    /// only by shortest queue); advances round robin.
    pub fn pick(&mut self, n: usize, load: impl Fn(usize) -> u64) -> usize {
        let n = n.max(1);
        match *self {
            Router::RoundRobin => {
                *self = Router::RoundRobinAt(1 % n);
                0
            }
            Router::RoundRobinAt(i) => {
                *self = Router::RoundRobinAt((i % n + 1) % n);
                i % n
            }
            Router::ShortestQueue => (0..n).min_by_key(|&i| (load(i), i)).unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn round_robin_cycles_and_shortest_queue_breaks_ties_low() {
        let mut r = Router::RoundRobin;
        let mut late = Router::starting_at(LoadBalanceMethod::RoundRobin, 5);
        let late_picks: Vec<usize> = (0..3).map(|_| late.pick(2, |_| 0)).collect();
        assert_eq!(late_picks, vec![1, 0, 1]);
        let picks: Vec<usize> = (0..5).map(|_| r.pick(3, |_| 0)).collect();
        assert_eq!(picks, vec![0, 1, 2, 0, 1]);
        let mut s = Router::ShortestQueue;
        let loads = [3, 1, 1];
        assert_eq!(s.pick(3, |i| loads[i]), 1);
    }
}
