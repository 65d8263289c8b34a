//! The bench_serving client side of the PD event loop (as in `engine::sim`): dispatch, the
//! max-concurrency semaphore, the single-threaded send burst, the tokenizer queue, and the
//! run's safety budgets.
use super::Pd;
use crate::engine::admission::admit;
use crate::engine::event::Event;
use crate::error::{Error, Result};

impl Pd<'_> {
    pub(super) fn check_budget(&self, t: u64) -> Result<()> {
        if self.q.processed > self.input.max_events {
            return Err(Error::Budget(format!(
                "more than {} events (raise --max-events if the run is really this large)",
                self.input.max_events
            )));
        }
        if let Some((start, secs)) = self.input.deadline {
            if self.q.processed % 4096 == 0 && start.elapsed().as_secs_f64() > secs {
                return Err(Error::Budget(format!(
                    "more than {secs} s of wall-clock time at {:.1} s of simulated time (raise --max-wall-seconds)",
                    t as f64 / 1e9
                )));
            }
        }
        Ok(())
    }

    pub(super) fn dispatch(&mut self, i: usize, t: u64) {
        match self.input.max_concurrency {
            Some(cap) if self.in_flight >= cap => self.waiters.push_back(i),
            _ => self.start(i, t),
        }
    }

    fn start(&mut self, i: usize, t: u64) {
        self.in_flight += 1;
        self.client[i].start_ns = t;
        let sent = self.client_loop.send(t);
        self.pending_sends.push(i);
        if self.flush_at.is_none() {
            self.flush_at = Some(sent);
            self.q.push(sent, Event::ClientFlush);
        }
    }

    pub(super) fn flush_sends(&mut self, t: u64) {
        let end = self.client_loop.busy_end();
        if end > t {
            self.flush_at = Some(end);
            self.q.push(end, Event::ClientFlush);
            return;
        }
        self.flush_at = None;
        for i in std::mem::take(&mut self.pending_sends) {
            self.send_to_router(i, t);
        }
    }

    pub(super) fn client_done(&mut self, t: u64) {
        self.in_flight -= 1;
        if let Some(w) = self.waiters.pop_front() {
            self.start(w, t);
        }
    }

    /// The request reaches the router (and, tokenized, both servers); refused ones fail as
    /// the unified server refuses them (either side's limits).
    fn send_to_router(&mut self, i: usize, sent: u64) {
        let o = &self.input.overheads;
        let at_server = sent + o.request_latency_ns.round() as u64;
        let r = &self.input.requests[i];
        let p_limits = *self.prefill[0].sched.limits();
        let d_limits = *self.decode[0].sched.limits();
        match admit(&p_limits, r.prompt_len, 1).and(admit(&d_limits, r.prompt_len, r.output_len)) {
            Ok(max_new) => self.client[i].out_len = max_new,
            Err(_) => {
                self.client[i].failed = true;
                let back = at_server + o.request_latency_ns.round() as u64;
                self.client[i].done_obs = Some(back);
                self.q.push(back, Event::ClientDone(i));
                return;
            }
        }
        let tok = (r.prompt_len as f64 * o.tokenize_per_token_ns).round() as u64;
        let arrive = at_server.max(self.tokenizer_free_ns) + tok;
        self.tokenizer_free_ns = arrive;
        self.q.push(arrive, Event::ServerArrival(i));
    }
}
