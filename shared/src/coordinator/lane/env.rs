//! The vendor's environment: an allowlist per vendor (its API key, config home and base URL)
//! plus the basics every program needs (HOME, PATH, TMPDIR, locale, proxy and CA settings),
//! and nothing else. GitHub tokens and agent-coord's own variables never pass, whatever their
//! name matches.

use super::Vendor;

/// Variables every vendor gets when set.
pub const BASICS: [&str; 22] = [
    "HOME",
    "PATH",
    "TMPDIR",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "USER",
    "LOGNAME",
    "NO_COLOR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// Names that never pass, even when an allowlist entry would match.
const DENIED: [&str; 4] = [
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
];

/// Returns the vendor's own variables: exact names, and prefixes ending in `_`.
pub fn vendor_allowlist(vendor: Vendor) -> &'static [&'static str] {
    match vendor {
        Vendor::Claude => &[
            "ANTHROPIC_",
            "CLAUDE_CODE_",
            "CLAUDE_CONFIG_DIR",
            "DISABLE_TELEMETRY",
            "DISABLE_AUTOUPDATER",
            "DISABLE_ERROR_REPORTING",
        ],
        Vendor::Codex => &[
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "CODEX_HOME",
            "CODEX_API_KEY",
        ],
        Vendor::Gemini => &[
            "GEMINI_API_KEY",
            "GEMINI_MODEL",
            "GEMINI_TELEMETRY_ENABLED",
            "GEMINI_CLI_",
            "GOOGLE_API_KEY",
            "GOOGLE_CLOUD_PROJECT",
            "GOOGLE_CLOUD_LOCATION",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_GEMINI_BASE_URL",
        ],
        Vendor::Grok => &[
            "XAI_API_KEY",
            "GROK_API_KEY",
            "GROK_HOME",
            "GROK_AUTH_PATH",
            "GROK_BASE_URL",
            "GROK_MODEL",
            "GROK_MEMORY",
        ],
    }
}

/// Variables the adapter sets for the vendor: its documented switches for telemetry and
/// update checks off.
pub fn quiet_settings(vendor: Vendor) -> &'static [(&'static str, &'static str)] {
    match vendor {
        Vendor::Claude => &[
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
        ],
        Vendor::Codex => &[],
        Vendor::Gemini => &[("GEMINI_TELEMETRY_ENABLED", "false")],
        Vendor::Grok => &[("GROK_MEMORY", "0")],
    }
}

/// Reports whether variable `name` may reach `vendor`.
pub fn allowed(vendor: Vendor, name: &str) -> bool {
    if DENIED.contains(&name) || name.starts_with("AGENT_COORD") {
        return false;
    }
    let lower_basic = BASICS
        .iter()
        .any(|b| b.ends_with("_PROXY") && name == b.to_lowercase());
    BASICS.contains(&name)
        || lower_basic
        || vendor_allowlist(vendor).iter().any(|entry| {
            if entry.ends_with('_') {
                name.starts_with(entry)
            } else {
                name == *entry
            }
        })
}

/// Returns the vendor's environment from `ambient`: the allowed variables, then the quiet
/// settings where the operator did not set them.
pub fn filter<'a>(
    vendor: Vendor,
    ambient: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = ambient
        .into_iter()
        .filter(|(name, _)| allowed(vendor, name))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    for (name, value) in quiet_settings(vendor) {
        if !env.iter().any(|(k, _)| k == name) {
            env.push(((*name).to_owned(), (*value).to_owned()));
        }
    }
    env
}

/// Returns the values of `env` that look like credentials (names ending in `KEY`, `TOKEN`,
/// `SECRET` or `PASSWORD`), for the redactor.
pub fn secret_values<'a>(env: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    env.into_iter()
        .filter(|(name, _)| {
            let upper = name.to_ascii_uppercase();
            ["KEY", "TOKEN", "SECRET", "PASSWORD"]
                .iter()
                .any(|s| upper.ends_with(s))
        })
        .map(|(_, v)| v.to_owned())
        .filter(|v| !v.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const AMBIENT: [(&str, &str); 12] = [
        ("HOME", "/home/u"),
        ("PATH", "/bin"),
        ("GITHUB_TOKEN", "ghp_x"),
        ("GH_TOKEN", "ghp_y"),
        ("AGENT_COORD_GITHUB_TOKEN", "ghp_z"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("OPENAI_API_KEY", "sk-oai"),
        ("GEMINI_API_KEY", "AIza"),
        ("XAI_API_KEY", "xai"),
        ("AWS_SECRET_ACCESS_KEY", "aws"),
        ("https_proxy", "http://p"),
        ("CODEX_HOME", "/c"),
    ];

    fn names(vendor: Vendor) -> Vec<String> {
        filter(vendor, AMBIENT)
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    #[test]
    fn each_vendor_gets_only_its_own_variables_and_the_basics() {
        assert_eq!(
            names(Vendor::Claude),
            [
                "HOME",
                "PATH",
                "ANTHROPIC_API_KEY",
                "https_proxy",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
                "DISABLE_AUTOUPDATER"
            ]
        );
        assert_eq!(
            names(Vendor::Codex),
            [
                "HOME",
                "PATH",
                "OPENAI_API_KEY",
                "https_proxy",
                "CODEX_HOME"
            ]
        );
        assert_eq!(
            names(Vendor::Gemini),
            [
                "HOME",
                "PATH",
                "GEMINI_API_KEY",
                "https_proxy",
                "GEMINI_TELEMETRY_ENABLED"
            ]
        );
        assert_eq!(
            names(Vendor::Grok),
            ["HOME", "PATH", "XAI_API_KEY", "https_proxy", "GROK_MEMORY"]
        );
    }

    #[test]
    fn github_tokens_and_our_variables_never_pass() {
        for vendor in Vendor::ALL {
            for name in [
                "GITHUB_TOKEN",
                "GH_TOKEN",
                "AGENT_COORD_GITHUB_TOKEN",
                "AGENT_COORD_NOW",
            ] {
                assert!(!allowed(vendor, name), "{vendor} {name}");
            }
        }
    }

    #[test]
    fn credential_values_are_collected_for_redaction() {
        let secrets = secret_values(AMBIENT);
        assert!(secrets.contains(&"sk-ant".to_owned()));
        assert!(secrets.contains(&"ghp_x".to_owned()));
        assert!(secrets.contains(&"aws".to_owned()));
        assert!(!secrets.contains(&"/home/u".to_owned()));
    }
}
