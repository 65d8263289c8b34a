//! Tokens on their way to the client: when the client observes each emission (its asyncio
//! loop may be busy sending a burst of requests), and the ITLs it records, kept as runs per
//! cohort (requests whose previous token was observed at the same time), so a decode step
//! costs O(number of cohorts joined since the last decode step), amortised O(1).
use crate::metrics::record::{Emission, ItlRun};

/// The client's single-threaded loop: busy from `busy_start` to `busy_end` sending requests.
#[derive(Debug, Clone, Default)]
pub struct ClientLoop {
    busy_start: u64,
    busy_end: u64,
    send_ns: u64,
}

impl ClientLoop {
    pub fn new(send_ns: u64) -> Self {
        ClientLoop {
            busy_start: 0,
            busy_end: 0,
            send_ns,
        }
    }
    /// Queues one send at `t`; returns when the request has left the client.
    pub fn send(&mut self, t: u64) -> u64 {
        if t > self.busy_end {
            self.busy_start = t;
            self.busy_end = t;
        }
        self.busy_end += self.send_ns;
        self.busy_end
    }
    /// End of the current busy period (when queued sends have all left).
    pub fn busy_end(&self) -> u64 {
        self.busy_end
    }
    /// When a chunk arriving at `t` is timestamped by the client.
    pub fn observe(&self, t: u64) -> u64 {
        if t >= self.busy_start && t < self.busy_end {
            self.busy_end
        } else {
            t
        }
    }
}

/// ITL and emission bookkeeping.
#[derive(Debug, Clone, Default)]
pub struct Streams {
    /// Observation time of the last decode step's tokens.
    last_decode_obs: Option<u64>,
    /// Requests that joined the running batch since the last decode step: (observed time of
    /// their last token, count).
    pending: Vec<(u64, u64)>,
    pending_total: u64,
    decode_steps: u64,
    pub itl: Vec<ItlRun>,
    pub emissions: Vec<Emission>,
}

impl Streams {
    fn push_itl(&mut self, gap_ns: u64, count: u64) {
        if count == 0 {
            return;
        }
        match self.itl.last_mut() {
            Some(last) if last.gap_ns == gap_ns => last.count += count,
            _ => self.itl.push(ItlRun { gap_ns, count }),
        }
    }

    fn push_emission(&mut self, time_ns: u64, count: u64) {
        if count == 0 {
            return;
        }
        match self.emissions.last_mut() {
            Some(last) if last.time_ns == time_ns => last.count += count,
            _ => self.emissions.push(Emission { time_ns, count }),
        }
    }

    /// bench_serving's sglang backend: a chunk of `tokens` tokens `gap_ns` after the previous
    /// one gives `tokens` ITL entries of `gap_ns / tokens` each, for `count` requests.
    fn push_itl_split(&mut self, gap_ns: u64, tokens: u64, count: u64) {
        let t = tokens.max(1);
        self.push_itl((gap_ns + t / 2) / t, count * t);
    }

    /// A decode step's tokens for `members` running requests were observed at `obs`.
    pub fn decode_tokens(&mut self, members: u64, obs: u64) {
        self.decode_tokens_by(members, 1, &[], obs);
    }

    /// A decode step gave each of `members` running requests `gain` tokens, observed at `obs`,
    /// except the `clipped` ones that finished with fewer: (observation time of their last
    /// token if they joined since the last decode step, tokens gained).
    pub fn decode_tokens_by(
        &mut self,
        members: u64,
        gain: u64,
        clipped: &[(Option<u64>, u64)],
        obs: u64,
    ) {
        let mut continuing = members.saturating_sub(self.pending_total);
        let mut tokens = members * gain;
        for &(joined, got) in clipped {
            let prev =
                match joined.and_then(|t| self.pending.iter().position(|c| c.0 == t && c.1 > 0)) {
                    Some(i) => {
                        self.pending[i].1 -= 1;
                        self.pending_total -= 1;
                        self.pending[i].0
                    }
                    None => {
                        continuing = continuing.saturating_sub(1);
                        self.last_decode_obs.unwrap_or(obs)
                    }
                };
            self.push_itl_split(obs.saturating_sub(prev), got, 1);
            tokens -= gain - got;
        }
        if let Some(prev) = self.last_decode_obs {
            self.push_itl_split(obs.saturating_sub(prev), gain, continuing);
        }
        let mut pending = std::mem::take(&mut self.pending);
        for &(t, n) in &pending {
            self.push_itl_split(obs.saturating_sub(t), gain, n);
        }
        pending.clear();
        self.pending = pending; // keeps its capacity for the next cohorts
        self.pending_total = 0;
        self.decode_steps += 1;
        self.last_decode_obs = Some(obs);
        self.push_emission(obs, tokens);
    }

    /// `n` prefill tokens were observed at `obs`; `joined` of those requests now decode.
    pub fn prefill_tokens(&mut self, n: u64, joined: u64, obs: u64) {
        self.push_emission(obs, n);
        if joined > 0 {
            match self.pending.last_mut() {
                Some(last) if last.0 == obs => last.1 += joined,
                _ => self.pending.push((obs, joined)),
            }
            self.pending_total += joined;
        }
    }

    /// `count` tokens observed at `obs` (for the peak-throughput buckets).
    pub fn emit(&mut self, obs: u64, count: u64) {
        self.push_emission(obs, count);
    }

    /// One ITL for a request whose token after a retraction arrived (gap from its last token).
    pub fn single_itl(&mut self, gap_ns: u64) {
        self.push_itl(gap_ns, 1);
    }

    /// The ITLs of one request's chunk of `tokens` tokens `gap_ns` after its previous one.
    pub fn chunk_itl(&mut self, gap_ns: u64, tokens: u64) {
        self.push_itl_split(gap_ns, tokens, 1);
    }

    /// A running request left before its next decode token (retracted). `joined_obs` is the
    /// observation time of its last token if it joined since the last decode step. Returns the
    /// observation time of its last token.
    pub fn leave(&mut self, joined_obs: Option<u64>) -> u64 {
        if let Some(t) = joined_obs {
            if let Some(c) = self.pending.iter_mut().find(|c| c.0 == t && c.1 > 0) {
                c.1 -= 1;
                self.pending_total -= 1;
                return t;
            }
        }
        self.last_decode_obs.unwrap_or(0)
    }

    /// Decode steps observed so far (identifies the current cohort generation).
    pub fn decode_steps(&self) -> u64 {
        self.decode_steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn busy_client_delays_observation() {
        let mut c = ClientLoop::new(10);
        assert_eq!(c.send(0), 10);
        assert_eq!(c.send(0), 20);
        assert_eq!(c.observe(5), 20);
        assert_eq!(c.observe(25), 25);
    }
    #[test]
    fn speculative_chunks_split_their_gap_over_their_tokens() {
        let mut s = Streams::default();
        s.prefill_tokens(2, 2, 100);
        // Both gain 3 tokens 30 ns later: six ITLs of 10 ns.
        s.decode_tokens_by(2, 3, &[], 130);
        // One finishes with 1 token of the 3: one ITL of 40 ns; the other three of 13.3.
        s.decode_tokens_by(2, 3, &[(None, 1)], 170);
        assert_eq!(
            s.itl,
            vec![
                ItlRun {
                    gap_ns: 10,
                    count: 6
                },
                ItlRun {
                    gap_ns: 40,
                    count: 1
                },
                ItlRun {
                    gap_ns: 13,
                    count: 3
                },
            ]
        );
        assert_eq!(s.emissions.iter().map(|e| e.count).sum::<u64>(), 2 + 6 + 4);
    }

    #[test]
    fn cohorts_give_per_request_gaps() {
        let mut s = Streams::default();
        s.prefill_tokens(2, 2, 100);
        s.decode_tokens(2, 130); // both gap 30
        s.prefill_tokens(1, 1, 150);
        s.decode_tokens(3, 170); // two continuing gap 40, one new gap 20
        assert_eq!(
            s.itl,
            vec![
                ItlRun {
                    gap_ns: 30,
                    count: 2
                },
                ItlRun {
                    gap_ns: 40,
                    count: 2
                },
                ItlRun {
                    gap_ns: 20,
                    count: 1
                }
            ]
        );
        assert_eq!(
            s.emissions.iter().map(|e| e.count).sum::<u64>(),
            2 + 2 + 1 + 3
        );
    }
}
