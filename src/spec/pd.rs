//! Prefill/decode disaggregation (PD, "xPyD"): `x` prefill servers and `y` decode servers,
//! each with its own TP size, hardware and server flags, joined by the KV-transfer link
//! (SGLang `--disaggregation-mode prefill|decode` behind `sglang_router --pd-disaggregation`).
//! [`PdFlags`] is what the user gives (flags or the `pd:` section of a scenario file);
//! [`PdConfig`] the resolved deployment, including the per-request transfer arithmetic.
use super::bundled::load_hardware;
use super::defaults::PdRole;
use super::flag_values::show_f64;
use super::hardware::HardwareProfile;
pub use super::hardware::PdTransferLink;
use super::model::ModelSpec;
use super::server::{LoadBalanceMethod, ServerConfig, ServerFlags};
use super::version::Version;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// SGLang's `--num-reserved-decode-tokens` default (v0.4.8+; an env var before, same value).
pub const DEFAULT_RESERVED_DECODE_TOKENS: u64 = 512;

/// PD flags; everything `None`/false means "no disaggregation".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PdFlags {
    /// Prefill/decode disaggregation: separate prefill and decode servers behind a PD router
    /// (the other --prefill-*/--decode-* flags shape them; the server flags apply to both).
    #[arg(long)]
    #[serde(default)]
    pub disaggregation: bool,
    /// Prefill servers (each a full TP group of --prefill-tp GPUs). Default 1.
    #[arg(long)]
    pub prefill_replicas: Option<u64>,
    /// Decode servers (each a full TP group of --decode-tp GPUs). Default 1.
    #[arg(long)]
    pub decode_replicas: Option<u64>,
    /// TP size of each prefill server (default --tp).
    #[arg(long)]
    pub prefill_tp: Option<u64>,
    /// TP size of each decode server (default --tp).
    #[arg(long)]
    pub decode_tp: Option<u64>,
    /// Hardware of the prefill servers (default --hardware).
    #[arg(long)]
    pub prefill_hardware: Option<String>,
    /// Hardware of the decode servers (default --hardware).
    #[arg(long)]
    pub decode_hardware: Option<String>,
    /// --chunked-prefill-size of the prefill servers (default: the shared flag).
    #[arg(long, allow_hyphen_values = true)]
    pub prefill_chunked_prefill_size: Option<i64>,
    /// --max-prefill-tokens of the prefill servers (default: the shared flag).
    #[arg(long)]
    pub prefill_max_prefill_tokens: Option<u64>,
    /// --max-running-requests of the decode servers (default: the shared flag).
    #[arg(long)]
    pub decode_max_running_requests: Option<u64>,
    /// --cuda-graph-max-bs of the decode servers (default: the shared flag).
    #[arg(long)]
    pub decode_cuda_graph_max_bs: Option<u64>,
    /// KV-transfer bandwidth per GPU, GB/s (1e9 bytes/s), overriding the hardware profile's
    /// link (NVLink inside one node, `pd_transfer` RDMA NICs between nodes).
    #[arg(long, value_name = "GB/S")]
    pub transfer_bandwidth: Option<f64>,
    /// Fixed time of one KV transfer (completion notice, polling), µs (default: the profile's).
    #[arg(long, value_name = "US")]
    pub transfer_latency_us: Option<f64>,
    /// PD router policy for both sides: round_robin (default) or shortest_queue (the
    /// sglang_router's power_of_two/cache_aware fall back to the least loaded worker).
    #[arg(long)]
    pub pd_policy: Option<String>,
    /// --num-reserved-decode-tokens: decode KV headroom per request in pre-allocation (512).
    #[arg(long)]
    pub num_reserved_decode_tokens: Option<u64>,
    /// --dp of each prefill server (default --dp): DP ranks inside the server, chosen per
    /// request as `bootstrap_room % dp` (SGLang's DP controller in PD mode).
    #[arg(long)]
    pub prefill_dp: Option<u64>,
    /// --dp of each decode server (default --dp).
    #[arg(long)]
    pub decode_dp: Option<u64>,
    /// --enable-dp-attention on the prefill servers (also on when --enable-dp-attention is).
    #[arg(long)]
    #[serde(default)]
    pub prefill_enable_dp_attention: bool,
    /// --enable-dp-attention on the decode servers (also on when --enable-dp-attention is).
    #[arg(long)]
    #[serde(default)]
    pub decode_enable_dp_attention: bool,
}

impl PdFlags {
    /// `over`'s values where set, else `self`'s.
    pub fn merged(&self, over: &PdFlags) -> PdFlags {
        macro_rules! pick {
            ($($f:ident),*) => { PdFlags { $($f: over.$f.clone().or_else(|| self.$f.clone()),)*
                disaggregation: over.disaggregation || self.disaggregation,
                prefill_enable_dp_attention: over.prefill_enable_dp_attention
                    || self.prefill_enable_dp_attention,
                decode_enable_dp_attention: over.decode_enable_dp_attention
                    || self.decode_enable_dp_attention,
            } };
        }
        pick!(
            prefill_replicas,
            decode_replicas,
            prefill_tp,
            decode_tp,
            prefill_hardware,
            decode_hardware,
            prefill_chunked_prefill_size,
            prefill_max_prefill_tokens,
            decode_max_running_requests,
            decode_cuda_graph_max_bs,
            transfer_bandwidth,
            transfer_latency_us,
            pd_policy,
            num_reserved_decode_tokens,
            prefill_dp,
            decode_dp
        )
    }

    /// True when any PD flag is set without `--disaggregation` (an error: it would be ignored).
    fn stray(&self) -> bool {
        !self.disaggregation && *self != PdFlags::default()
    }
}

/// One side (prefill or decode) of a PD deployment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PdSide {
    pub replicas: u64,
    pub hardware: HardwareProfile,
    pub server: ServerConfig,
}

impl PdSide {
    /// GPUs of this side.
    pub fn devices(&self) -> u64 {
        self.replicas * self.server.devices()
    }

    /// DP ranks per server (DP-attention ranks or plain DP replicas; 1 without `--dp`).
    pub fn ranks(&self) -> u64 {
        self.server.dp.max(1)
    }

    /// `tp8`, `tp8 dp2` (plain DP replicas) or `tp8 dp8-attn` (DP attention).
    pub fn parallelism(&self) -> String {
        let s = &self.server;
        match (s.dp, s.dp_attention) {
            (0 | 1, _) => format!("tp{}", s.tp),
            (dp, false) => format!("tp{} dp{dp}", s.tp),
            (dp, true) => format!("tp{} dp{dp}-attn", s.tp),
        }
    }
}

/// The link a KV transfer uses, per GPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TransferLink {
    pub bandwidth_bytes_per_s: f64,
    pub latency_ns: f64,
    /// "nvlink", "rdma", "flag" or the pre-0.4.5.post1 stub.
    pub kind: &'static str,
}

/// A resolved PD deployment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PdConfig {
    pub prefill: PdSide,
    pub decode: PdSide,
    pub link: TransferLink,
    pub policy: LoadBalanceMethod,
    pub reserved_decode_tokens: u64,
}

/// Largest number of servers on one side.
const MAX_REPLICAS: u64 = 4096;

impl PdConfig {
    /// Resolves `pd` over the shared server flags `base` (already merged from file and
    /// command line) for `model`; `hardware` is the scenario's. `None` without
    /// `--disaggregation`.
    pub fn resolve(
        pd: &PdFlags,
        base: &ServerFlags,
        hardware: &HardwareProfile,
        model: &ModelSpec,
    ) -> Result<Option<PdConfig>> {
        if pd.stray() {
            return Err(Error::invalid(
                "--disaggregation",
                "disaggregation",
                "--prefill-*/--decode-*/--transfer-* flags (a scenario's `pd:` fields) need \
                 --disaggregation (`disaggregation: true`)",
            ));
        }
        if !pd.disaggregation {
            return Ok(None);
        }
        let side_hw = |name: &Option<String>| match name {
            Some(n) => load_hardware(n),
            None => Ok(hardware.clone()),
        };
        let replicas = |flag: &str, v: Option<u64>| match v.unwrap_or(1) {
            n @ 1..=MAX_REPLICAS => Ok(n),
            n => Err(Error::invalid(
                flag,
                flag.trim_start_matches("--"),
                format!("must be between 1 and {MAX_REPLICAS}, got {n}"),
            )),
        };
        // SGLang `_handle_disaggregation`: prefill runs without decode CUDA graphs, decode
        // without the radix cache and prefill graphs; the prefill server's prefill graphs
        // follow the version (`spec::graph_defaults::prefill_graph`: piecewise off with PD,
        // 0.5.16+ breakable on), so only the user's flags turn them off there.
        let prefill_flags = ServerFlags {
            tp: pd.prefill_tp.or(base.tp),
            chunked_prefill_size: pd
                .prefill_chunked_prefill_size
                .or(base.chunked_prefill_size),
            max_prefill_tokens: pd.prefill_max_prefill_tokens.or(base.max_prefill_tokens),
            dp: pd.prefill_dp.or(base.dp),
            enable_dp_attention: pd.prefill_enable_dp_attention || base.enable_dp_attention,
            disable_cuda_graph: true,
            disable_piecewise_cuda_graph: base.disable_piecewise_cuda_graph
                || base.disable_cuda_graph,
            ..base.clone()
        };
        let decode_flags = ServerFlags {
            tp: pd.decode_tp.or(base.tp),
            max_running_requests: pd.decode_max_running_requests.or(base.max_running_requests),
            cuda_graph_max_bs: pd.decode_cuda_graph_max_bs.or(base.cuda_graph_max_bs),
            dp: pd.decode_dp.or(base.dp),
            enable_dp_attention: pd.decode_enable_dp_attention || base.enable_dp_attention,
            disable_radix_cache: true,
            disable_piecewise_cuda_graph: true,
            ..base.clone()
        };
        let prefill_hw = side_hw(&pd.prefill_hardware)?;
        let decode_hw = side_hw(&pd.decode_hardware)?;
        let prefill = PdSide {
            replicas: replicas("--prefill-replicas", pd.prefill_replicas)?,
            server: ServerConfig::resolve_as(
                &prefill_flags,
                &prefill_hw,
                model,
                Some(PdRole::Prefill),
            )?,
            hardware: prefill_hw,
        };
        let decode = PdSide {
            replicas: replicas("--decode-replicas", pd.decode_replicas)?,
            server: ServerConfig::resolve_as(
                &decode_flags,
                &decode_hw,
                model,
                Some(PdRole::Decode),
            )?,
            hardware: decode_hw,
        };
        let policy = match pd.pd_policy.as_deref() {
            None => LoadBalanceMethod::RoundRobin,
            Some(p) => LoadBalanceMethod::parse(p).ok_or_else(|| Error::Unknown {
                kind: "PD router policy",
                name: p.into(),
                available: "round_robin, shortest_queue".into(),
            })?,
        };
        let reserved_decode_tokens = pd
            .num_reserved_decode_tokens
            .unwrap_or(DEFAULT_RESERVED_DECODE_TOKENS);
        if reserved_decode_tokens > 1 << 30 {
            return Err(Error::invalid(
                "--num-reserved-decode-tokens",
                "num_reserved_decode_tokens",
                format!("must be ≤ 2^30, got {reserved_decode_tokens}"),
            ));
        }
        check_version(&prefill, &decode)?;
        let mut link = transfer_link(pd, &prefill, &decode)?;
        if prefill.server.version < Version::post(0, 4, 5, 1) {
            // v0.4.4.post2–v0.4.5: `disaggregation/conn.py` is a stub whose sender and
            // receiver "assume transfer completed instantly" (no data moved).
            link = TransferLink {
                bandwidth_bytes_per_s: f64::MAX,
                latency_ns: 0.0,
                kind: "stub (instant: SGLang < 0.4.5.post1 moves no KV)",
            };
        }
        Ok(Some(PdConfig {
            prefill,
            decode,
            link,
            policy,
            reserved_decode_tokens,
        }))
    }

    /// GPUs of the whole deployment.
    pub fn devices(&self) -> u64 {
        self.prefill.devices() + self.decode.devices()
    }

    /// Bytes the busiest GPU NIC carries per prompt token: each decode attention rank
    /// receives its own KV (`d` bytes/token, SGLang's per-rank `cell_size`), and the prefill
    /// ranks send what all `dtp` decode ranks need split over the `ptp` of them, so
    /// `max(d, dtp·d/ptp)`. MHA with equal TP: the rank's head shard (all ranks in parallel);
    /// MLA: the whole latent KV per decode rank (it is replicated), times `dtp/ptp` on a
    /// prefill NIC when decode has more ranks (SGLang `common/conn.py` TP-mismatch paths).
    ///
    /// With DP attention a rank is `attn_tp` GPUs holding only its own requests' KV, and each
    /// request moves between one prefill rank and one decode rank (`bootstrap_room % dp` on
    /// both sides), so the same formula holds per rank. With EAGLE/MTP the draft model's KV
    /// pool goes with the target's (same indices, `get_contiguous_buf_infos`).
    pub fn link_bytes_per_token(&self) -> f64 {
        let (p, d) = (&self.prefill.server, &self.decode.server);
        let cell = d.kv_bytes_per_token + d.draft_kv_bytes_per_token;
        let delivered = d.attn_tp as f64 * cell / p.attn_tp as f64;
        delivered.max(cell)
    }

    /// Short name: `2P1D tp8/tp8` (with the hardware when the sides differ).
    pub fn name(&self) -> String {
        let (p, d) = (&self.prefill, &self.decode);
        let hw = if p.hardware.name == d.hardware.name {
            String::new()
        } else {
            format!(" {}/{}", p.hardware.name, d.hardware.name)
        };
        format!(
            "{}P{}D {}/{}{hw}",
            p.replicas,
            d.replicas,
            p.parallelism(),
            d.parallelism()
        )
    }

    /// One line naming the deployment, for reports.
    pub fn summary(&self) -> String {
        let side = |s: &PdSide| {
            format!(
                "{} × {} {} (KV pool {} tokens, max running {}, chunk {}{})",
                s.replicas,
                s.hardware.name,
                s.parallelism(),
                s.server.kv_pool_tokens,
                s.server.max_running_requests,
                s.server
                    .chunked_prefill_size
                    .map_or("-1".to_string(), |c| c.to_string()),
                if s.server.dp > 1 { " per DP rank" } else { "" }
            )
        };
        format!(
            "pd: {}P{}D, {} GPUs: prefill {}; decode {}; KV transfer over {} at {:.1} GB/s per GPU + {:.0} µs, {:.0} bytes/token on the busiest NIC\n",
            self.prefill.replicas,
            self.decode.replicas,
            self.devices(),
            side(&self.prefill),
            side(&self.decode),
            self.link.kind,
            self.link.bandwidth_bytes_per_s / 1e9,
            self.link.latency_ns / 1e3,
            self.link_bytes_per_token()
        )
    }

    /// Time to move `tokens` prompt tokens of KV over the link, ns (without the fixed latency).
    pub fn transfer_ns(&self, tokens: u64) -> f64 {
        tokens as f64 * self.link_bytes_per_token() / self.link.bandwidth_bytes_per_s * 1e9
    }
}

/// What the SGLang version of the deployment supports: PD from v0.4.4.post2
/// (`--disaggregation-mode`), DP attention inside a PD server from v0.4.6 (PR #5435).
fn check_version(prefill: &PdSide, decode: &PdSide) -> Result<()> {
    let v = prefill.server.version;
    if v < Version::post(0, 4, 4, 2) {
        return Err(Error::invalid(
            "--disaggregation",
            "disaggregation",
            format!("SGLang {v} has no prefill/decode disaggregation (--disaggregation-mode appeared in 0.4.4.post2)"),
        ));
    }
    if (prefill.server.dp_attention || decode.server.dp_attention) && v < Version::new(0, 4, 6) {
        return Err(Error::invalid(
            "--enable-dp-attention",
            "enable_dp_attention",
            format!("SGLang {v} runs no DP attention inside PD servers (added in 0.4.6, PR #5435)"),
        ));
    }
    Ok(())
}

/// The transfer link: `--transfer-bandwidth`, else NVLink when the whole deployment fits in
/// one node of one hardware, else the profiles' RDMA NICs (the slower side's).
fn transfer_link(pd: &PdFlags, prefill: &PdSide, decode: &PdSide) -> Result<TransferLink> {
    let rdma = |hw: &HardwareProfile| {
        hw.pd_transfer.clone().ok_or_else(|| {
            Error::invalid(
                &hw.name,
                "pd_transfer",
                "the profile gives no KV-transfer NIC (pd_transfer): pass --transfer-bandwidth GB/s",
            )
        })
    };
    let devices = prefill.devices() + decode.devices();
    let one_node = prefill.hardware.name == decode.hardware.name
        && devices <= prefill.hardware.link.devices_per_node as u64;
    let mut link = if one_node {
        TransferLink {
            bandwidth_bytes_per_s: prefill.hardware.link.bandwidth_bytes_per_s,
            latency_ns: prefill.hardware.link.latency_ns,
            kind: "nvlink",
        }
    } else if let Some(gbs) = pd.transfer_bandwidth {
        TransferLink {
            bandwidth_bytes_per_s: gbs * 1e9,
            latency_ns: 0.0,
            kind: "flag",
        }
    } else {
        let (a, b) = (rdma(&prefill.hardware)?, rdma(&decode.hardware)?);
        TransferLink {
            bandwidth_bytes_per_s: a
                .rdma_bandwidth_bytes_per_s
                .min(b.rdma_bandwidth_bytes_per_s),
            latency_ns: a.latency_ns.max(b.latency_ns),
            kind: "rdma",
        }
    };
    // 1 MB/s: slower than any network a KV transfer crosses; below it a 1 GB cache takes
    // weeks and the run would only fail later on its time budget.
    const MIN_TRANSFER_GB_PER_S: f64 = 1e-3;
    if let Some(gbs) = pd.transfer_bandwidth {
        if !(gbs.is_finite() && (MIN_TRANSFER_GB_PER_S..=1e6).contains(&gbs)) {
            return Err(Error::invalid(
                "--transfer-bandwidth",
                "transfer_bandwidth",
                format!(
                    "must be a number of GB/s in [{MIN_TRANSFER_GB_PER_S}, 1e6], got {}",
                    show_f64(gbs)
                ),
            ));
        }
        link.bandwidth_bytes_per_s = gbs * 1e9;
        link.kind = "flag";
    }
    if let Some(us) = pd.transfer_latency_us {
        if !(us.is_finite() && (0.0..=1e9).contains(&us)) {
            return Err(Error::invalid(
                "--transfer-latency-us",
                "transfer_latency_us",
                format!("must be a number of µs in [0, 1e9], got {}", show_f64(us)),
            ));
        }
        link.latency_ns = us * 1e3;
    }
    Ok(link)
}
