//! Decode-batch formation (`update_running_batch`): the KV memory check, retraction when the
//! pool runs out (victims, requeue at the tail, new-token-ratio re-estimate) and the ratio
//! decay (reference A.4).
use super::{Batch, Scheduler};
use crate::cost::BatchShape;
use crate::engine::request::Phase;
use crate::spec::version::Version;

/// SGLang's `retract_decode_steps`.
const RETRACT_DECODE_STEPS: u64 = 20;

impl Scheduler {
    pub(super) fn try_decode(&mut self) -> Option<Batch> {
        self.filter_finished();
        if self.running.is_empty() {
            return None;
        }
        let page = self.cfg.page_size;
        let mut retracted = Vec::new();
        if self.kv_free() < self.decode_reserve() {
            retracted = self.retract();
        } else {
            self.new_token_ratio = (self.new_token_ratio - self.ratio_decay).max(self.min_ratio);
        }
        let gain = match self.cfg.spec {
            Some(spec) => self.acceptance.draw(&spec),
            None => 1,
        };
        let need = self.running.new_pages_for(gain) * page;
        // Hybrid SWA pools: `maybe_evict_swa` runs between the memory check and the
        // allocation (not modelled with speculation: no eviction, a conservative charge).
        if let Some(s) = self.swa.as_mut().filter(|_| self.cfg.spec.is_none()) {
            s.decode_batch();
        }
        if self.kv_free() < need {
            // One request left and still no room: SGLang asserts here. Nothing can progress.
            return None;
        }
        self.allocate(need);
        let (ghost_n, ghost_ctx) = std::mem::take(&mut self.ghosts);
        let bs = self.running.len() + ghost_n;
        let shape = BatchShape {
            decode_reqs: bs,
            decode_ctx_sum: self.running.ctx_sum() + ghost_ctx + bs,
            graph_bs: self.cfg.graph_batch_size(bs),
            ..Default::default()
        };
        Some(Batch {
            shape,
            prefill: Vec::new(),
            decode: true,
            retracted,
            gain,
        })
    }

    /// KV tokens the decode memory check wants free (`check_decode_mem`): the next token's
    /// pages, or with speculation `N + k·K` tokens per request (the verify and draft slots,
    /// allocated and freed within the iteration; per request page-rounded when paged).
    fn decode_reserve(&self) -> u64 {
        match self.cfg.spec {
            Some(spec) => self.running.len() * self.cfg.ceil_page(spec.buffer_tokens),
            None => self.running.new_pages_next_step() * self.cfg.page_size,
        }
    }

    /// `retract_decode`: removes victims (fewest outputs, then longest prompt) until the next
    /// step fits (≥0.5.2) or until 20 steps fit for everyone (≤0.5.1); always at least one,
    /// never the last. Returns the victims in order.
    fn retract(&mut self) -> Vec<usize> {
        let old_rule = self.cfg.version < Version::new(0, 5, 2);
        let mut victims = Vec::new();
        let mut first = true;
        loop {
            let n = self.running.len();
            // The next step must fit (0.5.2+'s rule); ≤0.5.1 also keeps 20 steps of slack.
            let next_step_short = self.kv_free() < self.decode_reserve();
            let short = next_step_short || (old_rule && self.kv_free() < n * RETRACT_DECODE_STEPS);
            if !(first || short) || n <= 1 {
                break;
            }
            first = false;
            let Some(id) = self.running.next_victim() else {
                break;
            };
            let Some(m) = self.running.remove(id) else {
                break;
            };
            let ctx = self.running.ctx_of(&m);
            let out = self.running.out_of(&m);
            self.leave_pool(id, ctx, false);
            let r = &mut self.reqs[id];
            r.out = out;
            r.prefilled = 0;
            r.cached_prefix = 0;
            r.retractions += 1;
            r.phase = Phase::Waiting;
            self.waiting.push_back(id);
            victims.push(id);
            self.stats.retractions += 1;
        }
        self.batch_is_full = false;
        let plus_one = if self.cfg.version >= Version::new(0, 5, 4) {
            1.0
        } else {
            0.0
        };
        let kept = self.running.len() as f64;
        let est = (self.running.out_sum() as f64 + RETRACT_DECODE_STEPS as f64 * kept)
            / (self.running.max_new_sum() as f64 + plus_one);
        self.new_token_ratio = if est.is_finite() { est.min(1.0) } else { 1.0 };
        victims
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::request::Phase;
    use crate::engine::scheduler::Scheduler;
    use crate::spec::bundled::{load_hardware, load_model};
    use crate::spec::server::{ServerConfig, ServerFlags};

    /// A 1000-token pool holding ten requests of 99 tokens (1 output each) and one of 5 tokens
    /// with 50 outputs: 5 tokens free for 11 requests, so the next decode step must retract.
    fn crowded(version: &str) -> Scheduler {
        let flags = ServerFlags {
            max_total_tokens: Some(1000),
            sglang_version: Some(version.parse().unwrap()),
            ..Default::default()
        };
        let cfg = ServerConfig::resolve(
            &flags,
            &load_hardware("h100-sxm5-80gb").unwrap(),
            &load_model("qwen2.5-0.5b").unwrap(),
        )
        .unwrap();
        let mut s = Scheduler::new(&cfg, None);
        for i in 0..10 {
            let id = s.add_request(98, 500);
            s.reqs[id].phase = Phase::Running;
            s.running.join(id, 99, 1, 98, 500, i);
            s.allocate(99);
        }
        let id = s.add_request(1, 500);
        s.reqs[id].phase = Phase::Running;
        s.running.join(id, 5, 50, 1, 500, 10);
        s.allocate(5);
        s.check_invariants().unwrap();
        s
    }

    #[test]
    fn new_rule_retracts_until_the_next_step_fits() {
        let mut s = crowded("0.5.6");
        let b = s.try_decode().unwrap();
        // Victim: fewest outputs, then longest prompt, then latest joined → request 9.
        assert_eq!(b.retracted, vec![9]);
        assert_eq!(b.shape.decode_reqs, 10);
        // Ratio re-estimate over the kept requests: (Σout + 20·n) / (Σmax_new + 1).
        let expect = ((9 + 50) as f64 + 20.0 * 10.0) / (10.0 * 500.0 + 1.0);
        assert!((s.new_token_ratio - expect).abs() < 1e-12);
    }

    /// Overlap scheduler: a request that finishes in a decode step still rides the next one
    /// up to 0.5.21; from 0.5.22 the scheduler leaves out requests whose in-flight result
    /// finishes them by length (scheduler.py at v0.5.22, `_reqs_finishing_inflight`).
    #[test]
    fn finished_request_rides_the_next_decode_only_before_0_5_22() {
        let next_decode_reqs = |version: &str| {
            let flags = ServerFlags {
                sglang_version: Some(version.parse().unwrap()),
                ..Default::default()
            };
            let hw = load_hardware("h100-sxm5-80gb").unwrap();
            let cfg =
                ServerConfig::resolve(&flags, &hw, &load_model("qwen2.5-0.5b").unwrap()).unwrap();
            assert!(cfg.overlap_schedule);
            let mut s = Scheduler::new(&cfg, None);
            for (i, max_new) in [2, 10].into_iter().enumerate() {
                let id = s.add_request(10, max_new);
                s.reqs[id].phase = Phase::Running;
                s.running.join(id, 11, 1, 10, max_new, i as u64);
                s.allocate(11);
            }
            let b = s.try_decode().unwrap();
            assert_eq!(s.complete(&b).finished.len(), 1);
            s.try_decode().unwrap().shape.decode_reqs
        };
        assert_eq!(next_decode_reqs("0.5.21"), 2);
        assert_eq!(next_decode_reqs("0.5.22"), 1);
    }

    #[test]
    fn old_rule_retracts_until_twenty_steps_fit() {
        let mut s = crowded("0.5.1");
        let b = s.try_decode().unwrap();
        // After one victim 104 free < 10·20; after two, 203 free ≥ 9·20.
        assert_eq!(b.retracted, vec![9, 8]);
        let expect = ((8 + 50) as f64 + 20.0 * 9.0) / (9.0 * 500.0);
        assert!(
            (s.new_token_ratio - expect).abs() < 1e-12,
            "no +1 before 0.5.4"
        );
    }
}
