//! The PD deployment as the shared bench_serving client loop (`engine::client_loop`) sees it:
//! its admission (either side's limits, as the unified server refuses them) and its server
//! events.
use super::Pd;
use crate::engine::admission::{admit, Refusal};
use crate::engine::client_loop::{BenchClient, ServerSide};
use crate::engine::event::{Event, EventQueue};
use crate::engine::input::ClientRequest;
use crate::error::Result;

impl ServerSide for Pd<'_> {
    fn admit(&self, r: &ClientRequest) -> std::result::Result<u64, Refusal> {
        let p_limits = self.prefill[0].sched.limits();
        let d_limits = self.decode[0].sched.limits();
        admit(p_limits, r.prompt_len, 1).and(admit(d_limits, r.prompt_len, r.output_len))
    }

    fn client_and_queue(&mut self) -> (&mut BenchClient, &mut EventQueue) {
        (&mut self.client, &mut self.q)
    }

    /// `ServerArrival(i)` is request `i` at the router, `ServerArrival(n + i)` its KV landing
    /// on the decode side; `StepEnd(u)` the step of prefill unit `u < x·dp` or decode unit
    /// `u − x·dp` (with DP attention, of the group it heads).
    fn server_event(&mut self, ev: Event, t: u64) -> Result<()> {
        let n = self.input.requests.len();
        let n_prefill = self.prefill.len();
        match ev {
            Event::ServerArrival(i) if i < n => self.route(i, t),
            Event::ServerArrival(k) => self.kv_landed(k - n, t),
            Event::StepEnd(s) if s < n_prefill => {
                for k in self.cfg.prefill_layout.group(s) {
                    self.prefill_step_end(k, t)?;
                }
                self.run_prefill(s, t)
            }
            Event::StepEnd(s) => {
                let d = s - n_prefill;
                for k in self.cfg.decode_layout.group(d) {
                    self.decode_step_end(k, t)?;
                }
                self.run_decode(d, t)
            }
            _ => Ok(()),
        }
    }
}
