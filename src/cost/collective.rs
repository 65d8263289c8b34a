//! Collectives whose group spans nodes: a TP (or DP-attention) group of more ranks than one
//! node holds (`link.devices_per_node`). Inside a node the ranks talk over NVLink/HCCS
//! (`link.bandwidth_bytes_per_s`); between nodes each rank uses its share of the node's
//! network (`link.inter_node_bandwidth_bytes_per_s`, e.g. one 400 Gb/s NIC per GPU on a DGX).
//!
//! The all-reduce is priced **hierarchically**: an intra-node reduce-scatter (each rank ends
//! with 1/g of the node's partial sum), an inter-node ring all-reduce of that 1/g shard between
//! the `m` ranks holding the same shard on every node (each over its own NIC, all in
//! parallel), then an intra-node all-gather. Bytes each rank moves:
//! `2(g−1)/g · B` over the node link and `2(m−1)/m · B/g` over the network. Why this and not
//! one ring over the slowest link (AIConfigurator scales its 8-GPU table by
//! intra/inter bandwidth): NCCL runs one ring per NIC (channels), so a node's network traffic is
//! spread over all its NICs and all-reduce bus bandwidth on 8×400 Gb/s nodes reaches about the
//! node's aggregate NIC rate, which the shard-per-NIC term reproduces; a single-NIC ring
//! would price a 16-GPU all-reduce ≈ 9× too slow. The model's phases are serial (no
//! pipelining), so it is an upper bound of NCCL's pipelined ring by at most the intra-node part.
//!
//! The fixed time of the node part is `link.latency_ns`, or, where the profile measures it per
//! peer (`link.all_reduce_latency_per_peer_ns`, Ascend HCCL), `(g − 1)` times that: HCCL's
//! small-message all-reduce on a full mesh exchanges a flag and a chunk with every peer, and
//! its measured time grows with the ranks (A3: ≈ 8 µs at 8 ranks, ≈ 20 µs at 16; the profile
//! cites the measurement).
//!
//! Physics: with the inter-node link no faster than the node link and no lower latency (the
//! profile check enforces both), the hierarchical price is never below a flat ring of the same
//! size inside one node: the network term `2(m−1)/(m·g)·B / inter` is at least the node-link
//! bytes it replaces, `2(1/g − 1/N)·B / intra` with `N = m·g`.
use crate::error::{Error, Result};
use crate::spec::hardware::{HardwareProfile, Link};

/// How a group of `ranks` is laid out on nodes of `per_node` devices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// Nodes the group spans (≥ 1).
    pub nodes: u64,
    /// Ranks of the group on each node (the fullest node when `ranks` does not divide).
    pub ranks_per_node: u64,
}

impl Placement {
    /// `ranks` packed onto as few nodes of `per_node` devices as hold them.
    pub fn packed(ranks: u64, per_node: u64) -> Placement {
        let per_node = per_node.max(1);
        let nodes = ranks.div_ceil(per_node).max(1);
        Placement {
            nodes,
            ranks_per_node: ranks.div_ceil(nodes),
        }
    }

    pub fn spans_nodes(&self) -> bool {
        self.nodes > 1
    }

    /// [`Placement::packed`] on `per_node` ranks a node, refused (naming `group`, its
    /// `collective` and the `flag` that sizes it) when it spans nodes and `hw` gives no
    /// inter-node link to price it.
    pub fn checked(
        ranks: u64,
        per_node: u64,
        hw: &HardwareProfile,
        [group, collective, flag]: [&str; 3],
    ) -> Result<Placement> {
        let p = Placement::packed(ranks, per_node);
        if p.spans_nodes() && hw.link.inter_node().is_none() {
            return Err(Error::Msg(format!(
                "{group} spans {} nodes of {} devices, but hardware profile {} has no link.inter_node_bandwidth_bytes_per_s to price the {collective} between nodes; add it to the profile or use {flag} ≤ {}",
                p.nodes, hw.link.devices_per_node, hw.name, hw.link.devices_per_node
            )));
        }
        Ok(p)
    }
}

/// Time of one all-reduce of `bytes` per rank over a group placed as `p`, ns: NCCL's ring
/// inside one node, the hierarchical model across nodes (see the module doc). `efficiency`
/// is the achieved / link bandwidth of the collective (`efficiency.collective`).
/// `None` when the group spans nodes and the profile has no inter-node link.
pub fn all_reduce_ns(bytes: f64, p: Placement, link: &Link, efficiency: f64) -> Option<f64> {
    let g = p.ranks_per_node as f64;
    let intra_ns = if g > 1.0 {
        intra_latency_ns(g, link)
            + 2.0 * (g - 1.0) / g * bytes / (link.bandwidth_bytes_per_s * efficiency) * 1e9
    } else {
        0.0
    };
    if !p.spans_nodes() {
        return Some(intra_ns);
    }
    let m = p.nodes as f64;
    let inter = link.inter_node()?;
    let shard = bytes / g;
    let inter_ns = inter.latency_ns
        + 2.0 * (m - 1.0) / m * shard / (inter.bandwidth_bytes_per_s * efficiency) * 1e9;
    Some(intra_ns + inter_ns)
}

/// Fixed time of one all-reduce among `g` ranks of a node, ns: `latency_ns`, or `(g − 1)`
/// times the per-peer latency where the profile gives one (module doc).
pub fn intra_latency_ns(g: f64, link: &Link) -> f64 {
    match link.all_reduce_latency_per_peer_ns {
        Some(per_peer) => (g - 1.0).max(0.0) * per_peer,
        None => link.latency_ns,
    }
}

/// One line for `--explain`: how a group of `ranks` is priced.
pub fn describe(p: Placement, link: &Link) -> String {
    match (p.spans_nodes(), link.inter_node()) {
        (false, _) => "inside one node".into(),
        (true, Some(i)) => format!(
            "across {} nodes × {} ranks: hierarchical (node reduce-scatter, inter-node ring of the 1/{} shard at {:.0} GB/s per rank + {:.0} ns, node all-gather)",
            p.nodes,
            p.ranks_per_node,
            p.ranks_per_node,
            i.bandwidth_bytes_per_s / 1e9,
            i.latency_ns
        ),
        (true, None) => "across nodes, but the profile has no inter-node link".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link() -> Link {
        Link {
            bandwidth_bytes_per_s: 450e9,
            latency_ns: 8000.0,
            devices_per_node: 8,
            custom_all_reduce_latency_ns: 10e3,
            all_reduce_latency_per_peer_ns: None,
            inter_node_bandwidth_bytes_per_s: Some(50e9),
            inter_node_latency_ns: Some(15e3),
        }
    }

    #[test]
    fn placement_packs_ranks_onto_the_fewest_nodes() {
        assert_eq!(
            Placement::packed(8, 8),
            Placement {
                nodes: 1,
                ranks_per_node: 8
            }
        );
        assert_eq!(
            Placement::packed(16, 8),
            Placement {
                nodes: 2,
                ranks_per_node: 8
            }
        );
        assert_eq!(
            Placement::packed(12, 8),
            Placement {
                nodes: 2,
                ranks_per_node: 6
            }
        );
        assert_eq!(
            Placement::packed(1, 8),
            Placement {
                nodes: 1,
                ranks_per_node: 1
            }
        );
    }

    #[test]
    fn two_nodes_add_the_shard_over_the_network_by_hand() {
        // 16 MiB per rank, 2 nodes × 8: node part 8000 + 1.75·B/450e9 s; network part
        // 15000 + 2·(1/2)·(B/8)/50e9 s (efficiency 1).
        let b = 16.0 * 1024.0 * 1024.0;
        let want = 8000.0 + 1.75 * b / 450e9 * 1e9 + 15e3 + b / 8.0 / 50e9 * 1e9;
        let got = all_reduce_ns(b, Placement::packed(16, 8), &link(), 1.0).unwrap();
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        // Inside one node it is the plain ring: 8000 + 2·7/8·B/450e9.
        let one = all_reduce_ns(b, Placement::packed(8, 8), &link(), 1.0).unwrap();
        assert!((one - (8000.0 + 1.75 * b / 450e9 * 1e9)).abs() < 1e-6);
    }

    #[test]
    fn a_per_peer_latency_replaces_the_fixed_one_by_hand() {
        // 1 µs per peer: 8 ranks pay 7 µs, 16 ranks 15 µs, in place of the 8 µs alpha; the
        // bandwidth term is unchanged (1 MiB, efficiency 1).
        let mut l = link();
        l.all_reduce_latency_per_peer_ns = Some(1e3);
        l.devices_per_node = 16;
        let b = 1024.0 * 1024.0;
        for g in [2u64, 8, 16] {
            let gf = g as f64;
            let want = (gf - 1.0) * 1e3 + 2.0 * (gf - 1.0) / gf * b / 450e9 * 1e9;
            let got = all_reduce_ns(b, Placement::packed(g, 16), &l, 1.0).unwrap();
            assert!((got - want).abs() < 1e-6, "{g}: {got} vs {want}");
        }
        // Across nodes the network step keeps its own latency.
        l.devices_per_node = 8;
        let two = all_reduce_ns(b, Placement::packed(16, 8), &l, 1.0).unwrap();
        let want = 7e3 + 1.75 * b / 450e9 * 1e9 + 15e3 + b / 8.0 / 50e9 * 1e9;
        assert!((two - want).abs() < 1e-6, "{two} vs {want}");
    }

    #[test]
    fn without_an_inter_node_link_a_multi_node_group_has_no_price() {
        let mut l = link();
        l.inter_node_bandwidth_bytes_per_s = None;
        assert_eq!(all_reduce_ns(1e6, Placement::packed(16, 8), &l, 0.8), None);
        assert!(all_reduce_ns(1e6, Placement::packed(8, 8), &l, 0.8).is_some());
    }
}
