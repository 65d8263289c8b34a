//! The KV token pool of one server: tokens allocated to requests (page-rounded by the
//! scheduler), the radix cache's shared-prefix groups beside them, and the accounting SGLang's
//! allocator and tree cache keep: allocate, release, make room by evicting unlocked cache, and
//! what admission may count (`available_size() + evictable_size()`).
use super::radix::PrefixCache;

/// Allocated tokens and the prefix cache, within a fixed capacity.
#[derive(Debug, Clone)]
pub struct KvPool {
    capacity_tokens: u64,
    /// Tokens allocated to requests (running contexts + the chunked request), page-rounded.
    used_tokens: u64,
    /// Shared-prefix groups in the radix cache.
    pub cache: PrefixCache,
}

impl KvPool {
    pub fn new(capacity_tokens: u64) -> Self {
        KvPool {
            capacity_tokens,
            used_tokens: 0,
            cache: PrefixCache::default(),
        }
    }

    pub fn capacity_tokens(&self) -> u64 {
        self.capacity_tokens
    }

    /// Tokens allocated to requests.
    pub fn used_tokens(&self) -> u64 {
        self.used_tokens
    }

    /// Tokens admission may count: free plus evictable cache (`available_size() +
    /// evictable_size()`), i.e. all but the allocated and the locked cache.
    pub fn admissible_tokens(&self) -> u64 {
        self.capacity_tokens
            .saturating_sub(self.used_tokens + self.cache.locked_total)
    }

    /// Evicts unlocked cache until `tokens` more fit physically.
    pub fn make_room(&mut self, tokens: u64) {
        let used = self.used_tokens + self.cache.cached_total;
        if used + tokens > self.capacity_tokens {
            self.cache.evict(used + tokens - self.capacity_tokens);
        }
    }

    /// Allocates `tokens` (evicting cache first if needed).
    pub fn allocate(&mut self, tokens: u64) {
        self.make_room(tokens);
        self.used_tokens += tokens;
        debug_assert!(self.used_tokens <= self.capacity_tokens, "KV over capacity");
    }

    /// Frees `tokens` a request held.
    pub fn release(&mut self, tokens: u64) {
        debug_assert!(tokens <= self.used_tokens, "KV release underflow");
        self.used_tokens = self.used_tokens.saturating_sub(tokens);
    }

    /// After a request's prompt is computed, its share of group `group`'s prefix (whole
    /// pages or blocks of `granularity` tokens, at most `fill_len − 1`) moves from its own
    /// allocation into the group's cache, or its duplicate copy is freed if a sibling cached
    /// it first. `shared` is what the request already shares; returns the new amount.
    pub fn cache_group_prefix(
        &mut self,
        group: u64,
        group_prefix: u64,
        fill_len: u64,
        shared: u64,
        granularity: u64,
    ) -> u64 {
        let gp = group_prefix.min(fill_len.saturating_sub(1)) / granularity * granularity;
        if gp <= shared {
            return shared;
        }
        self.release(gp - shared);
        self.cache.insert(group, gp);
        gp
    }

    /// The pool's own invariants: allocated ≤ capacity, allocated + cached ≤ capacity.
    pub fn check(&self) -> Result<(), String> {
        let cap = self.capacity_tokens;
        if self.used_tokens > cap {
            return Err(format!(
                "KV used {} exceeds capacity {cap}",
                self.used_tokens
            ));
        }
        if self.used_tokens + self.cache.cached_total > cap {
            return Err(format!(
                "KV used {} + cached {} exceed capacity {cap}",
                self.used_tokens, self.cache.cached_total
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_evicts_unlocked_cache_and_admission_counts_it() {
        let mut kv = KvPool::new(100);
        kv.allocate(60);
        kv.cache.insert(7, 30); // 60 + 30 = 90 ≤ 100
        assert_eq!(kv.admissible_tokens(), 40); // 100 − 60, the cache is evictable
        kv.allocate(20); // needs 10 evicted
        assert_eq!(kv.used_tokens(), 80);
        assert!(kv.cache.cached_total <= 20);
        kv.check().unwrap();
        kv.release(80);
        assert_eq!(kv.used_tokens(), 0);
    }
}
