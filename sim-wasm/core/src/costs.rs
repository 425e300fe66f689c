//! The host cost profile: the CPU time the simulated machinery itself takes (vCPU switches, event channels,
//! the split-driver I/O path, the guests' network and block stacks). One profile serves every scenario: a paper's
//! stated parameters (request CPU, think times, link speed) are scenario inputs, these are not. A scenario may
//! override the backend costs only as a labelled sensitivity study (`sensitivity` in the scenario file).
//!
//! The host described is the papers' era: x86 at about 3 GHz (paper 000: 3.0 GHz Pentium D; paper 004: 3.4 GHz
//! Xeon), Xen 3.x with paravirtualised Linux 2.6.18 in dom0 and the guests. Each constant names its source;
//! docs/design/io-path-and-costs.md gives the derivations and which sources were checked against the text.

/// CPU costs of the host's mechanisms [ns unless stated].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostCosts {
    /// The hypervisor's scheduler and context switch to another vCPU, direct cost [ns]. Whitaker et al.,
    /// "Scale and Performance in the Denali Isolation Kernel", OSDI 2002, sec. 5.1: 1.4 us best case.
    pub vcpu_switch_ns: u64,
    /// Refilling caches and TLB after a switch to a vCPU of another domain [ns]. Same section: 9 us worst case
    /// with two or more VMs, less the 1.4 us direct cost.
    pub cache_refill_ns: u64,
    /// One `EVTCHNOP_send` hypercall with the wake it causes in Xen, charged to the sender [ns]. Order of a PV
    /// hypercall round trip on 3 GHz x86 (Barham et al., "Xen and the Art of Virtualization", SOSP 2003, lmbench).
    pub evtchn_send_ns: u64,
    /// One event upcall in the receiving guest (entry, dispatch, return), once per notification: the port stays
    /// masked while it is handled, so a batch of packets costs one upcall [ns]. Same source.
    pub upcall_ns: u64,
    /// A physical NIC interrupt routed through Xen to the driver domain, once per backend batch that takes NIC
    /// arrivals [ns]. Menon et al., "Diagnosing Performance Overheads in the Xen Virtual Machine Environment",
    /// VEE 2005, sec. 5.
    pub nic_irq_ns: u64,
    /// Driver-domain CPU per packet: NIC driver, bridge, netback, grant transfer or copy (Xen's share
    /// included) [ns]. Menon et al., VEE 2005: a guest receiving at full CPU on 2.4 GHz took about 14 us per
    /// 1500-byte packet over dom0, Xen and the guest, about two thirds of it in dom0 and Xen; scaled to 3 GHz.
    pub net_backend_pkt_ns: u64,
    /// Guest CPU per packet: netfront, IP/TCP and the socket, received or sent [ns]. The remaining third of the
    /// same measurement, scaled to 3 GHz.
    pub net_frontend_pkt_ns: u64,
    /// Driver-domain CPU per block request: blkback maps and unmaps the request's grant, submits the bio, answers
    /// and notifies, the same per-item work as netback's transmit path, so the same cost; half is spent at
    /// submission and half at completion [ns].
    pub blk_backend_req_ns: u64,
    /// Guest CPU per block request: blkfront and the block layer, by the same argument as netfront [ns].
    pub blk_frontend_req_ns: u64,
    /// The most one split-driver block request carries [bytes]: Xen's block protocol gives a request at most
    /// `BLKIF_MAX_SEGMENTS_PER_REQUEST` = 11 segments of one 4 KiB page each (xen/include/public/io/blkif.h), and
    /// blkfront limits its queue to that many segments (`blk_queue_max_segments`). Indirect descriptors, which lift
    /// the limit, came with Linux 3.11; the papers' guests (2.6.18 to 3.5) predate them. So a larger I/O, such as a
    /// 1 MiB direct-I/O record, reaches blkback as several requests, each mapped, submitted, answered and
    /// notified on its own: `blk_backend_req_ns` and `blk_frontend_req_ns` are paid per request. The driver
    /// domain's block layer merges the consecutive requests again, so the disk sees one.
    pub blk_request_max_bytes: u32,
    /// A sending socket's buffer [bytes of payload]: what an application may have written and not yet seen
    /// sent; a writer finding it full blocks until transmit completions free room. The initial send buffer of a
    /// TCP socket, `tcp_wmem`'s default (Linux 2.6.18 net/ipv4/tcp.c `sysctl_tcp_wmem = {4 * 1024, 16 * 1024,
    /// 128 * 1024}`, the middle value). Counted in payload, so an upper bound on the packets it holds (Linux charges
    /// each packet's whole buffer, `truesize`).
    pub sock_sndbuf_bytes: u32,
    /// Slots of netfront's transmit ring [packets]: packets handed to netback and not yet answered; a guest with a
    /// full ring stops its queue until responses free slots. `NET_TX_RING_SIZE` = `__RING_SIZE(struct
    /// netif_tx_sring, PAGE_SIZE)` = 256 (drivers/xen/netfront/netfront.c, linux-2.6.18-xen).
    pub net_tx_ring: u32,
    /// Items one backend batch handles before it notifies and yields [items]: linux-2.6.18-xen netback's
    /// `net_rx_action` moves up to a ring (`NET_RX_RING_SIZE`, 256) per pass and then sends one notification per
    /// guest interface (`notify_list`).
    pub backend_batch: usize,
    /// Receive descriptors of the physical NIC [packets]: packets off the wire wait there until the driver domain
    /// takes them; one that finds the ring full is dropped. The e1000 driver's `RxDescriptors` default, 256
    /// (Linux drivers/net/e1000/e1000.h `E1000_DEFAULT_RXD`, the `RxDescriptors` module parameter's default).
    pub nic_rx_ring: usize,
    /// Packets the driver domain's physical NIC may have queued for the wire [packets]: past them the qdisc
    /// drops what netback forwards. Linux 2.6.18 gives an Ethernet device `tx_queue_len = 1000` ("Ethernet wants
    /// good queues", net/ethernet/eth.c `ether_setup`), and the default qdisc, pfifo_fast, drops a packet that
    /// finds that many queued (net/sched/sch_generic.c `pfifo_fast_enqueue`). Without a bound a host sending more
    /// than its link carries (UDP streams) would queue without end.
    pub nic_tx_queue: usize,
    /// The host's core clock [Hz], to turn cycle counts (a PAUSE loop, KVM's `ple_window`) into time. 3 GHz, the
    /// clock every other cost here is scaled to.
    pub cpu_hz: u64,
    /// Cycles of one PAUSE instruction [cycles]. Intel's optimization reference manual (248966, "Pause Latency in
    /// Skylake Microarchitecture") gives about 140 cycles on Skylake and later against about 10 before; this profile
    /// takes the Skylake+ figure once for every spin loop (a guest's PV spinlock threshold, PLE's window).
    pub pause_cycles: u64,
    /// One VM exit and re-entry with a short handler (a PAUSE-loop exit, an IPI's APIC write) [ns]. An order-of-
    /// magnitude figure, not a measurement: Agesen et al., "Software Techniques for Avoiding Hardware
    /// Virtualization Exits" (USENIX ATC 2012), treat an exit round trip as costing on the order of a thousand
    /// cycles plus its handler; 1.5 us at 3 GHz.
    pub vmexit_ns: u64,
    /// A hardware thread's speed while its sibling thread on the same core also runs a vCPU [per mille of its
    /// speed alone]. Marr et al., "Hyper-Threading Technology Architecture and Microarchitecture", Intel
    /// Technology Journal 6(1), 2002: two threads on one core give up to 30% more throughput than one, so each
    /// runs at about 1.3 / 2 = 0.65 of its solo speed. Only hosts with `threads_per_core` above 1 use it.
    pub smt_sibling_busy_pm: u32,
}

/// The profile every scenario runs with.
pub const PROFILE: HostCosts = HostCosts {
    vcpu_switch_ns: 1_400,
    cache_refill_ns: 7_600,
    evtchn_send_ns: 1_000,
    upcall_ns: 1_000,
    nic_irq_ns: 2_000,
    net_backend_pkt_ns: 8_000,
    net_frontend_pkt_ns: 3_300,
    blk_backend_req_ns: 8_000,
    blk_frontend_req_ns: 3_300,
    blk_request_max_bytes: 11 * 4096,
    sock_sndbuf_bytes: 16 * 1024,
    net_tx_ring: 256,
    backend_batch: 256,
    nic_rx_ring: 256,
    nic_tx_queue: 1000,
    cpu_hz: 3_000_000_000,
    pause_cycles: 140,
    vmexit_ns: 1_500,
    smt_sibling_busy_pm: 650,
};

impl HostCosts {
    /// A host whose mechanisms cost nothing: for tests that isolate one mechanism's effect.
    pub const FREE: HostCosts = HostCosts {
        vcpu_switch_ns: 0,
        cache_refill_ns: 0,
        evtchn_send_ns: 0,
        upcall_ns: 0,
        nic_irq_ns: 0,
        net_backend_pkt_ns: 0,
        net_frontend_pkt_ns: 0,
        blk_backend_req_ns: 0,
        blk_frontend_req_ns: 0,
        blk_request_max_bytes: 11 * 4096,
        sock_sndbuf_bytes: 16 * 1024,
        net_tx_ring: 256,
        backend_batch: 256,
        nic_rx_ring: 256,
        nic_tx_queue: 1000,
        cpu_hz: 3_000_000_000,
        pause_cycles: 140,
        vmexit_ns: 0,
        smt_sibling_busy_pm: 1000,
    };
}

impl HostCosts {
    /// Split-driver block requests an I/O of `bytes` takes (at least one).
    pub fn blk_requests(&self, bytes: u32) -> u64 {
        u64::from(bytes.div_ceil(self.blk_request_max_bytes.max(1)).max(1))
    }
}

impl HostCosts {
    /// `cycles` of the host's clock as time [ns].
    pub fn cycles_ns(&self, cycles: u64) -> u64 {
        (u128::from(cycles) * 1_000_000_000 / u128::from(self.cpu_hz.max(1))) as u64
    }
}

impl Default for HostCosts {
    fn default() -> HostCosts {
        PROFILE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derivations the field docs state, so a change of one number has to change its reasoning too.
    #[test]
    fn profile_follows_its_sources() {
        // Denali: 9 us worst case = direct + refill.
        assert_eq!(PROFILE.vcpu_switch_ns + PROFILE.cache_refill_ns, 9_000);
        // Menon et al.: ~14 us per packet at 2.4 GHz is ~11.3 us at 3 GHz, about 2/3 in dom0 + Xen.
        let total = PROFILE.net_backend_pkt_ns + PROFILE.net_frontend_pkt_ns;
        assert!((11_000..=11_500).contains(&total));
        assert!(PROFILE.net_backend_pkt_ns * 3 >= total * 2 && PROFILE.net_backend_pkt_ns * 3 < total * 2 + 1_500);
        // blkback and blkfront do netback's and netfront's per-item work.
        assert_eq!(PROFILE.blk_backend_req_ns, PROFILE.net_backend_pkt_ns);
        assert_eq!(PROFILE.blk_frontend_req_ns, PROFILE.net_frontend_pkt_ns);
        assert_eq!(HostCosts::default(), PROFILE);
        // blkif: 11 one-page segments a request; a 1 MiB record is 24 requests, a 4 KiB one is one.
        assert_eq!(PROFILE.blk_requests(1024 * 1024), 24);
        assert_eq!(PROFILE.blk_requests(4096), 1);
        assert_eq!(PROFILE.blk_requests(0), 1);
        // Marr et al.: two threads give 1.3x one thread's throughput, 0.65 each.
        assert_eq!(PROFILE.smt_sibling_busy_pm * 2, 1_300);
    }
}
