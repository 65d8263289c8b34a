//! The decode side of the PD event loop: a decode unit's (or DP-attention group's) next
//! iteration — pre-allocation polling, then a PREBUILT iteration (CPU only; under DP
//! attention an idle forward while the other ranks decode) or an ordinary decode step — and
//! what its end streams to the client (speculative decoding's several tokens per step
//! included).
use super::Pd;
use crate::cost::BatchShape;
use crate::engine::event::{step_end_time, Event};
use crate::engine::request::Phase;
use crate::error::{Error, Result};

impl Pd<'_> {
    /// Launches the next iteration of decode unit `d` (its whole group with DP attention), or
    /// lets it go idle.
    pub(super) fn run_decode(&mut self, d: usize, t: u64) -> Result<()> {
        let group = self.cfg.decode_layout.group(d);
        for k in group.clone() {
            self.poll_prealloc(k, t)?;
        }
        let mut batches = Vec::with_capacity(group.len());
        let (mut prebuilt_cpu_ns, mut decoding) = (0.0f64, false);
        for k in group.clone() {
            let ds = &mut self.decode[k];
            let b = ds.sched.pd_next_batch();
            match &b {
                None => ds.sched.on_idle(),
                Some(b) => {
                    for &local in &b.retracted {
                        self.client[ds.globals[local]].retract(&mut ds.streams);
                    }
                    if b.decode {
                        decoding = true;
                    } else {
                        // PREBUILT: no GPU forward, one scheduler iteration of CPU.
                        let shape = BatchShape {
                            prefill_reqs: b.prefill.len() as u64,
                            ..Default::default()
                        };
                        let cpu = self.cfg.decode_cost.step_time(&shape).cpu_ns;
                        prebuilt_cpu_ns = prebuilt_cpu_ns.max(cpu);
                    }
                }
            }
            batches.push(b);
        }
        if batches.iter().all(Option::is_none) {
            group.for_each(|k| self.decode[k].stepping = false);
            return Ok(());
        }
        let shapes: Vec<BatchShape> = batches
            .iter()
            .map(|b| match b {
                Some(b) if b.decode => b.shape,
                _ => BatchShape::default(),
            })
            .collect();
        let dur_ns = if decoding {
            let st = match shapes.as_slice() {
                [one] => self.cfg.decode_cost.step_time(one),
                all => self.cfg.decode_cost.group_step_time(all),
            };
            st.total_ns.max(prebuilt_cpu_ns)
        } else {
            prebuilt_cpu_ns
        };
        let end = step_end_time(t, dur_ns, &shapes)?;
        for (k, b) in group.clone().zip(batches) {
            if let Some(b) = &b {
                self.sample(k, t, end - t, &b.shape, true);
            }
            let ds = &mut self.decode[k];
            ds.busy_ns += end - t;
            ds.stepping = true;
            ds.batch = b;
        }
        let n_prefill = self.prefill.len();
        self.q.push(end, Event::StepEnd(n_prefill + group.start));
        self.steps += 1;
        Ok(())
    }

    pub(super) fn decode_step_end(&mut self, d: usize, t: u64) -> Result<()> {
        let ds = &mut self.decode[d];
        let Some(batch) = ds.batch.take() else {
            return Ok(());
        };
        let res = if batch.decode {
            ds.sched.complete(&batch)
        } else {
            ds.sched.pd_complete_prebuilt(&batch)
        };
        if self.input.check_invariants {
            ds.sched.check_invariants().map_err(|e| {
                Error::Msg(format!(
                    "invariant violated on decode unit {d} at t={t} ns: {e}"
                ))
            })?;
        }
        let emit = t + self.input.overheads.stream_latency_ns.round() as u64;
        let obs = self.client.observe(emit);
        if batch.decode && res.gain <= 1 {
            ds.streams.decode_tokens(res.decoded, obs);
        } else if batch.decode {
            // Speculative decoding: every running request gained `gain` tokens (clipped ones
            // fewer), as in the unified server.
            let steps = ds.streams.decode_steps();
            let clipped: Vec<(Option<u64>, u64)> = res
                .clipped
                .iter()
                .map(|&(local, got)| {
                    let joined = self.client[ds.globals[local]].joined;
                    (joined.filter(|j| j.1 == steps).map(|j| j.0), got)
                })
                .collect();
            ds.streams
                .decode_tokens_by(res.decoded, res.gain, &clipped, obs);
        }
        let mut joined = 0;
        for &local in &res.prefill_tokens {
            let i = ds.globals[local];
            self.client[i].first_obs = Some(obs);
            self.stamps[i].first_token_ns = t;
            if ds.sched.phase(local) == Phase::Running {
                self.client[i].joined = Some((obs, ds.streams.decode_steps()));
                self.client[i].last_obs = obs;
                joined += 1;
            }
        }
        ds.streams
            .prefill_tokens(res.prefill_tokens.len() as u64, joined, obs);
        // Resumed (retracted) requests rejoin: their next gap counts from their last token.
        if !batch.decode {
            for it in &batch.prefill {
                let i = ds.globals[it.id];
                // Fresh requests got their first token at `t` above.
                if self.stamps[i].first_token_ns == t || ds.sched.phase(it.id) != Phase::Running {
                    continue;
                }
                let last = self.client[i].last_obs;
                ds.streams.prefill_tokens(0, 1, last);
                self.client[i].joined = Some((last, ds.streams.decode_steps()));
            }
        }
        for &local in &res.finished {
            self.client.finished(ds.globals[local], obs, &mut self.q);
        }
        Ok(())
    }
}
