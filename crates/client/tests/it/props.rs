//! Issue #12: the client's URL handling takes any input without panicking, and the SSRF guard
//! treats an IPv4 address and its IPv6-mapped form alike.

use std::net::{IpAddr, Ipv4Addr};

use proptest::prelude::*;
use toolhost_client::text::shown_url;
use toolhost_client::{Policy, Source};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn sources_parse_or_refuse_and_print_back(text in "\\PC{0,80}") {
        if let Ok(source) = Source::parse(&text) {
            let printed = source.to_string();
            prop_assert_eq!(Source::parse(&printed).ok(), Some(source));
        }
        let _ = shown_url(&text);
    }

    #[test]
    fn urls_in_messages_never_carry_userinfo_or_query_values(
        user in "[a-z]{1,8}", password in "[A-Za-z0-9]{6,12}", value in "[A-Za-z0-9]{6,12}"
    ) {
        let shown = shown_url(&format!("https://{user}:{password}@api.example.com/x?key={value}"));
        prop_assert!(!shown.contains(&password) && !shown.contains(&value), "{}", shown);
    }

    #[test]
    fn mapped_ipv6_is_judged_as_its_ipv4(bits in any::<u32>()) {
        let v4 = Ipv4Addr::from(bits);
        let mapped = IpAddr::V6(v4.to_ipv6_mapped());
        for policy in [Policy::strict(), Policy::strict().allow_private()] {
            if policy.check(IpAddr::V4(v4)).is_err() {
                prop_assert!(policy.check(mapped).is_err(), "{} is denied, its mapped form too", v4);
            }
        }
    }
}
