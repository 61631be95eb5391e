//! Tool names as the agent mints them today (18.3.4 `tool-bridge.ts`, SPEC 11.3): `mcp__<server
//! part>_<tool part>` with digits kept, the redundant server prefix stripped, capped at 64
//! characters with an 8-character base-36 suffix of the full name's wyhash (the agent's
//! `Bun.hash`, seed 0); the name the same tool had before digits were kept (`legacyName`); and the
//! registry keys a model-emitted spelling may have meant (`canonicalMCPToolNameCandidates`).

/// The agent's tool name prefix (`MCP_TOOL_NAME_PREFIX`).
pub const PREFIX: &str = "mcp__";
/// The longest name strict validators accept.
pub const MAX_LEN: usize = 64;
/// The length of the hash suffix of a capped name.
const HASH_LEN: usize = 8;

/// wyhash "final 4" with seed 0, as Zig's `std.hash.Wyhash` computes it (Bun's `Bun.hash`).
pub fn wyhash(input: &[u8]) -> u64 {
    const S: [u64; 4] = [
        0xa076_1d64_78bd_642f,
        0xe703_7ed1_a0b4_28db,
        0x8ebc_6af0_9c88_c6e3,
        0x5899_65cc_7537_4cc3,
    ];
    fn mum(a: u64, b: u64) -> (u64, u64) {
        let r = u128::from(a) * u128::from(b);
        (r as u64, (r >> 64) as u64)
    }
    fn mix(a: u64, b: u64) -> u64 {
        let (lo, hi) = mum(a, b);
        lo ^ hi
    }
    fn r8(p: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(p[at..at + 8].try_into().expect("8 bytes"))
    }
    fn r4(p: &[u8], at: usize) -> u64 {
        u64::from(u32::from_le_bytes(
            p[at..at + 4].try_into().expect("4 bytes"),
        ))
    }
    let len = input.len();
    let mut seed = mix(S[0], S[1]); // seed 0: 0 ^ mix(0 ^ S[0], S[1])
    let (a, b);
    if len <= 16 {
        if len >= 4 {
            let quarter = (len >> 3) << 2;
            a = (r4(input, 0) << 32) | r4(input, quarter);
            b = (r4(input, len - 4) << 32) | r4(input, len - 4 - quarter);
        } else if len > 0 {
            a = (u64::from(input[0]) << 16)
                | (u64::from(input[len >> 1]) << 8)
                | u64::from(input[len - 1]);
            b = 0;
        } else {
            a = 0;
            b = 0;
        }
    } else {
        let mut i = 0;
        if len > 48 {
            let (mut see1, mut see2) = (seed, seed);
            while len - i > 48 {
                seed = mix(r8(input, i) ^ S[1], r8(input, i + 8) ^ seed);
                see1 = mix(r8(input, i + 16) ^ S[2], r8(input, i + 24) ^ see1);
                see2 = mix(r8(input, i + 32) ^ S[3], r8(input, i + 40) ^ see2);
                i += 48;
            }
            seed ^= see1 ^ see2;
        }
        while len - i > 16 {
            seed = mix(r8(input, i) ^ S[1], r8(input, i + 8) ^ seed);
            i += 16;
        }
        a = r8(input, len - 16);
        b = r8(input, len - 8);
    }
    let (a, b) = mum(a ^ S[1], b ^ seed);
    mix(a ^ S[0] ^ len as u64, b ^ S[1])
}

/// `n` in base 36, lowercase (JavaScript's `toString(36)`).
fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII")
}

/// A name part: lowercased, each run of other characters (digits too, unless `keep_digits`) one
/// `_`, `_` runs collapsed, `_` trimmed; `fallback` when nothing is left.
pub(crate) fn part(text: &str, fallback: &str, keep_digits: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        let keep = c.is_ascii_lowercase() || c == '_' || (keep_digits && c.is_ascii_digit());
        let c = if keep { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        fallback.to_owned()
    } else {
        out
    }
}

/// Caps a minted name at [`MAX_LEN`]: a readable prefix, `_`, and 8 base-36 characters of the
/// whole name's hash.
pub fn cap(name: &str) -> String {
    if name.len() <= MAX_LEN {
        return name.to_owned();
    }
    let hash = base36(wyhash(name.as_bytes()));
    let hash = &hash[..hash.len().min(HASH_LEN)];
    let keep = MAX_LEN - hash.len() - 1;
    // Minted names are ASCII, so a byte cut is a character cut.
    format!("{}_{hash}", &name[..keep])
}

fn mint(server: &str, tool: &str, keep_digits: bool) -> String {
    let s = part(server, "server", keep_digits);
    let t = part(tool, "tool", keep_digits);
    let t = t
        .strip_prefix(&s)
        .and_then(|rest| rest.strip_prefix('_'))
        .unwrap_or(&t);
    cap(&format!("{PREFIX}{s}_{t}"))
}

/// The agent's `createMCPToolName` (18.3.4).
pub fn current_tool_name(server: &str, tool: &str) -> String {
    mint(server, tool, true)
}

/// The agent's `createLegacyMCPToolName`: the name before digits were kept, when it differs.
pub fn legacy_tool_name(server: &str, tool: &str) -> Option<String> {
    let legacy = mint(server, tool, false);
    (legacy != current_tool_name(server, tool)).then_some(legacy)
}

/// The agent's `canonicalMCPToolNameCandidates`: for an `mcp__` name that is not canonical, the
/// registry keys it may have meant, in order — re-minted at each `__` boundary (both halves
/// non-empty), then the whole suffix sanitized and capped; never the name itself.
pub fn candidates(name: &str) -> Vec<String> {
    let Some(suffix) = name.strip_prefix(PREFIX) else {
        return Vec::new();
    };
    if suffix.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    let mut add = |candidate: String| {
        if candidate != name && !out.contains(&candidate) {
            out.push(candidate);
        }
    };
    let mut from = 0;
    while let Some(at) = suffix[from..].find("__").map(|i| i + from) {
        let (server, tool) = (&suffix[..at], &suffix[at + 2..]);
        if !server.is_empty() && !tool.is_empty() {
            add(current_tool_name(server, tool));
        }
        from = at + 1;
    }
    let whole = part(suffix, "", true);
    if !whole.is_empty() {
        add(cap(&format!("{PREFIX}{whole}")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of `Bun.hash(s).toString(36)` (Bun 1.3.14): the same function, byte for byte, at every
    /// length class of the algorithm (0, 1–3, 4–16, 17–48, 49+, over 96).
    #[test]
    fn wyhash_is_buns() {
        for (input, expected) in VECTORS {
            assert_eq!(base36(wyhash(input.as_bytes())), *expected, "{input:?}");
        }
    }

    const VECTORS: &[(&str, &str)] = &[
        ("", "27k1wwwhf13t"),
        ("a", "mcie3cqm6cz5"),
        ("ab", "2v9aa834vefak"),
        ("abc", "1g45uqqks6lu"),
        ("abcd", "13w92m5xe651v"),
        ("mcp__x", "3kmadb03kds8a"),
        ("0123456789abcdef", "2yrjmtoe4yjah"),
        ("0123456789abcdefg", "2qv5uk3f9j15h"),
        (
            "mcp__a_very_long_server_name_for_testing_and_an_even_longer_tool_name",
            "22qa8xmjt51oh",
        ),
        (
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "2aqe7o80phxou",
        ),
        (
            "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy",
            "3fa3ded9vo6wb",
        ),
        (
            "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
            "6d8jj8xkg0xm",
        ),
        (
            "The quick brown fox jumps over the lazy dog, again and again and again and again!",
            "1c6rs79zg4w51",
        ),
    ];

    #[test]
    fn names_keep_digits_strip_the_server_prefix_and_fall_back() {
        assert_eq!(
            current_tool_name("Fast-Srv", "Get Thing"),
            "mcp__fast_srv_get_thing"
        );
        assert_eq!(current_tool_name("s3", "list_v2"), "mcp__s3_list_v2");
        assert_eq!(
            legacy_tool_name("s3", "list_v2").as_deref(),
            Some("mcp__s_list_v")
        );
        assert_eq!(legacy_tool_name("github", "search"), None);
        assert_eq!(
            current_tool_name("puppeteer", "puppeteer_screenshot"),
            "mcp__puppeteer_screenshot"
        );
        assert_eq!(current_tool_name("123", "bank"), "mcp__123_bank");
        assert_eq!(current_tool_name("!!!", "???"), "mcp__server_tool");
        assert_eq!(current_tool_name("a__b", "c"), "mcp__a_b_c");
    }

    #[test]
    fn long_names_are_capped_with_a_stable_hash() {
        let long = current_tool_name(
            "a-very-long-server-name-for-testing",
            "and_an_even_longer_tool_name_that_overflows",
        );
        assert_eq!(long.len(), MAX_LEN);
        assert_eq!(
            long,
            current_tool_name(
                "a-very-long-server-name-for-testing",
                "and_an_even_longer_tool_name_that_overflows"
            )
        );
        assert!(long.starts_with("mcp__a_very_long_server_name_for_testing_and_an_even_"));
        assert_eq!(cap("mcp__short"), "mcp__short");
    }

    #[test]
    fn candidates_remint_at_each_boundary_then_the_whole_suffix() {
        assert_eq!(
            candidates("mcp__seedpatch-client__bank"),
            ["mcp__seedpatch_client_bank"]
        );
        assert_eq!(candidates("mcp__foo__bar__baz"), ["mcp__foo_bar_baz"]);
        assert_eq!(
            candidates("mcp__seedpatch-client_bank"),
            ["mcp__seedpatch_client_bank"]
        );
        assert_eq!(candidates("mcp__github_search"), Vec::<String>::new());
        assert_eq!(candidates("read"), Vec::<String>::new());
        assert_eq!(candidates("mcp__"), Vec::<String>::new());
        assert_eq!(candidates("mcp____bank"), ["mcp__bank"]);
    }
}
