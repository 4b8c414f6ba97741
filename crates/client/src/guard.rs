//! The SSRF guard: which addresses the client may connect to (docs/protocols.md §7, DEPENDENCIES.md §8).
//!
//! URLs come from people and from servers (a WoA document names the invocation URL; a redirect
//! names the next hop), so every connection is vetted, on by default:
//!
//! 1. An IP literal in a URL is checked directly: reqwest skips the resolver for literals. The
//!    `url` crate has already normalised odd forms (`0x7f.1`, `2130706433`, `0177.0.0.1`) to
//!    dotted quads, and IPv6 forms that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`,
//!    IPv4-compatible, NAT64, 6to4) are checked as that IPv4 address too.
//! 2. A host name is resolved once by [`Guard`] acting as reqwest's resolver, which drops every
//!    denied address and hands reqwest only vetted ones, so there is no window for DNS rebinding
//!    between the check and the connection.
//! 3. Every redirect is re-checked by the same rules ([`Guard::redirect_policy`]).
//!
//! Denied by default: loopback, RFC 1918, CGNAT, link-local (where cloud metadata services
//! live), unique-local, unspecified, multicast, broadcast and the documentation, benchmarking
//! and reserved ranges. [`Policy::allow_private`] opens loopback, RFC 1918, CGNAT and
//! unique-local (never link-local, unspecified or multicast); [`Policy::allow`] opens any range.

use std::fmt;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use ipnet::IpNet;
use url::{Host, Url};

use crate::error::Error;

/// Why an address is refused: the range it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// The address.
    pub ip: IpAddr,
    /// The range's name, e.g. "loopback".
    pub range: &'static str,
    /// Whether `--allow-private` opens the range (never for link-local, metadata and the like).
    pub private: bool,
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is {}", self.ip, self.range)
    }
}

/// A denied range, and whether `allow_private` opens it.
struct Range {
    net: &'static str,
    name: &'static str,
    private: bool,
}

const fn range(net: &'static str, name: &'static str, private: bool) -> Range {
    Range { net, name, private }
}

/// The deny list. IPv6 ranges that embed IPv4 are handled by [`embedded_v4`] instead.
const DENIED: &[Range] = &[
    range("0.0.0.0/8", "the unspecified \"this network\" range", false),
    range("10.0.0.0/8", "a private (RFC 1918) address", true),
    range("100.64.0.0/10", "a carrier-grade NAT (RFC 6598) address", true),
    range("127.0.0.0/8", "loopback", true),
    range(
        "169.254.0.0/16",
        "link-local, where cloud metadata services live",
        false,
    ),
    range("172.16.0.0/12", "a private (RFC 1918) address", true),
    range("192.0.0.0/24", "an IETF protocol assignment", false),
    range("192.0.2.0/24", "a documentation address", false),
    range("192.88.99.0/24", "the 6to4 relay anycast range", false),
    range("192.168.0.0/16", "a private (RFC 1918) address", true),
    range("198.18.0.0/15", "a benchmarking address", false),
    range("198.51.100.0/24", "a documentation address", false),
    range("203.0.113.0/24", "a documentation address", false),
    range("224.0.0.0/4", "multicast", false),
    range("240.0.0.0/4", "reserved or broadcast", false),
    range("::/128", "the unspecified address", false),
    range("::1/128", "loopback", true),
    range("64:ff9b:1::/48", "a local-use NAT64 address", false),
    range("100::/64", "a discard-only address", false),
    range("2001::/32", "a Teredo tunnel address", false),
    range("2001:2::/48", "a benchmarking address", false),
    range("2001:10::/28", "an ORCHID address", false),
    range("2001:db8::/32", "a documentation address", false),
    range("fc00::/7", "a unique-local address", true),
    range("fe80::/10", "link-local", false),
    range("fec0::/10", "a site-local address", true),
    range("ff00::/8", "multicast", false),
];

/// Which addresses the client may connect to. The default denies every non-public range.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    allow: Vec<IpNet>,
    private: bool,
    /// Origins (host, port) the user named themselves: reachable whatever they resolve to.
    trusted: Vec<(String, u16)>,
}

impl Policy {
    /// The default: only public addresses.
    pub fn strict() -> Self {
        Self::default()
    }

    /// Also allows loopback, RFC 1918, CGNAT and unique-local addresses (not link-local,
    /// unspecified or multicast: open those with [`Policy::allow`] if you really mean to).
    pub fn allow_private(mut self) -> Self {
        self.private = true;
        self
    }

    /// Also allows every address in `net`.
    pub fn allow(mut self, net: IpNet) -> Self {
        self.allow.push(net);
        self
    }

    /// Whether private ranges are open.
    pub fn allows_private(&self) -> bool {
        self.private
    }

    /// Also allows the origin (host and port) of `url`, whatever it resolves to: a URL the user
    /// typed is the user's own choice, loopback included (issue #12). Only that origin: a URL
    /// learned from a server (a WoA transport, a redirect, a lockfile entry) at another host or
    /// port stays under the guard.
    pub fn trust(mut self, url: &Url) -> Self {
        if let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) {
            self.trusted.push((host.to_ascii_lowercase(), port));
        }
        self
    }

    /// Whether `url`'s origin is one the user named ([`Policy::trust`]).
    pub fn trusts(&self, url: &Url) -> bool {
        match (url.host_str(), url.port_or_known_default()) {
            (Some(host), Some(port)) => self
                .trusted
                .iter()
                .any(|(h, p)| *p == port && h.eq_ignore_ascii_case(host)),
            _ => false,
        }
    }

    /// Whether `host` is the host of an origin the user named, at any port.
    fn trusts_host(&self, host: &str) -> bool {
        self.trusted.iter().any(|(h, _)| h.eq_ignore_ascii_case(host))
    }

    /// Checks one address; `Err` names the range that denies it.
    pub fn check(&self, ip: IpAddr) -> Result<(), Denied> {
        let embedded = embedded_v4(ip).map(IpAddr::V4);
        let candidates = [Some(ip), embedded];
        let allowed = |ip: IpAddr| self.allow.iter().any(|net| net.contains(&ip));
        for candidate in candidates.into_iter().flatten() {
            if allowed(candidate) {
                continue;
            }
            if let Some(range) = denied_range(candidate)
                && !(self.private && range.private)
            {
                return Err(Denied {
                    ip,
                    range: range.name,
                    private: range.private,
                });
            }
        }
        Ok(())
    }
}

fn denied_range(ip: IpAddr) -> Option<&'static Range> {
    static PARSED: OnceLock<Vec<(IpNet, &'static Range)>> = OnceLock::new();
    PARSED
        .get_or_init(|| {
            // Every entry parses (tested below); one that did not would simply deny nothing.
            DENIED.iter().filter_map(|r| Some((r.net.parse().ok()?, r))).collect()
        })
        .iter()
        .find(|(net, _)| net.contains(&ip))
        .map(|(_, r)| *r)
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`, deprecated), NAT64 (`64:ff9b::/96`) and 6to4 (`2002:AABB:CCDD::/48`).
fn embedded_v4(ip: IpAddr) -> Option<Ipv4Addr> {
    let IpAddr::V6(v6) = ip else { return None };
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = v6.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        // `::` and `::1` are not IPv4-compatible addresses; they are checked as themselves.
        [0, 0, 0, 0, 0, 0, 0, 0 | 1] => None,
        [0, 0, 0, 0, 0, 0, _, _] => Some(tail),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail),
        [0x2002, a, b, ..] => Some(Ipv4Addr::new((a >> 8) as u8, a as u8, (b >> 8) as u8, b as u8)),
        _ => None,
    }
}

/// A boxed future, for [`Lookup`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Resolves host names. The system resolver in production; a stub in tests, so that tests
/// never send a packet anywhere but loopback.
pub trait Lookup: Send + Sync + fmt::Debug {
    /// Every address of `host`.
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, std::io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, std::io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host, 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// The guard: a [`Policy`] and the resolver it vets. Clone is cheap.
#[derive(Debug, Clone)]
pub struct Guard {
    policy: Arc<Policy>,
    lookup: Arc<dyn Lookup>,
}

/// Why a host name gives no address to connect to.
#[derive(Debug)]
enum Unusable {
    /// The name did not resolve, or to nothing.
    Unresolved(String),
    /// Every address it resolves to is denied; `private` when `--allow-private` opens them all.
    Denied { reason: String, private: bool },
}

impl Guard {
    /// A guard applying `policy` to what `lookup` resolves.
    pub fn new(policy: Policy, lookup: Arc<dyn Lookup>) -> Self {
        Self {
            policy: Arc::new(policy),
            lookup,
        }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Checks a URL before anything connects: the scheme, an IP literal, or every address the
    /// host name resolves to (refused only when none is allowed; the denied ones are dropped at
    /// connection time by the resolver). A name that does not resolve is a transport error,
    /// not a refusal: `--allow-private` would not help it.
    pub async fn check_url(&self, url: &Url) -> Result<(), Error> {
        let refuse = |reason: String, private: bool| Error::Refused {
            url: url.to_string(),
            reason,
            private,
        };
        let denied = |d: Denied| refuse(d.to_string(), d.private);
        if !matches!(url.scheme(), "http" | "https") {
            return Err(refuse(
                format!("the scheme `{}` is not http or https", url.scheme()),
                false,
            ));
        }
        if self.policy.trusts(url) {
            return Ok(());
        }
        // The host the user named, at another port, was not named: it is checked as any other.
        if let Some(Host::Domain(name)) = url.host()
            && self.policy.trusts_host(name)
        {
            return self
                .vetted_strictly(name)
                .await
                .map(|_| ())
                .map_err(|unusable| match unusable {
                    Unusable::Unresolved(message) => Error::Transport {
                        url: url.to_string(),
                        message,
                        connect: true,
                    },
                    Unusable::Denied { reason, private } => refuse(reason, private),
                });
        }
        match url.host() {
            None => Err(refuse("the URL has no host".to_owned(), false)),
            Some(Host::Ipv4(ip)) => self.policy.check(IpAddr::V4(ip)).map_err(denied),
            Some(Host::Ipv6(ip)) => self.policy.check(IpAddr::V6(ip)).map_err(denied),
            Some(Host::Domain(name)) => match self.vetted(name).await {
                Ok(addrs) => {
                    tracing::debug!(host = name, addresses = ?addrs, "vetted");
                    Ok(())
                }
                Err(Unusable::Unresolved(message)) => Err(Error::Transport {
                    url: url.to_string(),
                    message,
                    connect: true,
                }),
                Err(Unusable::Denied { reason, private }) => Err(refuse(reason, private)),
            },
        }
    }

    /// The addresses to connect to for `host`: all it resolves to when the user named it (its
    /// origin was checked by [`Guard::check_url`] before any request), else the allowed ones.
    async fn vetted(&self, host: &str) -> Result<Vec<IpAddr>, Unusable> {
        if self.policy.trusts_host(host) {
            return self.resolve(host).await;
        }
        self.vetted_strictly(host).await
    }

    /// Every address of `host`; none is an error.
    async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, Unusable> {
        // A trailing dot or brackets never reach here as literals: `url` parsed those already.
        let addrs = self
            .lookup
            .lookup(host)
            .await
            .map_err(|e| Unusable::Unresolved(format!("failed to resolve {host}: {e}")))?;
        if addrs.is_empty() {
            return Err(Unusable::Unresolved(format!("{host} has no addresses")));
        }
        Ok(addrs)
    }

    /// The allowed addresses of `host` by the policy's ranges; an error says why there are none.
    async fn vetted_strictly(&self, host: &str) -> Result<Vec<IpAddr>, Unusable> {
        let addrs = self.resolve(host).await?;
        let mut denied = Vec::new();
        let allowed: Vec<IpAddr> = addrs
            .into_iter()
            .filter(|ip| match self.policy.check(*ip) {
                Ok(()) => true,
                Err(d) => {
                    denied.push(d);
                    false
                }
            })
            .collect();
        if allowed.is_empty() {
            let reasons: Vec<String> = denied.iter().map(ToString::to_string).collect();
            return Err(Unusable::Denied {
                reason: format!("{host} resolves only to denied addresses ({})", reasons.join("; ")),
                private: denied.iter().all(|d| d.private),
            });
        }
        Ok(allowed)
    }

    /// A redirect policy that re-checks every hop: http(s) only, at most 10 hops, IP literals
    /// checked here (they skip the resolver), host names vetted by the resolver on connect.
    /// [`Guard::redirect_policy`] when credentials are sent: a redirect must stay on the
    /// origin it leaves (same scheme, host and port), and then passes the same checks.
    pub fn redirect_policy_same_origin(&self) -> reqwest::redirect::Policy {
        let policy = Arc::clone(&self.policy);
        reqwest::redirect::Policy::custom(move |attempt| {
            let from = attempt.previous().last().map(Url::origin);
            if attempt.previous().len() >= 10 {
                return attempt.error("stopped after 10 redirects");
            }
            if from.as_ref() != Some(&attempt.url().origin()) {
                let message = format!(
                    "refused a redirect to {}: credentials are sent only to the server you named",
                    crate::text::shown_url(attempt.url().as_str())
                );
                return attempt.error(message);
            }
            if policy.trusts(attempt.url()) {
                attempt.follow()
            } else {
                attempt.error("refused a redirect the address guard does not allow")
            }
        })
    }

    pub fn redirect_policy(&self) -> reqwest::redirect::Policy {
        let policy = Arc::clone(&self.policy);
        reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 10 {
                return attempt.error("stopped after 10 redirects");
            }
            let url = attempt.url();
            if !matches!(url.scheme(), "http" | "https") {
                let message = format!("refused a redirect to the scheme `{}`", url.scheme());
                return attempt.error(message);
            }
            if policy.trusts(url) {
                return attempt.follow();
            }
            let literal = match url.host() {
                Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
                Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
                Some(Host::Domain(name)) if policy.trusts_host(name) => {
                    // The resolver lets the named host through at any port: a hop to another
                    // port of it was not named, so it is refused here.
                    let message = format!(
                        "refused a redirect to {url}: only the address you gave is reachable without --allow-private"
                    );
                    return attempt.error(message);
                }
                _ => None,
            };
            if let Some(ip) = literal
                && let Err(denied) = policy.check(ip)
            {
                let message = format!("refused a redirect to {url}: {denied}");
                return attempt.error(message);
            }
            attempt.follow()
        })
    }
}

impl reqwest::dns::Resolve for Guard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let vetted = guard
                .vetted(&host)
                .await
                .map_err(|unusable| -> Box<dyn std::error::Error + Send + Sync> {
                    match unusable {
                        Unusable::Unresolved(message) => message.into(),
                        Unusable::Denied { reason, .. } => format!("refused by the SSRF guard: {reason}").into(),
                    }
                })?;
            // reqwest sets the port from the URL; 0 is a placeholder.
            let addrs: reqwest::dns::Addrs = Box::new(vetted.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn denies_non_public_ranges_by_default() {
        let p = Policy::strict();
        for bad in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2001:db8::1",
            "2001:0:4136:e378::1",
        ] {
            assert!(p.check(ip(bad)).is_err(), "{bad} must be denied");
        }
        for good in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "172.32.0.1",
        ] {
            assert_eq!(p.check(ip(good)), Ok(()), "{good} is public");
        }
    }

    #[test]
    fn allow_private_opens_only_private_ranges() {
        let p = Policy::strict().allow_private();
        for ok in [
            "127.0.0.1",
            "10.0.0.1",
            "192.168.0.1",
            "::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert_eq!(p.check(ip(ok)), Ok(()), "{ok}");
        }
        for still in ["169.254.169.254", "0.0.0.0", "fe80::1", "224.0.0.1", "::"] {
            assert!(p.check(ip(still)).is_err(), "{still} stays denied");
        }
    }

    #[test]
    fn allow_list_opens_a_range() {
        let p = Policy::strict().allow("127.0.0.1/32".parse().unwrap());
        assert_eq!(p.check(ip("127.0.0.1")), Ok(()));
        assert_eq!(
            p.check(ip("::ffff:127.0.0.1")),
            Ok(()),
            "the mapped form of an allowed address"
        );
        assert!(p.check(ip("127.0.0.2")).is_err());
        let denied = p.check(ip("10.0.0.1")).unwrap_err();
        assert_eq!(denied.to_string(), "10.0.0.1 is a private (RFC 1918) address");
    }

    #[test]
    fn every_range_parses() {
        for r in DENIED {
            assert!(r.net.parse::<IpNet>().is_ok(), "{}", r.net);
        }
    }
}
