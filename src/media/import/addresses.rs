//! Which addresses an import may connect to: the public internet only (no loopback, private,
//! link-local, cloud metadata or reserved address, nor an IPv4 one written as IPv6), and plain
//! http to loopback alone when the settings allow it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use axum::http::StatusCode;
use ipnet::{Ipv4Net, Ipv6Net};

use super::ImportRules;
use crate::media::Refusal;

/// Why an import may not connect to an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AddressProblem {
    /// Plain http, to an address other than an allowed loopback one.
    PlainHttp,
    /// Not the public internet: "a private address", "a cloud metadata address", …
    NotPublic(&'static str),
}

/// Why an import may not connect to `ip`, if it may not.
pub(super) fn address_problem(
    ip: IpAddr,
    plain_http: bool,
    rules: &ImportRules,
) -> Option<AddressProblem> {
    let not_public = |what| Some(AddressProblem::NotPublic(what));
    match address_kind(ip) {
        AddressKind::Loopback if rules.allow_loopback_http => None,
        _ if plain_http => Some(AddressProblem::PlainHttp),
        AddressKind::Public => None,
        AddressKind::Loopback => not_public("a loopback address"),
        AddressKind::Private => not_public("a private address"),
        AddressKind::LinkLocal => not_public("a link-local address"),
        AddressKind::Metadata => not_public("a cloud metadata address"),
        AddressKind::Reserved => not_public("a reserved address"),
    }
}

/// The refusal of a URL whose host is (or, for a name, resolves to) an address we do not reach.
pub(super) fn url_refused(host: &str, problem: AddressProblem, resolved: bool) -> Refusal {
    let message = match problem {
        AddressProblem::PlainHttp => {
            format!("url: {host}: plain http is fetched from loopback addresses only; use https")
        }
        AddressProblem::NotPublic(what) => {
            let verb = if resolved { "resolves to" } else { "is" };
            format!("url: {host} {verb} {what}; only public addresses are fetched")
        }
    };
    Refusal::new(StatusCode::BAD_REQUEST, "IMPORT_URL_REFUSED", message)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AddressKind {
    Public,
    Loopback,
    Private,
    LinkLocal,
    Metadata,
    Reserved,
}

/// Cloud providers' instance metadata services, named apart from the ranges that hold them.
const METADATA: [IpAddr; 4] = [
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)),
];

/// IPv4 ranges that are not the public internet: IANA's special-purpose registry, without its
/// few globally reachable anycast entries (no video is served from them).
const IPV4_NOT_PUBLIC: [(Ipv4Net, AddressKind); 15] = {
    use AddressKind::*;
    const fn net(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Ipv4Net {
        Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), prefix)
    }
    [
        (net(0, 0, 0, 0, 8), Reserved),       // "this network", unspecified
        (net(10, 0, 0, 0, 8), Private),       // private
        (net(100, 64, 0, 0, 10), Private),    // carrier-grade NAT
        (net(127, 0, 0, 0, 8), Loopback),     // loopback
        (net(169, 254, 0, 0, 16), LinkLocal), // link-local
        (net(172, 16, 0, 0, 12), Private),    // private
        (net(192, 0, 0, 0, 24), Reserved),    // IETF protocol assignments
        (net(192, 0, 2, 0, 24), Reserved),    // documentation (TEST-NET-1)
        (net(192, 88, 99, 0, 24), Reserved),  // 6to4 relay anycast
        (net(192, 168, 0, 0, 16), Private),   // private
        (net(198, 18, 0, 0, 15), Reserved),   // benchmarking
        (net(198, 51, 100, 0, 24), Reserved), // documentation (TEST-NET-2)
        (net(203, 0, 113, 0, 24), Reserved),  // documentation (TEST-NET-3)
        (net(224, 0, 0, 0, 4), Reserved),     // multicast
        (net(240, 0, 0, 0, 4), Reserved),     // reserved, and broadcast
    ]
};

/// Within the global unicast range (2000::/3), the parts that are not the public internet.
const IPV6_NOT_PUBLIC: [Ipv6Net; 4] = {
    const fn net(first: u16, second: u16, prefix: u8) -> Ipv6Net {
        Ipv6Net::new_assert(Ipv6Addr::new(first, second, 0, 0, 0, 0, 0, 0), prefix)
    }
    [
        net(0x2001, 0, 23),      // IETF protocol assignments (Teredo among them)
        net(0x2001, 0x0db8, 32), // documentation
        net(0x2002, 0, 16),      // 6to4: an IPv4 address inside, reached through a relay
        net(0x3fff, 0, 20),      // documentation
    ]
};

fn address_kind(ip: IpAddr) -> AddressKind {
    if METADATA.contains(&ip) {
        return AddressKind::Metadata;
    }
    match ip {
        IpAddr::V4(ip) => ipv4_kind(ip),
        IpAddr::V6(ip) => ipv6_kind(ip),
    }
}

fn ipv4_kind(ip: Ipv4Addr) -> AddressKind {
    IPV4_NOT_PUBLIC
        .iter()
        .find(|(net, _)| net.contains(&ip))
        .map_or(AddressKind::Public, |(_, kind)| *kind)
}

fn ipv6_kind(ip: Ipv6Addr) -> AddressKind {
    // An IPv4 address written as IPv6 reaches that IPv4 address: it is judged as one.
    if let Some(v4) = embedded_ipv4(ip) {
        return address_kind(IpAddr::V4(v4));
    }
    if ip.is_loopback() {
        AddressKind::Loopback
    } else if ip.is_unicast_link_local() {
        AddressKind::LinkLocal
    } else if ip.is_unique_local() {
        AddressKind::Private
    } else if (ip.segments()[0] & 0xe000) != 0x2000
        || IPV6_NOT_PUBLIC.iter().any(|net| net.contains(&ip))
    {
        // Outside 2000::/3: unspecified, multicast, site-local, discard-only and unassigned.
        AddressKind::Reserved
    } else {
        AddressKind::Public
    }
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`)
/// or well-known NAT64 (`64:ff9b::a.b.c.d`) address.
fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let segments = ip.segments();
    let low = Ipv4Addr::new(
        (segments[6] >> 8) as u8,
        segments[6] as u8,
        (segments[7] >> 8) as u8,
        segments[7] as u8,
    );
    let compatible = segments[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified();
    let nat64 = segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    (compatible || nat64).then_some(low)
}
